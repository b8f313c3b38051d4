/**
 * An append-only RFC 6962 Merkle log over a MerkleHashStore (docs/integrity.md §1, §4).
 *
 * The log keeps the tree's right edge in memory (the hashes of the complete subtrees that make up
 * [0, size), at most one per level), so an append hashes O(log n) nodes without reading the store
 * and writes the leaf hash plus the subtrees it completes. A root or a proof for any size up to
 * the current one is computed from stored complete-subtree hashes: the proof's node ranges are
 * listed first (RFC 6962 §2.1.1 PATH, §2.1.2 PROOF), then their subtrees are read in one call,
 * so a database store answers a proof with one query of O(log n) rows.
 *
 * One writer at a time: a second writer's append fails with CHECKSUM_STORE_CONFLICT from the
 * store, after which it calls refresh(). Readers call refresh() to see what writers appended.
 */
import { integrityError } from './errors.js';
import type { MerkleHashStore, StoredHash } from './hash-store.js';
import {
  foldSubtrees,
  HASH_SIZE,
  leafHash,
  nodeHash,
  type SubtreeId,
  splitPoint,
  subtreesOf,
} from './merkle-hash.js';

type Range = readonly [lo: number, hi: number];

/** What an append stores (MerkleLog.planAppend), and the right edge it leaves. */
export interface AppendPlan {
  fromSize: number;
  toSize: number;
  hashes: StoredHash[];
  readonly edge: readonly (Uint8Array | undefined)[];
}

export class MerkleLog {
  readonly #store: MerkleHashStore;
  #size = 0;
  /** #edge[level]: hash of the complete subtree at that level on the right edge, if the size has that bit. */
  #edge: (Uint8Array | undefined)[] = [];
  /** Hashes of nodes [lo, size) on the right edge of the current tree, by lo: proofs at the current size share them. */
  #edgeNodes = new Map<number, Buffer>();

  private constructor(store: MerkleHashStore) {
    this.#store = store;
  }

  /** Opens the log kept in `store`, reading its size and right edge (O(log n) hashes). */
  static async open(store: MerkleHashStore): Promise<MerkleLog> {
    const log = new MerkleLog(store);
    await log.refresh();
    return log;
  }

  /**
   * A log at `size` whose right edge the caller read itself: `edge[i]` is the stored hash of
   * `subtreesOf(0, size)[i]`. For a writer inside a synchronous database transaction
   * (better-sqlite3), which cannot await open() (docs/integrity-store.md §2).
   */
  static atEdge(store: MerkleHashStore, size: number, edge: readonly Uint8Array[]): MerkleLog {
    const ids = subtreesOf(0, size);
    if (ids.length !== edge.length) {
      throw integrityError(
        'CHECKSUM_STORE_CONFLICT',
        `the log at size ${size} has ${ids.length} right-edge hashes, not ${edge.length}`,
      );
    }
    const log = new MerkleLog(store);
    log.#size = size;
    ids.forEach((id, i) => {
      log.#edge[id.level] = edge[i];
    });
    return log;
  }

  /** The root hash of the tree an append plan leaves (no store access). */
  static planRoot(plan: Pick<AppendPlan, 'edge'>): Buffer {
    const hashes: Uint8Array[] = [];
    for (let level = plan.edge.length - 1; level >= 0; level--) {
      const h = plan.edge[level];
      if (h !== undefined) hashes.push(h);
    }
    return foldSubtrees(hashes);
  }

  /** Re-reads the size and right edge from the store (after another writer appended). */
  async refresh(): Promise<void> {
    const size = await this.#store.size();
    const ids = subtreesOf(0, size);
    const hashes = await this.#store.readHashes(ids);
    const edge: (Uint8Array | undefined)[] = [];
    ids.forEach((id, i) => {
      edge[id.level] = hashes[i];
    });
    this.#size = size;
    this.#edge = edge;
    this.#edgeNodes = new Map();
  }

  get size(): number {
    return this.#size;
  }

  /** Appends records (their leaf data); returns the index of the first. */
  async append(records: readonly (Uint8Array | string)[]): Promise<number> {
    return this.appendLeafHashes(records.map((r) => leafHash(r)));
  }

  /** Appends leaves by their leaf hashes (RFC 6962 leaf hashes, 32 bytes); returns the first index. */
  async appendLeafHashes(leaves: readonly Uint8Array[]): Promise<number> {
    const plan = this.planAppend(leaves);
    await this.#store.appendHashes(plan.fromSize, plan.toSize, plan.hashes);
    this.applyAppend(plan);
    return plan.fromSize;
  }

  /**
   * The hashes appending `leaves` stores, computed without touching the store: for a caller that
   * writes them inside its own (synchronous) database transaction, then calls applyAppend once it
   * committed — or refresh() if it rolled back.
   */
  planAppend(leaves: readonly Uint8Array[]): AppendPlan {
    const edge = [...this.#edge];
    const hashes: StoredHash[] = [];
    let size = this.#size;
    for (const leaf of leaves) {
      if (leaf.length !== HASH_SIZE) {
        throw integrityError(
          'CHECKSUM_RECORD_INVALID',
          `a leaf hash is ${leaf.length} bytes, not ${HASH_SIZE}`,
        );
      }
      let level = 0;
      let index = size;
      let hash: Uint8Array = leaf;
      hashes.push({ level, index, hash });
      while (index % 2 === 1) {
        hash = nodeHash(edge[level]!, hash);
        edge[level] = undefined;
        level++;
        index = (index - 1) / 2;
        hashes.push({ level, index, hash });
      }
      edge[level] = hash;
      size++;
    }
    return { fromSize: this.#size, toSize: size, hashes, edge };
  }

  /** Adopts a plan whose hashes the store now holds. */
  applyAppend(plan: AppendPlan): void {
    if (plan.fromSize !== this.#size) {
      throw integrityError(
        'CHECKSUM_STORE_CONFLICT',
        `an append planned at size ${plan.fromSize} cannot apply to the log at size ${this.#size}`,
      );
    }
    this.#size = plan.toSize;
    this.#edge = [...plan.edge];
    this.#edgeNodes = new Map();
  }

  /** The root hash of the tree of the first `size` leaves (default: all). */
  async root(size = this.#size): Promise<Buffer> {
    this.#checkSize(size, 'tree size');
    if (size === this.#size) return MerkleLog.planRoot({ edge: this.#edge });
    const [hash] = await this.#hashRanges([[0, size]]);
    return hash!;
  }

  /** RFC 6962 §2.1.1: the audit path of leaf `index` in the tree of the first `size` leaves. */
  async inclusionProof(index: number, size = this.#size): Promise<Buffer[]> {
    this.#checkSize(size, 'tree size');
    if (!Number.isSafeInteger(index) || index < 0 || index >= size) {
      throw integrityError(
        'CHECKSUM_RANGE_INVALID',
        `leaf index ${index} is not below the tree size ${size}`,
      );
    }
    const ranges: Range[] = [];
    let lo = 0;
    let hi = size;
    while (hi - lo > 1) {
      const k = splitPoint(hi - lo);
      if (index < lo + k) {
        ranges.push([lo + k, hi]);
        hi = lo + k;
      } else {
        ranges.push([lo, lo + k]);
        lo += k;
      }
    }
    return this.#hashRanges(ranges.reverse());
  }

  /** RFC 6962 §2.1.2: the proof that the tree of `second` leaves extends the tree of `first`. */
  async consistencyProof(first: number, second = this.#size): Promise<Buffer[]> {
    this.#checkSize(second, 'tree size');
    if (!Number.isSafeInteger(first) || first < 0 || first > second) {
      throw integrityError(
        'CHECKSUM_RANGE_INVALID',
        `a consistency proof goes from a smaller tree to a larger one, not from ${first} to ${second}`,
      );
    }
    if (first === 0 || first === second) return [];
    const ranges: Range[] = [];
    let lo = 0;
    let hi = second;
    let whole = true; // SUBPROOF's b: the subtree is still the whole old tree's right edge
    for (;;) {
      if (first === hi) {
        if (!whole) ranges.push([lo, hi]);
        break;
      }
      const k = splitPoint(hi - lo);
      if (first - lo <= k) {
        ranges.push([lo + k, hi]);
        hi = lo + k;
      } else {
        ranges.push([lo, lo + k]);
        lo += k;
        whole = false;
      }
    }
    return this.#hashRanges(ranges.reverse());
  }

  #checkSize(size: number, what: string): void {
    if (!Number.isSafeInteger(size) || size < 0 || size > this.#size) {
      throw integrityError(
        'CHECKSUM_RANGE_INVALID',
        `${what} ${size} is beyond the log's ${this.#size} leaves`,
      );
    }
  }

  /** The hashes of node ranges, from one read of the distinct complete subtrees they need. */
  async #hashRanges(ranges: readonly Range[]): Promise<Buffer[]> {
    const size = this.#size;
    const cached = ranges.map(([lo, hi]) => (hi === size ? this.#edgeNodes.get(lo) : undefined));
    const perRange = ranges.map(([lo, hi], i) => (cached[i] === undefined ? subtreesOf(lo, hi) : []));
    const key = (id: SubtreeId) => `${id.level}/${id.index}`;
    const unique = new Map<string, SubtreeId>();
    for (const ids of perRange) for (const id of ids) unique.set(key(id), id);
    const wanted = [...unique.values()];
    const hashes = wanted.length === 0 ? [] : await this.#store.readHashes(wanted);
    const byKey = new Map<string, Uint8Array>();
    wanted.forEach((id, i) => {
      byKey.set(key(id), hashes[i]!);
    });
    return ranges.map(([lo, hi], i) => {
      const known = cached[i];
      if (known !== undefined) return known;
      const hash = foldSubtrees(perRange[i]!.map((id) => byKey.get(key(id))!));
      // Only while no append moved the edge during the read.
      if (hi === size && size === this.#size) this.#edgeNodes.set(lo, hash);
      return hash;
    });
  }
}

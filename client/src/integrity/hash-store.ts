/**
 * Where a Merkle log keeps its hashes (docs/integrity.md §1.2). A store holds the hash of every
 * complete subtree of the tree: level 0 the leaf hashes, level L the hash of leaves
 * [i·2^L, (i+1)·2^L) for each i with (i+1)·2^L ≤ size. That is fewer than 2·size hashes, any
 * node's hash is a fold of at most log2(size) of them, and an append adds on average two.
 * The server's database implements this interface; `MemoryHashStore` is the one here.
 */
import { integrityError } from './errors.js';
import { HASH_SIZE, type SubtreeId } from './merkle-hash.js';

export type Awaitable<T> = T | Promise<T>;

export interface StoredHash extends SubtreeId {
  hash: Uint8Array;
}

export interface MerkleHashStore {
  /** How many leaves the stored tree has. */
  size(): Awaitable<number>;
  /** The hashes of the named complete subtrees, in the order asked; each lies within size(). */
  readHashes(ids: readonly SubtreeId[]): Awaitable<readonly Uint8Array[]>;
  /**
   * Stores the hashes that growing the tree from `fromSize` to `toSize` leaves completes, and the
   * new size, all at once (one transaction). Throws CHECKSUM_STORE_CONFLICT when the stored size
   * is not `fromSize` any more: another writer appended first.
   */
  appendHashes(fromSize: number, toSize: number, hashes: readonly StoredHash[]): Awaitable<void>;
}

/** A store in memory: one growing buffer of 32-byte slots per level. */
export class MemoryHashStore implements MerkleHashStore {
  #size = 0;
  readonly #levels: { bytes: Buffer; count: number }[] = [];

  size(): number {
    return this.#size;
  }

  readHashes(ids: readonly SubtreeId[]): Uint8Array[] {
    return ids.map(({ level, index }) => {
      const slots = this.#levels[level];
      if (slots === undefined || !Number.isInteger(index) || index < 0 || index >= slots.count) {
        throw integrityError(
          'CHECKSUM_RANGE_INVALID',
          `the log has no complete subtree ${index} at level ${level} (size ${this.#size})`,
        );
      }
      return slots.bytes.subarray(index * HASH_SIZE, (index + 1) * HASH_SIZE);
    });
  }

  appendHashes(fromSize: number, toSize: number, hashes: readonly StoredHash[]): void {
    if (fromSize !== this.#size) {
      throw integrityError(
        'CHECKSUM_STORE_CONFLICT',
        `the log grew to ${this.#size} leaves while a writer appended at ${fromSize}`,
      );
    }
    // Check every hash before writing any, so a refused append leaves the store as it was.
    const next = this.#levels.map((l) => l.count);
    for (const { level, index, hash } of hashes) {
      if (index !== (next[level] ?? 0) || hash.length !== HASH_SIZE) {
        throw integrityError(
          'CHECKSUM_STORE_CONFLICT',
          `the hash of subtree ${index} at level ${level} is not the next one of that level`,
        );
      }
      next[level] = index + 1;
    }
    for (const { level, index, hash } of hashes) {
      while (this.#levels.length <= level)
        this.#levels.push({ bytes: Buffer.alloc(HASH_SIZE * 64), count: 0 });
      const slots = this.#levels[level]!;
      if ((index + 1) * HASH_SIZE > slots.bytes.length) {
        const grown = Buffer.alloc(slots.bytes.length * 2);
        slots.bytes.copy(grown);
        slots.bytes = grown;
      }
      slots.bytes.set(hash, index * HASH_SIZE);
      slots.count = index + 1;
    }
    this.#size = toSize;
  }
}

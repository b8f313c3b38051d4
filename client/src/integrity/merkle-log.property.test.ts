import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import { MemoryHashStore, type MerkleHashStore } from './hash-store.js';
import { leafHash, nodeHash, type SubtreeId } from './merkle-hash.js';
import { MerkleLog } from './merkle-log.js';
import { rootFromInclusionProof, verifyConsistency, verifyInclusion } from './proof.js';

// An independent small implementation, straight from RFC 6962 §2.1: MTH, PATH and PROOF as the
// recursive definitions over the list of leaf data, hashing with node:crypto directly.
const sha = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const k = (n: number) => 2 ** Math.ceil(Math.log2(n) - 1); // largest power of two < n, n ≥ 2
function mth(d: readonly Uint8Array[]): Buffer {
  if (d.length === 0) return sha();
  if (d.length === 1) return sha(Buffer.from([0]), d[0]!);
  const s = k(d.length);
  return sha(Buffer.from([1]), mth(d.slice(0, s)), mth(d.slice(s)));
}
function path(m: number, d: readonly Uint8Array[]): Buffer[] {
  if (d.length === 1) return [];
  const s = k(d.length);
  return m < s
    ? [...path(m, d.slice(0, s)), mth(d.slice(s))]
    : [...path(m - s, d.slice(s)), mth(d.slice(0, s))];
}
function subproof(m: number, d: readonly Uint8Array[], b: boolean): Buffer[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const s = k(d.length);
  return m <= s
    ? [...subproof(m, d.slice(0, s), b), mth(d.slice(s))]
    : [...subproof(m - s, d.slice(s), false), mth(d.slice(0, s))];
}
const proof = (m: number, d: readonly Uint8Array[]) => subproof(m, d, true);

const code = (c: string) => (e: unknown) => e instanceof DmError && e.code === c;

/** Leaves, and how to cut them into append batches. */
const leavesArb = fc
  .array(fc.uint8Array({ maxLength: 24 }), { minLength: 1, maxLength: 160 })
  .chain((leaves) =>
    fc.record({
      leaves: fc.constant(leaves),
      cuts: fc.array(fc.nat({ max: leaves.length }), { maxLength: 6 }),
    }),
  );

async function build(leaves: readonly Uint8Array[], cuts: readonly number[]): Promise<MerkleLog> {
  const log = await MerkleLog.open(new MemoryHashStore());
  const bounds = [...new Set([0, ...cuts, leaves.length])].sort((a, b) => a - b);
  for (let i = 1; i < bounds.length; i++) await log.append(leaves.slice(bounds[i - 1], bounds[i]));
  return log;
}

/** A proof with one change: a hash flipped, one dropped, one added, or two swapped. */
const tamperArb = fc.record({
  kind: fc.constantFrom('flip', 'drop', 'add', 'swap'),
  at: fc.nat(),
  bit: fc.nat(255),
});
function tamper(p: readonly Buffer[], t: { kind: string; at: number; bit: number }): Buffer[] | undefined {
  const out = p.map((h) => Buffer.from(h));
  const i = out.length === 0 ? 0 : t.at % out.length;
  if (t.kind === 'flip' && out.length > 0) out[i]![t.bit % 32]! ^= 1 << (t.bit % 8);
  else if (t.kind === 'drop' && out.length > 0) out.splice(i, 1);
  else if (t.kind === 'add') out.splice(i, 0, sha(Buffer.from([t.bit])));
  else if (t.kind === 'swap' && out.length > 1 && !out[i]!.equals(out[(i + 1) % out.length]!)) {
    [out[i], out[(i + 1) % out.length]] = [out[(i + 1) % out.length]!, out[i]!];
  } else return undefined;
  return out;
}

describe('MerkleLog against the RFC 6962 definitions', () => {
  it('root() equals MTH for every prefix, and every proof at the current size equals PATH and PROOF', async () => {
    await fc.assert(
      fc.asyncProperty(leavesArb, async ({ leaves, cuts }) => {
        const log = await build(leaves, cuts);
        assert.equal(log.size, leaves.length);
        for (let m = 0; m <= leaves.length; m++) assert.deepEqual(await log.root(m), mth(leaves.slice(0, m)));
        // Every proof at the current size, so later ones reuse the right-edge nodes earlier ones cached.
        for (let i = 0; i < leaves.length; i++)
          assert.deepEqual(await log.inclusionProof(i), path(i, leaves));
        for (let m = 0; m <= leaves.length; m++) {
          assert.deepEqual(await log.consistencyProof(m), m === 0 ? [] : proof(m, leaves));
        }
      }),
      { numRuns: 60 },
    );
  });

  it('inclusionProof() equals PATH and verifies; a tampered proof, leaf, index or size does not', async () => {
    await fc.assert(
      fc.asyncProperty(leavesArb, fc.nat(), fc.nat(), tamperArb, async ({ leaves, cuts }, a, b, t) => {
        const log = await build(leaves, cuts);
        const size = 1 + (a % leaves.length);
        const index = b % size;
        const root = mth(leaves.slice(0, size));
        const p = await log.inclusionProof(index, size);
        assert.deepEqual(p, path(index, leaves.slice(0, size)));
        verifyInclusion(index, size, leafHash(leaves[index]!), p, root);

        const bad = tamper(p, t);
        if (bad !== undefined) {
          assert.throws(
            () => verifyInclusion(index, size, leafHash(leaves[index]!), bad, root),
            code('CHECKSUM_INCLUSION_FAILED'),
          );
        }
        const otherLeaf = leafHash(Buffer.concat([leaves[index]!, Buffer.from([t.bit])]));
        assert.throws(
          () => verifyInclusion(index, size, otherLeaf, p, root),
          code('CHECKSUM_INCLUSION_FAILED'),
        );
        if (size > 1) {
          const otherIndex = (index + 1 + (t.at % (size - 1))) % size;
          if (!Buffer.from(leaves[otherIndex]!).equals(leaves[index]!)) {
            assert.throws(
              () => verifyInclusion(otherIndex, size, leafHash(leaves[index]!), p, root),
              code('CHECKSUM_INCLUSION_FAILED'),
            );
          }
        }
        if (size < leaves.length) {
          assert.throws(
            () =>
              verifyInclusion(index, size + 1, leafHash(leaves[index]!), p, mth(leaves.slice(0, size + 1))),
            code('CHECKSUM_INCLUSION_FAILED'),
          );
        }
      }),
      { numRuns: 200 },
    );
  });

  it('consistencyProof() equals PROOF and verifies; a tampered proof, root or size does not', async () => {
    await fc.assert(
      fc.asyncProperty(leavesArb, fc.nat(), fc.nat(), tamperArb, async ({ leaves, cuts }, a, b, t) => {
        const log = await build(leaves, cuts);
        const second = 1 + (a % leaves.length);
        const first = b % (second + 1);
        const [r1, r2] = [mth(leaves.slice(0, first)), mth(leaves.slice(0, second))];
        const p = await log.consistencyProof(first, second);
        assert.deepEqual(p, first === 0 ? [] : proof(first, leaves.slice(0, second)));
        verifyConsistency(first, second, r1, r2, p);
        if (first === 0) return;

        const bad = tamper(p, t);
        if (bad !== undefined)
          assert.throws(
            () => verifyConsistency(first, second, r1, r2, bad),
            code('CHECKSUM_LOG_INCONSISTENT'),
          );
        const other = sha(r2, Buffer.from([t.bit]));
        assert.throws(
          () => verifyConsistency(first, second, other, r2, p),
          code('CHECKSUM_LOG_INCONSISTENT'),
        );
        assert.throws(
          () => verifyConsistency(first, second, r1, other, p),
          code('CHECKSUM_LOG_INCONSISTENT'),
        );
        if (first > 1 && first < second && !mth(leaves.slice(0, first - 1)).equals(r1)) {
          assert.throws(
            () => verifyConsistency(first - 1, second, mth(leaves.slice(0, first - 1)), r2, p),
            code('CHECKSUM_LOG_INCONSISTENT'),
          );
        }
      }),
      { numRuns: 200 },
    );
  });

  it('refuses proofs and roots beyond the log, and sizes out of order', async () => {
    const log = await build([Buffer.from('a'), Buffer.from('b'), Buffer.from('c')], []);
    await assert.rejects(log.root(4), code('CHECKSUM_RANGE_INVALID'));
    await assert.rejects(log.inclusionProof(3, 3), code('CHECKSUM_RANGE_INVALID'));
    await assert.rejects(log.inclusionProof(0, 4), code('CHECKSUM_RANGE_INVALID'));
    await assert.rejects(log.consistencyProof(3, 2), code('CHECKSUM_RANGE_INVALID'));
    await assert.rejects(log.inclusionProof(-1, 2), code('CHECKSUM_RANGE_INVALID'));
    await assert.rejects(log.appendLeafHashes([Buffer.alloc(31)]), code('CHECKSUM_RECORD_INVALID'));
    assert.equal(log.size, 3);
    assert.throws(() => verifyInclusion(3, 3, leafHash('a'), [], mth([])), code('CHECKSUM_RANGE_INVALID'));
    assert.throws(() => verifyConsistency(3, 2, mth([]), mth([]), []), code('CHECKSUM_RANGE_INVALID'));
    assert.throws(
      () => verifyInclusion(0, 2, leafHash('a'), [Buffer.alloc(31)], mth([])),
      code('CHECKSUM_PROOF_INVALID'),
    );
  });

  it('a second writer on the same store is refused, and refresh() lets a reader see appends', async () => {
    const store = new MemoryHashStore();
    const writer = await MerkleLog.open(store);
    const other = await MerkleLog.open(store);
    await writer.append(['a', 'b']);
    await assert.rejects(other.append(['c']), code('CHECKSUM_STORE_CONFLICT'));
    assert.equal(store.size(), 2);
    await other.refresh();
    assert.equal(other.size, 2);
    assert.deepEqual(await other.root(), await writer.root());
  });

  it('planAppend() lets a caller store the hashes in its own transaction; a dropped plan changes nothing', async () => {
    const store = new MemoryHashStore();
    const log = await MerkleLog.open(store);
    await log.append(['a', 'b', 'c']);
    const dropped = log.planAppend([leafHash('x')]);
    assert.equal(log.size, 3); // planning alone neither writes nor moves the log
    assert.equal(store.size(), 3);
    await log.refresh(); // what a caller does after its transaction rolled back
    const plan = log.planAppend([leafHash('d'), leafHash('e')]);
    store.appendHashes(plan.fromSize, plan.toSize, plan.hashes); // synchronously, inside "the transaction"
    log.applyAppend(plan);
    assert.throws(() => log.applyAppend(dropped), code('CHECKSUM_STORE_CONFLICT'));
    const data = ['a', 'b', 'c', 'd', 'e'].map((x) => Buffer.from(x));
    assert.deepEqual(await log.root(), mth(data));
    assert.deepEqual(await (await MerkleLog.open(store)).root(), mth(data));
    assert.deepEqual(await log.inclusionProof(4), path(4, data));
  });

  it('reopening a store gives the same roots and proofs', async () => {
    await fc.assert(
      fc.asyncProperty(leavesArb, async ({ leaves, cuts }) => {
        const store = new MemoryHashStore();
        const log = await MerkleLog.open(store);
        await log.append(leaves);
        const reopened = await MerkleLog.open(store);
        await reopened.append(cuts.map((c) => String(c)));
        const all = [...leaves, ...cuts.map((c) => Buffer.from(String(c)))];
        assert.deepEqual(await reopened.root(), mth(all));
        assert.deepEqual(await reopened.root(leaves.length), mth(leaves));
      }),
      { numRuns: 40 },
    );
  });
});

/**
 * A store for a tree too large to build, where leaf i's hash depends on i mod 2 only, so every
 * complete subtree above level 0 has one hash per level: roots and proofs at sizes near 2^53
 * exercise the size arithmetic (no 32-bit operators) without 2^53 leaves.
 */
class PeriodicStore implements MerkleHashStore {
  readonly #levels: Buffer[] = [];
  constructor(readonly total: number) {
    let h = nodeHash(leafHash('even'), leafHash('odd'));
    for (let level = 1; level <= 53; level++) {
      this.#levels[level] = h;
      h = nodeHash(h, h);
    }
  }
  size(): number {
    return this.total;
  }
  readHashes(ids: readonly SubtreeId[]): Buffer[] {
    return ids.map(({ level, index }) => {
      assert.ok((index + 1) * 2 ** level <= this.total, `subtree ${level}/${index} is inside the tree`);
      return level === 0 ? leafHash(index % 2 === 0 ? 'even' : 'odd') : this.#levels[level]!;
    });
  }
  appendHashes(): void {
    throw new Error('read-only');
  }
}

describe('MerkleLog at sizes up to 2^53 − 1', () => {
  it('inclusion and consistency proofs verify at huge sizes and fail for a neighbouring leaf', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (size, x, y) => {
          const log = await MerkleLog.open(new PeriodicStore(size));
          const index = Math.min(size - 1, Math.floor(x * size));
          const root = await log.root();
          const leaf = leafHash(index % 2 === 0 ? 'even' : 'odd');
          const p = await log.inclusionProof(index, size);
          assert.ok(p.length <= 53);
          verifyInclusion(index, size, leaf, p, root);
          const neighbour = index % 2 === 0 ? index + 1 : index - 1;
          if (neighbour < size) {
            assert.equal(rootFromInclusionProof(neighbour, size, leaf, p)?.equals(root) ?? false, false);
          }
          const first = Math.max(1, Math.floor(y * size));
          const c = await log.consistencyProof(first, size);
          verifyConsistency(first, size, await log.root(first), root, c);
        },
      ),
      { numRuns: 50 },
    );
  });
});

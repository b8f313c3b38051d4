/**
 * RFC 6962 §2.1 hashing (docs/integrity.md §1): a leaf hash is SHA-256(0x00 ‖ data), an interior
 * node's hash is SHA-256(0x01 ‖ left ‖ right), and the empty tree's hash is SHA-256 of nothing.
 * A tree of n leaves splits at k, the largest power of two smaller than n: [0, k) on the left,
 * [k, n) on the right. Sizes are plain numbers up to 2^53 − 1, so no 32-bit bit operators here.
 */
import { createHash } from 'node:crypto';

export const HASH_SIZE = 32;

const LEAF_PREFIX = Buffer.from([0]);
const NODE_PREFIX = Buffer.from([1]);

export function leafHash(data: Uint8Array | string): Buffer {
  return createHash('sha256').update(LEAF_PREFIX).update(data).digest();
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
}

/** The root of the tree with no leaves. */
export function emptyTreeHash(): Buffer {
  return createHash('sha256').digest();
}

/** A complete subtree: the 2^level leaves starting at index × 2^level. */
export interface SubtreeId {
  level: number;
  index: number;
}

/** The largest power of two strictly smaller than n (n ≥ 2): where RFC 6962 splits a tree. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

export function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

/**
 * The complete subtrees whose hashes make up the node covering leaves [lo, hi), largest first.
 * [lo, hi) must be a node of some RFC 6962 tree (lo a multiple of the smallest power of two
 * ≥ hi − lo), which every range a proof or a root needs is; the node's hash is then the right
 * fold nodeHash(s1, nodeHash(s2, … sk)) of these subtrees' hashes.
 */
export function subtreesOf(lo: number, hi: number): SubtreeId[] {
  const out: SubtreeId[] = [];
  let start = lo;
  let remaining = hi - lo;
  let size = 1;
  let level = 0;
  while (size * 2 <= remaining) {
    size *= 2;
    level++;
  }
  while (remaining > 0) {
    if (size <= remaining) {
      out.push({ level, index: start / size });
      start += size;
      remaining -= size;
    }
    size /= 2;
    level--;
  }
  return out;
}

/** Folds subtree hashes (largest first, as subtreesOf lists them) into the hash of their node. */
export function foldSubtrees(hashes: readonly Uint8Array[]): Buffer {
  if (hashes.length === 0) return emptyTreeHash();
  let acc: Buffer = Buffer.from(hashes[hashes.length - 1]!);
  for (let i = hashes.length - 2; i >= 0; i--) acc = nodeHash(hashes[i]!, acc);
  return acc;
}

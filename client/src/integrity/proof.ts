/**
 * Verifying RFC 6962 proofs (docs/integrity.md §4), with the iterative algorithms of RFC 9162
 * §2.1.3.2 (inclusion) and §2.1.4.2 (consistency), which check exactly the proofs that RFC 6962
 * §2.1.1 PATH and §2.1.2 PROOF produce. Arithmetic on sizes, not 32-bit bit operators, so any
 * tree size up to 2^53 − 1 works. Proofs travel as lists of base64 hashes, like the checkpoint's
 * root; `decodeProof` bounds and checks them before anything is hashed.
 */
import { integrityError } from './errors.js';
import { HASH_SIZE, isPowerOfTwo, leafHash, nodeHash } from './merkle-hash.js';

/** More hashes than any proof of a tree with fewer than 2^64 leaves needs. */
export const MAX_PROOF_HASHES = 128;

const BASE64_HASH = /^[A-Za-z0-9+/]{43}=$/;

/** Encodes a proof's hashes for JSON: standard base64, one string per hash. */
export function encodeProof(proof: readonly Uint8Array[]): string[] {
  return proof.map((h) => Buffer.from(h).toString('base64'));
}

/** Decodes a proof from its JSON form; throws CHECKSUM_PROOF_INVALID naming the bad entry. */
export function decodeProof(value: unknown, where = 'proof'): Buffer[] {
  if (!Array.isArray(value)) {
    throw integrityError('CHECKSUM_PROOF_INVALID', `${where} is not a list of base64 hashes`);
  }
  if (value.length > MAX_PROOF_HASHES) {
    throw integrityError(
      'CHECKSUM_PROOF_INVALID',
      `${where} has ${value.length} hashes, more than the ${MAX_PROOF_HASHES} any proof needs`,
    );
  }
  return value.map((entry, i) => {
    if (typeof entry !== 'string' || !BASE64_HASH.test(entry)) {
      throw integrityError(
        'CHECKSUM_PROOF_INVALID',
        `${where}[${i}] is not the base64 encoding of a ${HASH_SIZE}-byte hash`,
      );
    }
    return Buffer.from(entry, 'base64');
  });
}

function checkSize(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw integrityError(
      'CHECKSUM_RANGE_INVALID',
      `${what} ${value} is not a whole number from 0 to 2^53 − 1`,
    );
  }
}

function checkHashes(hashes: readonly Uint8Array[], what: string): void {
  if (hashes.length > MAX_PROOF_HASHES) {
    throw integrityError(
      'CHECKSUM_PROOF_INVALID',
      `${what} has ${hashes.length} hashes, more than ${MAX_PROOF_HASHES}`,
    );
  }
  hashes.forEach((h, i) => {
    if (h.length !== HASH_SIZE) {
      throw integrityError('CHECKSUM_PROOF_INVALID', `${what}[${i}] is ${h.length} bytes, not ${HASH_SIZE}`);
    }
  });
}

const equal = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(b);
const odd = (n: number): boolean => n % 2 === 1;
const half = (n: number): number => Math.floor(n / 2);

/** Computes the root an inclusion proof leads to, or undefined when the proof has the wrong shape. */
export function rootFromInclusionProof(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
): Buffer | undefined {
  checkSize(index, 'leaf index');
  checkSize(size, 'tree size');
  checkHashes(proof, 'inclusion proof');
  if (index >= size) {
    throw integrityError('CHECKSUM_RANGE_INVALID', `leaf index ${index} is not below the tree size ${size}`);
  }
  let fn = index;
  let sn = size - 1;
  let r: Buffer = Buffer.from(leaf);
  for (const p of proof) {
    if (sn === 0) return undefined;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 ? r : undefined;
}

/**
 * Checks that the leaf whose hash is `leaf` is the index-th leaf of the tree of `size` leaves
 * whose root is `root`; throws CHECKSUM_INCLUSION_FAILED otherwise.
 */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): void {
  const computed = rootFromInclusionProof(index, size, leaf, proof);
  if (computed === undefined || !equal(computed, root)) {
    throw integrityError(
      'CHECKSUM_INCLUSION_FAILED',
      `the inclusion proof for leaf ${index} does not lead to the root of the log at size ${size}`,
      { details: { index, size } },
    );
  }
}

/** Checks the data of a record (not its hash) is the index-th leaf; see verifyInclusion. */
export function verifyRecordInclusion(
  index: number,
  size: number,
  data: Uint8Array | string,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): void {
  verifyInclusion(index, size, leafHash(data), proof, root);
}

/**
 * Checks that the tree of size `second` with root `secondRoot` extends the tree of size `first`
 * with root `firstRoot` (the first is a prefix of the second); throws CHECKSUM_LOG_INCONSISTENT
 * otherwise. Equal sizes need an empty proof and equal roots; the empty tree is a prefix of all.
 */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  proof: readonly Uint8Array[],
): void {
  checkSize(first, 'tree size');
  checkSize(second, 'tree size');
  checkHashes(proof, 'consistency proof');
  if (first > second) {
    throw integrityError(
      'CHECKSUM_RANGE_INVALID',
      `a consistency proof goes from a smaller tree to a larger one, not from ${first} to ${second}`,
    );
  }
  const fail = (why: string) =>
    integrityError(
      'CHECKSUM_LOG_INCONSISTENT',
      `the log at size ${second} does not extend the log at size ${first}: ${why}`,
      { details: { first, second } },
    );
  if (first === second) {
    if (proof.length !== 0) throw fail('a proof between equal sizes must be empty');
    if (!equal(firstRoot, secondRoot)) throw fail('the two roots of the same size differ');
    return;
  }
  if (first === 0) {
    if (proof.length !== 0) throw fail('a proof from the empty tree must be empty');
    return;
  }
  if (proof.length === 0) throw fail('the proof is empty');
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : proof;
  let fn = first - 1;
  let sn = second - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr: Buffer = Buffer.from(path[0]!);
  let sr: Buffer = Buffer.from(path[0]!);
  for (const c of path.slice(1)) {
    if (sn === 0) throw fail('the proof is too long');
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) throw fail('the proof is too short');
  if (!equal(fr, firstRoot)) throw fail('the proof does not lead to the older root');
  if (!equal(sr, secondRoot)) throw fail('the proof does not lead to the newer root');
}

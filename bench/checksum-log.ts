/**
 * The checksum log (issue 11, docs/integrity.md) at 1,000,000 records, with baselines measured in
 * the same run:
 *   - append: µs per record appended to MerkleLog over MemoryHashStore, one record per call and
 *     in batches of 1,000, next to the cost of the record's leaf hash alone (one SHA-256);
 *   - proofs: inclusion and consistency proof generation at 1,000,000 records (µs, hashes, JSON
 *     bytes), next to recomputing the root from the 1,000,000 leaf hashes (what a log without
 *     stored subtree hashes pays for every proof);
 *   - the client: checkpoint verification (signed note + parse), inclusion and consistency proof
 *     verification, and ChecksumVerifier.verifyDigest end to end, next to one bare Ed25519 verify.
 * Usage: node dist/bench/checksum-log.js [records, default 1000000]
 */
import { verify } from 'node:crypto';
import {
  ChecksumVerifier,
  encodeProof,
  encodeRecord,
  foldSubtrees,
  generateLogKey,
  leafHash,
  MemoryCheckpointMemory,
  MemoryHashStore,
  MerkleLog,
  nodeHash,
  parseSignerKey,
  parseVerifierKey,
  signCheckpoint,
  splitPoint,
  verifyCheckpoint,
  verifyConsistency,
  verifyInclusion,
} from '../client/src/integrity/index.js';

const N = Number(process.argv[2] ?? 1_000_000);
const SAMPLES = 1000;
/** The recursive baseline runs at this size: at 1,000,000 leaves it takes minutes on a busy machine. */
const NAIVE = 65_536;

/** CPU time (user + system, µs) of this process: the machine is shared, so wall time would mostly measure the neighbours. */
function cpu(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}
function time<T>(fn: () => T): [T, number] {
  const start = cpu();
  const value = fn();
  return [value, cpu() - start];
}
async function timeAsync<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = cpu();
  const value = await fn();
  return [value, cpu() - start];
}
const line = (name: string, value: string) => console.log(`${name.padEnd(58)} ${value}`);
const us = (x: number) => `${x.toFixed(2).padStart(10)} µs`;
/** A deterministic pseudo-random sequence, so every run measures the same indexes. */
function* sequence(seed: number): Generator<number> {
  let x = seed;
  for (;;) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    yield x / 2 ** 31;
  }
}

// Records: 1,000 templates × 1,000 versions, encoded once (encoding validates each reference).
const record = (i: number) => ({
  template: `github.com/acme/templates/team${i % 7}/t${i % 1000}`,
  version: `v1.${Math.floor(i / 1000)}.0`,
  digest: `sha256:${(i.toString(16).padStart(8, '0') + 'ab').repeat(7).slice(0, 64)}`,
});
const [records, encodeUs] = time(() => Array.from({ length: N }, (_, i) => encodeRecord(record(i))));
console.log(`records: ${N.toLocaleString('en')}`);
line('encodeRecord (validating the reference), per record', us(encodeUs / N));

// Baseline: the leaf hash alone.
const [leafHashes, hashUs] = time(() => records.map((r) => leafHash(r)));
line('baseline: leaf hash (one SHA-256), per record', us(hashUs / N));

// Append one at a time, then in batches, each into a fresh log.
const single = await MerkleLog.open(new MemoryHashStore());
const [, singleUs] = await timeAsync(async () => {
  for (const h of leafHashes) await single.appendLeafHashes([h]);
});
line(
  'MerkleLog.appendLeafHashes, one per call, per record',
  `${us(singleUs / N)}  (${(singleUs / hashUs).toFixed(2)}× the leaf hash)`,
);
let batched: MerkleLog | undefined = await MerkleLog.open(new MemoryHashStore());
const [, batchUs] = await timeAsync(async () => {
  for (let i = 0; i < N; i += 1000) await batched!.append(records.slice(i, i + 1000));
});
line('MerkleLog.append(records), 1,000 per call, per record', `${us(batchUs / N)}  (leaf hash included)`);
const root = await single.root();
if (!root.equals(await batched.root())) throw new Error('the two logs disagree');
line(
  'heap with both logs and all records (MB)',
  `${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0).padStart(10)}`,
);
// Keep one log and what the baseline needs: a million live Buffers would make every later
// figure mostly garbage-collection time.
batched = undefined;
const naiveLeaves = leafHashes.slice(0, NAIVE);
records.length = 0;
leafHashes.length = 0;
const leafOf = (i: number) => leafHash(encodeRecord(record(i)));

// Baseline for proofs: the root recomputed from the leaf hashes, as a log without stored subtree
// hashes must do for every proof (at NAIVE leaves; it grows linearly), next to MerkleLog.root at the same size.
const [naiveRoot, naiveUs] = time(() => {
  const rec = (lo: number, hi: number): Buffer =>
    hi - lo === 1
      ? Buffer.from(naiveLeaves[lo]!)
      : ((k) => nodeHash(rec(lo, lo + k), rec(lo + k, hi)))(splitPoint(hi - lo));
  return rec(0, NAIVE);
});
await single.root(NAIVE + 1); // warm up the read path once
const [logRootAtNaive, logRootTotal] = await timeAsync(async () => {
  let r: Buffer = Buffer.alloc(0);
  for (let i = 0; i < 1000; i++) r = await single.root(NAIVE);
  return r;
});
const logRootUs = logRootTotal / 1000;
if (!naiveRoot.equals(logRootAtNaive) || !foldSubtrees([root]).equals(root))
  throw new Error('naive root differs');
line(
  `baseline: root recomputed from ${NAIVE.toLocaleString('en')} leaf hashes`,
  `${(naiveUs / 1e3).toFixed(1).padStart(10)} ms`,
);
line(
  `MerkleLog.root(${NAIVE.toLocaleString('en')}) from stored hashes`,
  `${us(logRootUs)}  (${(naiveUs / logRootUs).toFixed(0)}× faster)`,
);

// Inclusion proofs at random indexes.
const rand = sequence(42);
let inclusionUs = 0;
let inclusionHashes = 0;
let inclusionJson = 0;
const proofs: { index: number; proof: Buffer[] }[] = [];
for (let s = 0; s < SAMPLES; s++) {
  const index = Math.floor(rand.next().value! * N);
  const [proof, t] = await timeAsync(() => single.inclusionProof(index));
  inclusionUs += t;
  inclusionHashes += proof.length;
  inclusionJson += JSON.stringify(encodeProof(proof)).length;
  proofs.push({ index, proof });
}
line(
  'inclusion proof at 1M, per proof',
  `${us(inclusionUs / SAMPLES)}  (${(inclusionHashes / SAMPLES).toFixed(1)} hashes, ${(inclusionJson / SAMPLES).toFixed(0)} JSON bytes; ${(inclusionUs / SAMPLES / (hashUs / N)).toFixed(0)} leaf hashes' time)`,
);

let consistencyUs = 0;
let consistencyHashes = 0;
const consistency: { first: number; proof: Buffer[] }[] = [];
for (let s = 0; s < SAMPLES; s++) {
  const first = 1 + Math.floor(rand.next().value! * (N - 1));
  const [proof, t] = await timeAsync(() => single.consistencyProof(first, N));
  consistencyUs += t;
  consistencyHashes += proof.length;
  consistency.push({ first, proof });
}
line(
  'consistency proof (random size → 1M), per proof',
  `${us(consistencyUs / SAMPLES)}  (${(consistencyHashes / SAMPLES).toFixed(1)} hashes; ${(consistencyUs / SAMPLES / (hashUs / N)).toFixed(0)} leaf hashes' time)`,
);
const firstRoots = await Promise.all(consistency.slice(0, 200).map((c) => single.root(c.first)));

// The client's side.
const keys = generateLogKey('registry.example/checksums');
const signer = parseSignerKey(keys.signerKey);
const verifier = parseVerifierKey(keys.verifierKey);
const note = signCheckpoint({ size: N, root }, signer);
const ROUNDS = 1000;
const [, signUs] = time(() => {
  for (let i = 0; i < ROUNDS; i++) signCheckpoint({ size: N, root }, signer);
});
line('server: signCheckpoint, per checkpoint', us(signUs / ROUNDS));
const [, verifyUs] = time(() => {
  for (let i = 0; i < ROUNDS; i++) verifyCheckpoint(note, verifier);
});
const body = Buffer.from(note.slice(0, note.indexOf('\n\n') + 1));
const sig = Buffer.from(note.slice(note.lastIndexOf(' ') + 1, -1), 'base64').subarray(4);
const [, bareUs] = time(() => {
  for (let i = 0; i < ROUNDS; i++) if (!verify(null, body, verifier.publicKey, sig)) throw new Error('bad');
});
line('baseline: one bare Ed25519 verify', us(bareUs / ROUNDS));
line(
  'client: verifyCheckpoint, per checkpoint',
  `${us(verifyUs / ROUNDS)}  (${(verifyUs / bareUs).toFixed(2)}× the bare verify)`,
);
const sampledLeaves = proofs.map(({ index }) => leafOf(index));
const [, inclVerifyUs] = time(() => {
  proofs.forEach(({ index, proof }, i) => {
    verifyInclusion(index, N, sampledLeaves[i]!, proof, root);
  });
});
line('client: verifyInclusion at 1M, per proof', us(inclVerifyUs / proofs.length));
const [, consVerifyUs] = time(() => {
  consistency.slice(0, 200).forEach(({ first, proof }, i) => {
    verifyConsistency(first, N, firstRoots[i]!, root, proof);
  });
});
line('client: verifyConsistency to 1M, per proof', us(consVerifyUs / 200));

// End to end: lookup answer → checkpoint, consistency with the remembered one, inclusion, digest.
const older = signCheckpoint({ size: N - 12345, root: await single.root(N - 12345) }, signer);
const source = {
  latestCheckpoint: async () => note,
  consistencyProof: (a: number, b: number) => single.consistencyProof(a, b),
  lookup: async (key: string) => {
    const index =
      Number(key.slice(key.lastIndexOf('.', key.length - 3) + 1, -2)) * 1000 +
      Number(/\/t(\d+)@/.exec(key)![1]);
    return {
      record: encodeRecord(record(index)),
      index,
      proof: await single.inclusionProof(index),
      checkpoint: note,
    };
  },
};
let e2eUs = 0;
for (let s = 0; s < 200; s++) {
  const client = new ChecksumVerifier({ key: verifier, source, memory: new MemoryCheckpointMemory(older) });
  const i = Math.floor(rand.next().value! * N);
  const [, t] = await timeAsync(() => client.verifyDigest(record(i)));
  e2eUs += t;
}
line('client: verifyDigest end to end (in process), per lookup', us(e2eUs / 200));

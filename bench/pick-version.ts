/**
 * pickVersion over 100,000 versions (issue 2), next to semver's own maxSatisfying with the
 * equivalent tilde range over the same list, measured in the same run.
 * Run: npm run build && node dist/bench/pick-version.js
 */
import semver from 'semver';
import { pickVersion } from '../client/src/reference/pick-version.js';

const N = 100_000;
const available: string[] = [];
const plain: string[] = [];
for (let i = 0; available.length < N; i++) {
  const major = i % 10;
  const minor = Math.floor(i / 10) % 100;
  const patch = Math.floor(i / 1000);
  const pre = i % 17 === 0 ? '-rc.1' : '';
  available.push(`v${major}.${minor}.${patch}${pre}`);
  plain.push(`${major}.${minor}.${patch}${pre}`);
}

function bench(name: string, fn: () => unknown, rounds = 20): number {
  fn(); // warm up
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  console.log(`${name.padEnd(44)} median ${median.toFixed(2).padStart(8)} ms`);
  return median;
}

console.log(`available versions: ${available.length}`);
const ours = bench('pickVersion(100k, "v3.42.7")', () => pickVersion(available, 'v3.42.7'));
const theirs = bench('semver.maxSatisfying(100k, "~3.42.7")', () => semver.maxSatisfying(plain, '~3.42.7'));
console.log(
  `picked: ${pickVersion(available, 'v3.42.7')} (semver: ${semver.maxSatisfying(plain, '~3.42.7')})`,
);
console.log(`ratio pickVersion / semver.maxSatisfying: ${(ours / theirs).toFixed(2)}× (lower is faster)`);

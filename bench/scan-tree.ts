/**
 * scanRegistryTree over a registry of 10,000 version directories (docs/server.md "Indexing" names that
 * size: past GitHub's recursive-tree limit), next to a baseline measured in the same run: sorting
 * the same paths by code point, the least any deterministic scan must do. Also versionDigest over
 * the version directories' file lists.
 * Run: npm run build && node dist/bench/scan-tree.js
 */
import { comparePaths } from '../client/src/registry/compare-paths.js';
import { versionDigest } from '../client/src/registry/digest.js';
import { scanRegistryTree } from '../client/src/registry/scan-tree.js';
import type { TreeEntry } from '../client/src/registry/types.js';

const COLLECTIONS = 20;
const TEMPLATES = 50; // per collection
const VERSIONS = 10; // per template: 20 × 50 × 10 = 10,000 version directories
const entries: TreeEntry[] = [];
for (let c = 0; c < COLLECTIONS; c++) {
  const collection = c === 0 ? '' : `collection-${c}`;
  if (collection) entries.push({ path: collection, type: 'tree' });
  for (let t = 0; t < TEMPLATES; t++) {
    const template = `template-${t}`;
    const tdir = collection ? `${collection}/${template}` : template;
    entries.push({ path: tdir, type: 'tree' });
    for (let v = 0; v < VERSIONS; v++) {
      const vdir = `${tdir}/v1.${Math.floor(v / 3)}.${v % 3}`;
      entries.push({ path: vdir, type: 'tree' }, { path: `${vdir}/helpers`, type: 'tree' });
      for (const file of [
        `${template}.jinja`,
        `${template}.jinja.schema`,
        'example.yaml',
        'helpers/common.jinja',
      ]) {
        entries.push({ path: `${vdir}/${file}`, type: 'blob', size: 100, gitSha: 'a'.repeat(40) });
      }
    }
  }
}
// A tree from an API comes in its own order; shuffle deterministically.
for (let i = entries.length - 1, seed = 42; i > 0; i--) {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  const j = seed % (i + 1);
  [entries[i], entries[j]] = [entries[j]!, entries[i]!];
}

function bench(name: string, fn: () => unknown, rounds = 10): number {
  fn();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  console.log(`${name.padEnd(48)} median ${median.toFixed(2).padStart(9)} ms`);
  return median;
}

console.log(`tree entries: ${entries.length}`);
const result = scanRegistryTree(entries);
console.log(`versions served: ${result.versions.length}, findings: ${result.findings.length}`);
const scan = bench('scanRegistryTree (10,000 version directories)', () => scanRegistryTree(entries));
const baseline = bench('baseline: sort the paths by code point', () =>
  entries.map((e) => e.path).sort(comparePaths),
);
const sha = 'b'.repeat(64);
const lists = result.versions.map((v) => v.files.map((f) => ({ path: f.path, sha256: sha })));
const digests = bench('versionDigest × 10,000 (from file digests)', () => lists.map(versionDigest));
console.log(`ratio scan / sort baseline: ${(scan / baseline).toFixed(2)}×`);
console.log(
  `per version directory: scan ${((scan * 1000) / result.versions.length).toFixed(1)} µs, digest ${((digests * 1000) / result.versions.length).toFixed(1)} µs`,
);

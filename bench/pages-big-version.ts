/**
 * Pages of the largest version a registry may hold (1,000 files, docs/pages.md "Files") and of a
 * template of 150 versions, asked with a token (so rendered every time, never remembered), against
 * a small template's page in the same run: median time, HTML bytes and the ratio of each to the
 * small page; then 8 requests of the largest version in parallel (wall time, resident memory).
 * Uses the pages' test fixture on SQLite (test/pages/fixture.ts, LONG).
 * Usage: node dist/bench/pages-big-version.js [rounds, default 30]
 */

import { LONG, pagesServer, SAMPLES } from '../test/pages/fixture.js';
import { admin } from '../test/server/helpers.js';

const rounds = Number(process.argv[2] ?? 30);
const s = await pagesServer('sqlite', { long: true });
const get = async (path: string) => {
  const res = await s.app.request(path, { headers: admin });
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  return Buffer.byteLength(await res.text());
};

const pages: [string, string][] = [
  ['small template page (baseline)', `/templates/${SAMPLES}/redis`],
  ['version of 1,000 files, first page', `/templates/${LONG}/bulk/versions/v1.0.0`],
  ['version of 1,000 files, last page', `/templates/${LONG}/bulk/versions/v1.0.0?files=10`],
  ['template of 150 versions', `/templates/${LONG}/many`],
];

let baseline = 0;
for (const [name, path] of pages) {
  const bytes = await get(path);
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    await get(path);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  if (baseline === 0) baseline = median;
  console.log(
    `${name.padEnd(38)} ${median.toFixed(1).padStart(7)} ms  ${String(bytes).padStart(7)} B  ${(median / baseline).toFixed(2)}x`,
  );
}

const rss = () => process.memoryUsage().rss / 1024 / 1024;
const before = rss();
let peak = before;
const timer = setInterval(() => {
  peak = Math.max(peak, rss());
}, 5);
const start = process.hrtime.bigint();
await Promise.all(Array.from({ length: 8 }, () => get(pages[1]![1])));
clearInterval(timer);
console.log(
  `8 parallel requests of the 1,000-file version: ${(Number(process.hrtime.bigint() - start) / 1e6).toFixed(0)} ms, resident ${before.toFixed(0)} -> ${Math.max(peak, rss()).toFixed(0)} MB`,
);
await s.close();
process.exit(0);

#!/usr/bin/env node
// Runs every benchmark (dist/bench/*.js) one after another, each printing its figures next to a
// baseline measured in the same run. Arguments filter by name: `node scripts/run-benches.mjs merge render`.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = new URL('../dist/bench/', import.meta.url).pathname;
const filters = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.js') && (filters.length === 0 || filters.some((s) => f.includes(s))))
  .sort();
let failed = 0;
for (const bench of benches) {
  console.log(`\n=== ${bench.replace(/\.js$/, '')}`);
  const r = spawnSync(process.execPath, [join(dir, bench)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);

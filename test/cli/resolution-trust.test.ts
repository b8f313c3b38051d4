/**
 * Resolution a user can trust (issue 13): dm update of what is not locked, damaged lock files,
 * the version digest verified, content changed under a version, an unnamed registry directory.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isolatedEnv, runDm } from '../support/run-cli.js';

async function registry(named = true): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-trust-reg-'));
  if (named) await writeFile(join(dir, 'registry.yaml'), 'name: github.com/acme/trust\n');
  for (const v of ['v1.0.1', 'v1.0.3']) {
    await mkdir(join(dir, 'redis', v), { recursive: true });
    await writeFile(join(dir, 'redis', v, 'redis.jinja'), `# ${v}\nresources: []\n`);
    await writeFile(join(dir, 'redis', v, 'example.yaml'), 'resources: []\n');
  }
  return dir;
}

async function installed(): Promise<{
  env: Record<string, string>;
  reg: string;
  project: string;
  dm: (a: string[]) => ReturnType<typeof runDm>;
}> {
  const env = await isolatedEnv();
  const reg = await registry();
  const project = await mkdtemp(join(tmpdir(), 'dm-trust-proj-'));
  await writeFile(join(project, 'config.yaml'), 'resources:\n- name: c\n  type: redis:v1.0\n');
  const dm = (args: string[]) => runDm(['--registry-dir', reg, ...args], { env, cwd: project });
  const r = await dm(['install']);
  assert.equal(r.code, 0, r.stderr);
  return { env, reg, project, dm };
}

describe('dm update names what dm.lock has', () => {
  it('a reference not in the lock is exit 3; a malformed one a usage error (exit 2)', async () => {
    const { dm } = await installed();
    const missing = await dm(['update', 'nosuch:v1']);
    assert.equal(missing.code, 3, missing.stderr);
    assert.match(missing.stderr, /nosuch:v1 is not in dm\.lock/);
    const bad = await dm(['update', 'bad ref']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /'bad ref' is not a valid template reference/);
    const ok = await dm(['update', 'redis:v1.0']);
    assert.equal(ok.code, 0, ok.stderr);
  });

  it('content changed under the same version: v1.0.3 → v1.0.3 (content changed)', async () => {
    const { reg, dm } = await installed();
    await writeFile(join(reg, 'redis', 'v1.0.3', 'redis.jinja'), '# changed\nresources: []\n');
    const r = await dm(['update']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /github\.com\/acme\/trust\/redis:v1\.0\s+v1\.0\.3\s+v1\.0\.3 \(content changed\)/);
  });
});

describe('a damaged dm.lock', () => {
  const damaged: [string, string | Buffer][] = [
    ['empty', ''],
    ['bad YAML', 'lockfileVersion: [1\n'],
    ['binary', Buffer.from([0, 159, 146, 150, 255, 0, 1])],
    ['an unknown lockfileVersion', 'lockfileVersion: 9\nreferences: {}\n'],
  ];
  for (const [what, content] of damaged) {
    it(`${what}: install rebuilds it (saying so); --frozen-lockfile refuses`, async () => {
      const { project, dm } = await installed();
      const good = await readFile(join(project, 'dm.lock'), 'utf8');
      await writeFile(join(project, 'dm.lock'), content);
      const frozen = await dm(['install', '--frozen-lockfile']);
      assert.equal(frozen.code, 4, frozen.stderr);
      assert.match(frozen.stderr, /--frozen-lockfile forbids rebuilding it/);
      const r = await dm(['install']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /dm\.lock is damaged .*; rebuilding it/);
      assert.equal(await readFile(join(project, 'dm.lock'), 'utf8'), good);
    });
  }

  it('a version digest that does not match its files is refused by install --frozen-lockfile and expand', async () => {
    const { project, dm } = await installed();
    const lock = await readFile(join(project, 'dm.lock'), 'utf8');
    assert.match(lock, /digest: "sha256:[0-9a-f]{64}"/);
    await writeFile(
      join(project, 'dm.lock'),
      lock.replace(/digest: "sha256:[0-9a-f]{64}"/, `digest: "sha256:${'0'.repeat(64)}"`),
    );
    const frozen = await dm(['install', '--frozen-lockfile']);
    assert.equal(frozen.code, 4, frozen.stderr);
    assert.match(frozen.stderr, /does not match the files listed under it/);
    const expand = await dm(['expand', 'config.yaml']);
    assert.notEqual(expand.code, 0);
    assert.match(expand.stderr, /does not match the files listed under it/);
    const r = await dm(['install']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await readFile(join(project, 'dm.lock'), 'utf8'), lock);
  });
});

describe('an unnamed registry directory', () => {
  it('is the default registry for short references when it is the only one and --registry is not set', async () => {
    const env = await isolatedEnv();
    const reg = await registry(false);
    const r = await runDm(['--registry-dir', reg, '-o', 'json', 'resolve', 'redis:v1.0'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout)[0].version, 'v1.0.3');
  });
});

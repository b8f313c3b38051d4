import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { isolatedEnv, runDm } from '../support/run-cli.js';

/** A small registry on disk: redis v1, v1.0.1, v1.0.3, v1.1; a web template that uses redis by reference. */
async function makeRegistry(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-reg-'));
  await writeFile(join(dir, 'registry.yaml'), 'name: github.com/acme/templates\n');
  for (const v of ['v1', 'v1.0.1', 'v1.0.3', 'v1.1']) {
    await mkdir(join(dir, 'redis', v), { recursive: true });
    await writeFile(
      join(dir, 'redis', v, 'redis.jinja'),
      `# redis ${v}\nresources:\n- name: {{ env["name"] }}\n  type: Service\n`,
    );
    await writeFile(join(dir, 'redis', v, 'example.yaml'), `resources:\n- name: r\n  type: redis.jinja\n`);
  }
  await mkdir(join(dir, 'web', 'v2'), { recursive: true });
  await writeFile(
    join(dir, 'web', 'v2', 'web.jinja'),
    'resources:\n- name: cache\n  type: github.com/acme/templates/redis:v1.1\n',
  );
  await writeFile(join(dir, 'web', 'v2', 'example.yaml'), 'resources: []\n');
  return dir;
}

async function addVersion(registry: string, version: string): Promise<void> {
  await mkdir(join(registry, 'redis', version), { recursive: true });
  await writeFile(join(registry, 'redis', version, 'redis.jinja'), `# redis ${version}\nresources: []\n`);
  await writeFile(join(registry, 'redis', version, 'example.yaml'), 'resources: []\n');
}

async function project(config: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-proj-'));
  await writeFile(join(dir, 'config.yaml'), config);
  return dir;
}

const CONFIG = `resources:
- name: cache
  type: github.com/acme/templates/redis:v1.0
- name: site
  type: web:v2
`;

describe('dm resolve / install / update / outdated / pull against a registry directory', () => {
  let registry: string;
  before(async () => {
    registry = await makeRegistry();
  });

  it('dm resolve floats to the highest patch and prints the digest', async () => {
    const env = await isolatedEnv();
    const r = await runDm(['resolve', 'redis:v1.0', '--registry-dir', registry, '-o', 'json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const [out] = JSON.parse(r.stdout);
    assert.equal(out.reference, 'github.com/acme/templates/redis:v1.0');
    assert.equal(out.version, 'v1.0.3');
    assert.equal(out.pinned, 'github.com/acme/templates/redis:=v1.0.3');
    assert.match(out.digest, /^sha256:[0-9a-f]{64}$/);
  });

  it('dm resolve exits 3 and lists what exists when no version matches', async () => {
    const env = await isolatedEnv();
    const r = await runDm(['resolve', 'redis:v1.0.9', '--registry-dir', registry, '-o', 'json'], { env });
    assert.equal(r.code, 3);
    const { error } = JSON.parse(r.stdout);
    assert.equal(error.code, 'VERSION_NOT_FOUND');
    assert.deepEqual(error.details.sameMinor, ['v1', 'v1.0.1', 'v1.0.3']);
    assert.doesNotMatch(r.stderr, /at .*\.js/, 'no stack trace');
  });

  it('dm install locks transitively, is stable, and --frozen-lockfile refuses changes without writing', async () => {
    const env = await isolatedEnv();
    const dir = await project(CONFIG);
    const first = await runDm(['install', '--registry-dir', registry, '-o', 'json'], { env, cwd: dir });
    assert.equal(first.code, 0, first.stderr);
    const lock = await readFile(join(dir, 'dm.lock'), 'utf8');
    const refs = JSON.parse(first.stdout).references.map((r: { reference: string }) => r.reference);
    assert.deepEqual(refs, [
      'github.com/acme/templates/redis:v1.0',
      'github.com/acme/templates/redis:v1.1',
      'github.com/acme/templates/web:v2',
    ]);
    assert.match(lock, /version: v1\.0\.3/);

    const again = await runDm(['install', '--registry-dir', registry], { env, cwd: dir });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await readFile(join(dir, 'dm.lock'), 'utf8'), lock, 'same inputs, byte-identical lock');

    await writeFile(join(dir, 'config.yaml'), `${CONFIG}- name: extra\n  type: redis:=v1.0.1\n`);
    const before = (await stat(join(dir, 'dm.lock'))).mtimeMs;
    const frozen = await runDm(['install', '--frozen-lockfile', '--registry-dir', registry, '-o', 'json'], {
      env,
      cwd: dir,
    });
    assert.equal(frozen.code, 4, frozen.stderr);
    assert.equal(JSON.parse(frozen.stdout).error.code, 'LOCKFILE_OUTDATED');
    assert.equal(await readFile(join(dir, 'dm.lock'), 'utf8'), lock);
    assert.equal((await stat(join(dir, 'dm.lock'))).mtimeMs, before);
  });

  it('dm install counts every file once: fetched the first time, already cached the next (the same total)', async () => {
    const env = await isolatedEnv();
    const dir = await project(CONFIG);
    const counts = async () => {
      const r = await runDm(['install', '--registry-dir', registry, '-o', 'json'], { env, cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      const { filesFetched, filesCached } = JSON.parse(r.stdout) as {
        filesFetched: number;
        filesCached: number;
      };
      return [filesFetched, filesCached];
    };
    // redis v1.0.3 and v1.1 (redis.jinja, example.yaml each), web v2 (web.jinja, example.yaml):
    // 6 files, 5 contents (the two example.yaml of redis are the same bytes).
    assert.deepEqual(await counts(), [5, 0]);
    assert.deepEqual(await counts(), [0, 5]);
    const text = await runDm(['install', '--registry-dir', registry], { env, cwd: dir });
    assert.match(text.stdout, /is up to date; 0 files fetched, 5 already cached$/m);
  });

  it('dm install warns about a type that is a reference but for the v of its version (not locked)', async () => {
    const env = await isolatedEnv();
    const dir = await project('resources:\n- name: cache\n  type: github.com/acme/templates/redis:1.0\n');
    const r = await runDm(['install', '--registry-dir', registry], { env, cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^no references$/m);
    assert.equal(
      r.stderr,
      `warning: ${join(dir, 'config.yaml')}: type 'github.com/acme/templates/redis:1.0' of 'cache' looks like a template reference, but its version lacks the 'v' (github.com/acme/templates/redis:v1.0?); treated as a primitive\n`,
    );
  });

  it('a locked version stays locked until dm update floats it; dm outdated shows both', async () => {
    const reg = await makeRegistry();
    const env = await isolatedEnv();
    const dir = await project(CONFIG);
    assert.equal((await runDm(['install', '--registry-dir', reg], { env, cwd: dir })).code, 0);
    await addVersion(reg, 'v1.0.4');
    await addVersion(reg, 'v1.2');
    const install = await runDm(['install', '--registry-dir', reg], { env, cwd: dir });
    assert.match(await readFile(join(dir, 'dm.lock'), 'utf8'), /version: v1\.0\.3/, install.stderr);

    const out = await runDm(['outdated', '--registry-dir', reg, '-o', 'json'], { env, cwd: dir });
    assert.equal(out.code, 1, out.stderr); // something is outdated: exit 1, as npm outdated (issue 13)
    const redis = JSON.parse(out.stdout).find((e: { reference: string }) =>
      e.reference.endsWith('redis:v1.0'),
    );
    assert.deepEqual(redis, {
      reference: 'github.com/acme/templates/redis:v1.0',
      locked: 'v1.0.3',
      wanted: 'v1.0.4',
      latest: 'v1.2',
    });

    const update = await runDm(['update', '--registry-dir', reg, '-o', 'json'], { env, cwd: dir });
    assert.equal(update.code, 0, update.stderr);
    const changed = JSON.parse(update.stdout).references.filter(
      (r: { change: string }) => r.change !== 'unchanged',
    );
    assert.deepEqual(
      changed.map((r: { reference: string; previousVersion: string; version: string }) => [
        r.reference,
        r.previousVersion,
        r.version,
      ]),
      [['github.com/acme/templates/redis:v1.0', 'v1.0.3', 'v1.0.4']],
    );
  });

  it('finds references templates emit only when rendered, with --properties; --no-expand does not', async () => {
    const reg = await makeRegistry();
    await mkdir(join(reg, 'site', 'v1'), { recursive: true });
    await writeFile(
      join(reg, 'site', 'v1', 'site.jinja'),
      'resources:\n- name: {{ env["name"] }}-cache\n  type: {{ "github.com/acme/" ~ "templates/" ~ properties["cache"] }}:v1.1\n',
    );
    await writeFile(
      join(reg, 'site', 'v1', 'site.jinja.schema'),
      'required: [cache]\nproperties: {cache: {type: string}}\n',
    );
    await writeFile(join(reg, 'site', 'v1', 'example.yaml'), 'resources: []\n');
    const env = await isolatedEnv();
    const dir = await project('resources:\n- name: shop\n  type: site:v1\n');
    const r = await runDm(['install', '--registry-dir', reg, '--properties', 'cache=redis', '-o', 'json'], {
      env,
      cwd: dir,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      JSON.parse(r.stdout).references.map((x: { reference: string; version: string }) => [
        x.reference,
        x.version,
      ]),
      [
        ['github.com/acme/templates/redis:v1.1', 'v1.1'],
        ['github.com/acme/templates/site:v1', 'v1'],
      ],
    );
    const stat = await runDm(['install', '--no-expand', '--registry-dir', reg, '-o', 'json'], {
      env,
      cwd: await project('resources:\n- name: shop\n  type: site:v1\n'),
    });
    assert.equal(stat.code, 0, stat.stderr);
    assert.deepEqual(
      JSON.parse(stat.stdout).references.map((x: { reference: string }) => x.reference),
      ['github.com/acme/templates/site:v1'],
    );
    // Without the property the configuration does not expand: a warning, and the static references.
    const warned = await runDm(['install', '--registry-dir', reg, '-o', 'json'], {
      env,
      cwd: await project('resources:\n- name: shop\n  type: site:v1\n'),
    });
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /warning: the configuration does not expand/);
  });

  it('a corrupted cache entry is detected, discarded with a warning and fetched again', async () => {
    const env = await isolatedEnv();
    const dir = await project(CONFIG);
    assert.equal((await runDm(['install', '--registry-dir', registry], { env, cwd: dir })).code, 0);
    const content = join(env.XDG_CACHE_HOME!, 'dm', 'content', 'sha256');
    const prefix = (await readdir(content))[0]!;
    const file = join(content, prefix, (await readdir(join(content, prefix)))[0]!);
    const bytes = await readFile(file);
    bytes[0] = bytes[0]! ^ 0x01;
    await writeFile(file, bytes);
    const r = await runDm(['install', '--registry-dir', registry, '-o', 'json'], { env, cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: cache entry sha256:[0-9a-f]+ was corrupted/);
    assert.equal(JSON.parse(r.stdout).filesFetched, 1);
    const verify = await runDm(['cache', 'verify', '-o', 'json'], { env });
    assert.deepEqual(JSON.parse(verify.stdout).corrupted, []);
  });

  it('--offline uses only lock and cache, and lists precisely what is missing', async () => {
    const env = await isolatedEnv();
    const dir = await project(CONFIG);
    const missing = await runDm(['install', '--offline', '--registry', 'acme/templates', '-o', 'json'], {
      env,
      cwd: dir,
    });
    assert.equal(missing.code, 5, missing.stderr);
    assert.equal(JSON.parse(missing.stdout).error.code, 'OFFLINE_MISSING');
    assert.match(missing.stderr, /github\.com\/acme\/templates\/redis:v1\.0/);

    assert.equal((await runDm(['install', '--registry-dir', registry], { env, cwd: dir })).code, 0);
    const offline = await runDm(['install', '--offline', '--registry', 'acme/templates'], { env, cwd: dir });
    assert.equal(offline.code, 0, offline.stderr);
  });

  it('four concurrent dm install processes share one cache safely', async () => {
    const env = await isolatedEnv();
    const dirs = await Promise.all([1, 2, 3, 4].map(() => project(CONFIG)));
    const results = await Promise.all(
      dirs.map((cwd) => runDm(['install', '--registry-dir', registry], { env, cwd })),
    );
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const locks = await Promise.all(dirs.map((d) => readFile(join(d, 'dm.lock'), 'utf8')));
    assert.ok(locks.every((l) => l === locks[0]));
    const verify = await runDm(['cache', 'verify', '-o', 'json'], { env });
    const v = JSON.parse(verify.stdout);
    assert.equal(v.corrupted.length, 0);
    assert.ok(v.checked > 0);
  });

  it('dm pull --to writes the version directory, and refuses an existing one', async () => {
    const env = await isolatedEnv();
    const to = join(await mkdtemp(join(tmpdir(), 'dm-pull-')), 'redis');
    const r = await runDm(['pull', 'redis:v1.1', '--registry-dir', registry, '--to', to], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await readdir(to)).sort(), ['example.yaml', 'redis.jinja']);
    const again = await runDm(['pull', 'redis:v1.1', '--registry-dir', registry, '--to', to], { env });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /does not exist yet/);
  });

  it('malformed configurations and references fail with one clear sentence', async () => {
    const env = await isolatedEnv();
    const dir = await project('resources:\n- name: a\n  type: [unclosed\n');
    const r = await runDm(['install', '--registry-dir', registry], { env, cwd: dir });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /config\.yaml:\d+: invalid YAML/);
    const bad = await runDm(['resolve', 'github.com/o/r/a/b/c:v1'], { env });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /only one collection segment/);
    const short = await runDm(['install'], {
      env,
      cwd: await project('resources:\n- name: a\n  type: redis:v1\n'),
    });
    assert.equal(short.code, 2);
    assert.match(short.stderr, /no default registry/);
  });
});

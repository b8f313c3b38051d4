/**
 * `dm-registry bundle keygen|export|import` with the real CLI between real SQLite databases: a
 * signed round trip that a server with no network then serves (resolve and search), idempotent
 * re-import, tampering and a wrong key refused with 0 rows changed, a version stored with another
 * digest refused, and delta bundles.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { repoRoot } from '../support/run-cli.js';

const BIN = join(repoRoot, 'bin', 'dm-registry.js');
const dir = mkdtempSync(join(tmpdir(), 'dm-bundle-cli-'));
const REGISTRY = 'github.com/dm-samples/templates';

function registry(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env },
  });
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

function ok(args: string[]) {
  const r = registry(args);
  assert.equal(r.code, 0, `dm-registry ${args.join(' ')}: ${r.stderr}`);
  return r;
}

function counts(db: string): { versions: number; files: number; registries: number } {
  const d = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const one = (sql: string) => (d.prepare(sql).get() as { n: number }).n;
    return {
      versions: one('SELECT count(*) AS n FROM versions'),
      files: one('SELECT count(*) AS n FROM files'),
      registries: one('SELECT count(*) AS n FROM registries'),
    };
  } finally {
    d.close();
  }
}

const db = (name: string) => join(dir, `${name}.db`);
let total = 0;

before(() => {
  ok(['index', join(repoRoot, 'registry-fixtures'), '--db', db('origin')]);
  total = counts(db('origin')).versions;
  ok(['bundle', 'keygen', '--out', join(dir, 'bundle.key')]);
  ok(['bundle', 'keygen', '--out', join(dir, 'other.key')]);
  ok([
    'bundle',
    'export',
    '--out',
    join(dir, 'full.tgz'),
    '--registry',
    REGISTRY,
    '--sign-key',
    join(dir, 'bundle.key'),
    '--db',
    db('origin'),
  ]);
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe('dm-registry bundle', () => {
  it('round-trips a signed bundle into an empty database, which then serves it with no upstream', async () => {
    const r = ok([
      'bundle',
      'import',
      join(dir, 'full.tgz'),
      '--verify-key',
      join(dir, 'bundle.key.pub'),
      '--db',
      db('airgap'),
    ]);
    assert.match(
      r.stdout,
      new RegExp(`${total} versions added, 0 already present, 1 registries\n.*\nsignature: verified with `),
    );
    assert.equal(counts(db('airgap')).versions, total);
    let server: RunningRegistry | undefined;
    let origin: RunningRegistry | undefined;
    try {
      server = await startRegistry([], {}, ['--db', db('airgap')]);
      origin = await startRegistry([], {}, ['--db', db('origin')]);
      for (const ref of [`${REGISTRY}/redis:v1.0`, `${REGISTRY}/web-app:v1.1`]) {
        const answers: { digest?: string }[] = await Promise.all(
          [server, origin].map(async (s) => {
            const res = await fetch(`${s.url}/api/v1/resolve?ref=${encodeURIComponent(ref)}`);
            return (await res.json()) as { digest?: string };
          }),
        );
        assert.ok(answers[0]?.digest, JSON.stringify(answers[0]));
        assert.equal(answers[0]?.digest, answers[1]?.digest, ref);
      }
      const search = (await (await fetch(`${server.url}/api/v1/search?q=redis`)).json()) as {
        hits: { name: string }[];
      };
      assert.ok(
        search.hits.some((h) => h.name === 'redis'),
        JSON.stringify(search),
      );
    } finally {
      await server?.stop();
      await origin?.stop();
    }
  });

  it('changes nothing when the same bundle is imported twice', () => {
    ok(['bundle', 'import', join(dir, 'full.tgz'), '--db', db('twice')]);
    const before = counts(db('twice'));
    const r = ok(['bundle', 'import', join(dir, 'full.tgz'), '--db', db('twice')]);
    assert.match(r.stdout, new RegExp(`0 versions added, ${total} already present`));
    assert.deepEqual(counts(db('twice')), before);
  });

  it('refuses a tampered bundle and a wrong key with a sentence and 0 rows changed', () => {
    ok(['bundle', 'import', join(dir, 'full.tgz'), '--db', db('guarded')]);
    const before = counts(db('guarded'));
    const bytes = readFileSync(join(dir, 'full.tgz'));
    bytes[Math.floor(bytes.length / 2)]! ^= 0x40;
    writeFileSync(join(dir, 'flipped.tgz'), bytes);
    writeFileSync(join(dir, 'truncated.tgz'), readFileSync(join(dir, 'full.tgz')).subarray(0, 4000));
    for (const [file, key, pattern] of [
      ['flipped.tgz', undefined, /flipped\.tgz: /],
      ['truncated.tgz', undefined, /truncated\.tgz: /],
      ['full.tgz', 'other.key.pub', /signature does not verify/],
    ] as const) {
      const r = registry([
        'bundle',
        'import',
        join(dir, file),
        '--db',
        db('guarded'),
        ...(key ? ['--verify-key', join(dir, key)] : []),
      ]);
      assert.notEqual(r.code, 0, `${file} was accepted`);
      assert.match(r.stderr, pattern);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      assert.deepEqual(counts(db('guarded')), before, `${file} changed rows`);
    }
  });

  it('refuses a version that exists here with another digest, and writes nothing', () => {
    const edited = join(dir, 'edited-fixtures');
    cpSync(join(repoRoot, 'registry-fixtures'), edited, { recursive: true });
    const file = join(edited, 'redis', 'v1.0.3', 'redis.jinja');
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n# edited after publication\n`);
    ok(['index', edited, '--db', db('edited')]);
    const before = counts(db('edited'));
    // The registry is indexed here from a directory: refused as such first (bundle-rules.test.ts),
    // and with the override, the version that differs is still refused.
    const refused = registry(['bundle', 'import', join(dir, 'full.tgz'), '--db', db('edited')]);
    assert.match(refused.stderr, /which this server indexes from its directory source/);
    const r = registry([
      'bundle',
      'import',
      join(dir, 'full.tgz'),
      '--into-indexed-registries',
      '--db',
      db('edited'),
    ]);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /redis:=v1\.0\.3 is stored with digest sha256:[0-9a-f]+ and would become sha256:[0-9a-f]+/,
    );
    assert.deepEqual(counts(db('edited')), before);
  });

  it('writes delta bundles: only what the base lacks', () => {
    // The base: the same registry without redis.
    const partial = join(dir, 'partial-fixtures');
    cpSync(join(repoRoot, 'registry-fixtures'), partial, { recursive: true });
    rmSync(join(partial, 'redis'), { recursive: true, force: true });
    ok(['index', partial, '--db', db('partial')]);
    const redisVersions = total - counts(db('partial')).versions;
    assert.ok(redisVersions > 0);
    ok(['bundle', 'export', '--out', join(dir, 'base.tgz'), '--registry', REGISTRY, '--db', db('partial')]);
    const delta = ok([
      'bundle',
      'export',
      '--out',
      join(dir, 'delta.tgz'),
      '--since',
      join(dir, 'base.tgz'),
      '--db',
      db('origin'),
    ]);
    assert.match(delta.stdout, new RegExp(`: ${redisVersions} versions, `));
    ok(['bundle', 'import', join(dir, 'base.tgz'), '--db', db('delta')]);
    const r = ok(['bundle', 'import', join(dir, 'delta.tgz'), '--db', db('delta')]);
    assert.match(r.stdout, new RegExp(`${redisVersions} versions added, 0 already present`));
    assert.equal(counts(db('delta')).versions, total);
  });
});

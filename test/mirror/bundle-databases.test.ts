/**
 * `dm-registry bundle export|import` with the real CLI on each database (SQLite, and PostgreSQL on
 * a private cluster where it is installed): a signed round trip keeps every version and its
 * first-seen time (a re-export of the copy carries the origin's times), a second import changes
 * nothing, and a damaged bundle changes 0 rows. Bundles cross databases: one exported from
 * SQLite imports into PostgreSQL and back.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { readBundle } from '../../server/src/mirror/bundle-format.js';
import { repoRoot } from '../support/run-cli.js';
import { DIALECTS, postgresDatabase } from './dialect.js';
import { registryCli } from './registry-cli.js';

const REGISTRY = 'github.com/dm-samples/templates';
const dir = mkdtempSync(join(tmpdir(), 'dm-bundle-db-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const { registry, ok, database } = registryCli(dir);

/** Rows of the tables a bundle import writes. */
async function counts(db: string): Promise<Record<string, number>> {
  const tables = ['registries', 'templates', 'versions', 'version_files', 'files', 'first_seen'];
  const out: Record<string, number> = {};
  if (db.startsWith('file:')) {
    const d = new Database(db.slice(5), { readonly: true, fileMustExist: true });
    try {
      for (const t of tables) out[t] = (d.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
    } finally {
      d.close();
    }
    return out;
  }
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  try {
    for (const t of tables) out[t] = Number((await client.query(`SELECT count(*) AS n FROM ${t}`)).rows[0].n);
  } finally {
    await client.end();
  }
  return out;
}

async function firstSeenOf(bundle: string): Promise<Map<string, string | null>> {
  const { manifest } = await readBundle(bundle);
  return new Map(manifest.versions.map((v) => [`${v.reference} ${v.digest}`, v.firstSeen]));
}

ok(['bundle', 'keygen', '--out', join(dir, 'bundle.key')]);

for (const dialect of DIALECTS) {
  describe(`dm-registry bundle on ${dialect}`, () => {
    it('round-trips a signed bundle, keeping each first-seen time, and a second import changes nothing', async () => {
      const origin = await database(dialect);
      ok(['index', join(repoRoot, 'registry-fixtures'), '--db', origin]);
      const full = join(dir, `full-${dialect}.tgz`);
      ok([
        'bundle',
        'export',
        '--out',
        full,
        '--registry',
        REGISTRY,
        '--sign-key',
        join(dir, 'bundle.key'),
        '--db',
        origin,
      ]);
      const { manifest } = await readBundle(full);
      assert.ok(manifest.versions.length > 20);
      for (const v of manifest.versions) {
        assert.ok(v.firstSeen !== null, `${v.reference} carries its first-seen time`);
        assert.ok(Date.parse(v.firstSeen) <= Date.parse(manifest.createdAt), v.reference);
      }

      const copy = await database(dialect);
      const r = ok(['bundle', 'import', full, '--verify-key', join(dir, 'bundle.key.pub'), '--db', copy]);
      assert.match(r.stdout, new RegExp(`${manifest.versions.length} versions added, 0 already present`));
      const once = await counts(copy);
      assert.equal(once.versions, manifest.versions.length);
      assert.equal(once.first_seen, manifest.versions.length);

      const again = ok(['bundle', 'import', full, '--db', copy]);
      assert.match(again.stdout, new RegExp(`0 versions added, ${manifest.versions.length} already present`));
      assert.deepEqual(await counts(copy), once);

      const reexport = join(dir, `again-${dialect}.tgz`);
      ok(['bundle', 'export', '--out', reexport, '--registry', REGISTRY, '--db', copy]);
      assert.deepEqual(await firstSeenOf(reexport), await firstSeenOf(full));
    });

    it('changes 0 rows for a damaged bundle', async () => {
      const full = join(dir, `full-${dialect}.tgz`);
      const target = await database(dialect);
      ok(['bundle', 'import', full, '--db', target]);
      const before = await counts(target);
      const damaged = join(dir, `damaged-${dialect}.tgz`);
      const bytes = readFileSync(full);
      bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
      writeFileSync(damaged, bytes);
      const r = registry(['bundle', 'import', damaged, '--db', await database(dialect)]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /damaged|INVALID_BUNDLE|not|bundle/i);
      assert.ok(!/\n\s+at /.test(r.stderr), r.stderr);
      const r2 = registry(['bundle', 'import', damaged, '--db', target]);
      assert.notEqual(r2.code, 0);
      assert.deepEqual(await counts(target), before);
    });
  });
}

if (DIALECTS.includes('postgres')) {
  describe('bundles across databases', () => {
    it('a bundle exported from SQLite imports into PostgreSQL with the same first-seen times', async () => {
      const full = join(dir, 'full-sqlite.tgz');
      const target = await postgresDatabase();
      ok(['bundle', 'import', full, '--db', target]);
      const back = join(dir, 'back.tgz');
      ok(['bundle', 'export', '--out', back, '--registry', REGISTRY, '--db', target]);
      assert.deepEqual(await firstSeenOf(back), await firstSeenOf(full));
    });
  });
}

/**
 * A read by key (docs/server.md "Flows, written once"): `SqlDialect.lookup`, written once as a
 * KeyedRead, runs on SQLite as one prepared statement run per key in-process (one step for the
 * whole list) and on PostgreSQL as a statement per LIST_ROWS keys over a list parameter. Both
 * answer the same rows, each naming its key's position: a property over random keys (stored or
 * not, repeated, empty) on real databases, and the step counts that keep SQLite off the list form
 * (adding 10,000 versions cost 1.1× the CPU of the per-dialect code through it).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { storedContent } from '../../server/src/store/add-versions.js';
import { openPostgresStore, type PostgresStore } from '../../server/src/store/postgres/open.js';
import { postgresDialect, runFlowOn } from '../../server/src/store/postgres/runner.js';
import { type KeyedRead, LIST_ROWS, lookupFlow } from '../../server/src/store/sql.js';
import { openStore, type Store } from '../../server/src/store/sqlite/open.js';
import { runFlow, sqliteDialect } from '../../server/src/store/sqlite/runner.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';

/** Content hashes from a small alphabet, so random lists repeat them and half are stored. */
const SHAS = Array.from({ length: 16 }, (_, i) => i.toString(16).repeat(64));
const STORED = SHAS.filter((_, i) => i % 2 === 0);
const shaLists = fc.array(fc.constantFrom(...SHAS), { maxLength: 40 });

/** A read with a further parameter and a text and an int key: a file's size when it is at least `$2`. */
const SIZE_AT_LEAST: KeyedRead = {
  keys: [
    ['sha256', 'text'],
    ['size', 'int'],
  ],
  sql: (keys) => `SELECT k.at, f.size FROM ${keys} CROSS JOIN files f
    WHERE f.sha256 = k.sha256 AND f.size = k.size AND f.size >= $2`,
};

const sizeOf = (sha: string) => SHAS.indexOf(sha) * 10;

/** What a lookup answers, in key order (each dialect may order its rows as it likes). */
const byKey = <T extends { at: number }>(rows: T[]) => [...rows].sort((a, b) => a.at - b.at);

describe('a read by key (SqlDialect.lookup)', () => {
  let sqlite: Store;
  let cluster: PostgresCluster | undefined;
  let pg: PostgresStore | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'dm-lookup-'));

  before(async () => {
    sqlite = openStore(join(dir, 'store.db'));
    const insert = sqlite.sqlite.prepare(
      'INSERT INTO files (sha256, git_sha, size, content) VALUES (?, ?, ?, ?)',
    );
    for (const sha of STORED) insert.run(sha, sha.slice(0, 40), sizeOf(sha), Buffer.from(sha));
    if (postgresBinaries()) {
      cluster = await startPostgres();
      pg = await openPostgresStore(await cluster.createDatabase('lookup'), { max: 2 });
      for (const sha of STORED) {
        await pg.pool.query('INSERT INTO files (sha256, git_sha, size, content) VALUES ($1, $2, $3, $4)', [
          sha,
          sha.slice(0, 40),
          sizeOf(sha),
          Buffer.from(sha),
        ]);
      }
    }
  });
  after(async () => {
    sqlite?.close();
    await pg?.close();
    cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is one step for any number of keys on SQLite, a statement per LIST_ROWS keys on PostgreSQL, none for no keys', () => {
    const keys = Array.from({ length: 10_000 }, (_, i) => [SHAS[i % SHAS.length]!]);
    const read: KeyedRead = { keys: [['sha256', 'text']], sql: (k) => `SELECT k.at FROM ${k}` };
    const onSqlite = sqliteDialect.lookup(read, keys);
    assert.equal(onSqlite.length, 1);
    assert.equal(onSqlite[0]![2]?.length, 10_000, 'SQLite runs its statement once per key');
    assert.equal(postgresDialect.lookup(read, keys).length, Math.ceil(10_000 / LIST_ROWS));
    assert.deepEqual(sqliteDialect.lookup(read, []), []);
    assert.deepEqual(postgresDialect.lookup(read, []), []);
  });

  it('answers which content is stored, for any list of hashes, on both databases', async () => {
    await fc.assert(
      fc.asyncProperty(shaLists, async (shas) => {
        const expected = new Set(shas.filter((sha) => STORED.includes(sha)));
        assert.deepEqual(runFlow(sqlite.sqlite, storedContent(sqliteDialect, shas)), expected);
        if (pg) assert.deepEqual(await runFlowOn(pg.pool, storedContent(postgresDialect, shas)), expected);
      }),
      { numRuns: 60 },
    );
  });

  it('answers each key its row by position, with the further parameters after the keys, on both databases', async () => {
    await fc.assert(
      fc.asyncProperty(shaLists, fc.integer({ min: 0, max: 160 }), async (shas, min) => {
        const keys = shas.map((sha, i) => [sha, i % 3 === 0 ? sizeOf(sha) + 1 : sizeOf(sha)]);
        const expected = keys.flatMap(([sha, size], at) =>
          STORED.includes(sha as string) && size === sizeOf(sha as string) && (size as number) >= min
            ? [{ at, size }]
            : [],
        );
        const onSqlite = runFlow(
          sqlite.sqlite,
          lookupFlow<{ at: number; size: number }>(sqliteDialect, SIZE_AT_LEAST, keys, [min]),
        );
        assert.deepEqual(byKey(onSqlite.map((r) => ({ ...r }))), expected);
        if (pg) {
          const onPg = await runFlowOn(
            pg.pool,
            lookupFlow<{ at: number; size: number }>(postgresDialect, SIZE_AT_LEAST, keys, [min]),
          );
          assert.deepEqual(byKey(onPg.map((r) => ({ at: Number(r.at), size: Number(r.size) }))), expected);
        }
      }),
      { numRuns: 60 },
    );
  });
});

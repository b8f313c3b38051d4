/**
 * Integrity on a database with a real locale (docs/server.md, "Text is compared as bytes"): an
 * operator indexes a registry, one published file changes, the registry is synced again. On
 * SQLite, on PostgreSQL created with `en_US.UTF-8` (what initdb, Debian's clusters and managed
 * services create) and on PostgreSQL created with `C`, the second sync records nothing new in the
 * first-seen log, opens exactly one quarantine, and the changed bytes are not served. A neighbour
 * registry whose name extends this one's (`…/templates-extra`) is never read as part of it.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isPostgres } from '../../server/src/store/open-store.js';
import { commitAll, commitDirectory } from '../github-standin/standin.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';
import { type DialectTestServer, FIXTURES, tempDir, testServerAt, testServerOn } from './helpers.js';

const NAME = 'git.example/acme/templates';
const NEIGHBOUR = 'git.example/acme/templates-extra';
const MARKER = 'Zanzibarized';

async function count(s: DialectTestServer, table: 'first_seen' | 'quarantines', where = ''): Promise<number> {
  const sql = `SELECT count(*) AS n FROM ${table} ${where}`;
  if (isPostgres(s.store)) return Number((await s.store.pool.query(sql)).rows[0].n);
  return Number((s.store.sqlite.prepare(sql).get() as { n: number }).n);
}

const databases: { label: string; locale?: 'en_US.UTF-8' | 'C' }[] = [{ label: 'SQLite' }];
if (postgresBinaries()) {
  databases.push({ label: 'PostgreSQL en_US.UTF-8', locale: 'en_US.UTF-8' });
  databases.push({ label: 'PostgreSQL C', locale: 'C' });
}

for (const database of databases)
  describe(`a changed published file on ${database.label}`, () => {
    let cluster: PostgresCluster | undefined;
    let s: DialectTestServer;
    let dir: string;

    before(async () => {
      dir = tempDir();
      if (database.locale) {
        cluster = await startPostgres({ locale: database.locale });
        s = await testServerAt(await cluster.createDatabase('operator'));
      } else {
        s = await testServerOn('sqlite');
      }
    });
    after(async () => {
      await s?.close();
      cluster?.stop();
    });

    it('is quarantined: no new first-seen record, one quarantine, the first bytes served', async () => {
      if (isPostgres(s.store)) {
        const { rows } = await s.store.pool.query(
          'SELECT datcollate FROM pg_database WHERE datname = current_database()',
        );
        assert.equal(rows[0].datcollate, database.locale);
      }
      const repo = join(dir, 'repo');
      commitDirectory(FIXTURES, repo);
      const neighbourRepo = join(dir, 'neighbour');
      commitDirectory(FIXTURES, neighbourRepo);
      const neighbour = await s.service.add({ source: neighbourRepo, name: NEIGHBOUR });
      assert.equal((await s.service.sync(neighbour.id, 'manual')).status, 'succeeded');
      const row = await s.service.add({ source: repo, name: NAME });
      assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
      const recorded = await count(s, 'first_seen');
      assert.ok(recorded > 20, `first sight recorded ${recorded} versions of both registries`);
      const ref = `${NAME}/redis:v1.1`;
      const first = (await (await s.app.request(`/api/v1/resolve?ref=${ref}`)).json()) as { digest: string };

      const schemaPath = join(repo, 'redis', 'v1.1', 'redis.jinja.schema');
      writeFileSync(
        schemaPath,
        readFileSync(schemaPath, 'utf8').replace('title: Redis', `title: Redis ${MARKER}`),
      );
      commitAll(repo, 'edit a published version');
      assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');

      assert.equal(await count(s, 'first_seen'), recorded, 'the second sync recorded versions again');
      assert.equal(await count(s, 'quarantines'), 1);
      assert.equal(await count(s, 'quarantines', 'WHERE accepted_at IS NULL'), 1);
      const resolved = await s.app.request(`/api/v1/resolve?ref=${ref}`);
      assert.equal(resolved.status, 200);
      const body = await resolved.text();
      assert.ok(!body.includes(MARKER), 'resolve carries the changed bytes');
      assert.equal(JSON.parse(body).digest, first.digest);
      const file = await s.app.request(
        `/api/v1/templates/${NAME}/redis/versions/v1.1/files/redis.jinja.schema`,
      );
      assert.equal(file.status, 200);
      assert.ok(!(await file.text()).includes(MARKER), 'the file route serves the changed bytes');

      // The neighbour syncs again untouched: nothing recorded, nothing quarantined.
      assert.match((await s.service.sync(neighbour.id, 'manual')).status, /^(succeeded|unchanged)$/);
      assert.equal(await count(s, 'first_seen'), recorded);
      assert.equal(await count(s, 'quarantines'), 1);
    });
  });

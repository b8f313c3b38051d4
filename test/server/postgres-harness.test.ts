/**
 * The PostgreSQL test harness (test/support/postgres.ts) itself: a private cluster starts on its
 * own socket, has pg_trgm, serves two databases, and `stop()` shuts it down and removes it.
 * Registered only where PostgreSQL is installed (CI installs it; docs/server.md).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import pg from 'pg';
import { postgresBinaries, startPostgres } from '../support/postgres.js';

if (postgresBinaries()) {
  describe('PostgreSQL test harness', () => {
    it('starts a private cluster with pg_trgm, creates databases and stops, leaving nothing', async () => {
      const cluster = await startPostgres();
      try {
        const url = await cluster.createDatabase('harness_one');
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          const db = await client.query<{ db: string }>('SELECT current_database() AS db');
          assert.equal(db.rows[0]?.db, 'harness_one');
          await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
          const sim = await client.query<{ s: number }>("SELECT similarity('redis', 'rediss') AS s");
          assert.ok((sim.rows[0]?.s ?? 0) > 0.5);
        } finally {
          await client.end();
        }
        assert.notEqual(await cluster.createDatabase('harness_two'), url);
      } finally {
        cluster.stop();
      }
      assert.equal(existsSync(cluster.dir), false);
      const client = new pg.Client({ connectionString: cluster.url(), connectionTimeoutMillis: 2000 });
      await assert.rejects(client.connect());
    });
  });
} else {
  process.stdout.write(
    '# PostgreSQL is not installed here: the PostgreSQL half of the server tests is not run\n',
  );
}

/**
 * The first-seen record, checksum log and quarantine inside the PostgreSQL index swap
 * (docs/integrity-store.md §2), on a cluster the test starts: first sight appends records and a
 * signed checkpoint whose root an independent in-memory log recomputes; an edited published
 * version is quarantined with its first-seen rows served and its new bytes never stored; the
 * tables refuse UPDATE and DELETE.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  encodeRecord,
  generateLogKey,
  MemoryHashStore,
  MerkleLog,
  parseSignerKey,
  parseVerifierKey,
  verifyCheckpoint,
} from '../../client/src/integrity/index.js';
import { openPostgresStore, type PostgresStore } from '../../server/src/store/postgres/open.js';
import { PostgresReads } from '../../server/src/store/postgres/reads.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';
import { FIXTURES, tempDir } from './helpers.js';
import { indexDirectoryPg } from './pg-index.js';

const NAME = 'github.com/acme/templates';

if (postgresBinaries()) {
  describe('quarantine in the PostgreSQL swap', () => {
    let cluster: PostgresCluster;
    let store: PostgresStore;
    let dir: string;
    before(async () => {
      cluster = await startPostgres();
      store = await openPostgresStore(await cluster.createDatabase('quarantine'), { max: 2 });
      dir = tempDir();
    });
    after(async () => {
      await store?.pool.end();
      cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('swapIndexPg() records first sights in a signed log and quarantines an edited version', async () => {
      const keys = generateLogKey('pg.test/checksums');
      const signer = parseSignerKey(keys.signerKey);
      const registry = join(dir, 'registry');
      cpSync(FIXTURES, registry, { recursive: true });
      await store.pool.query(
        `INSERT INTO registries (id, name, source_type, source, visibility, created_at)
         VALUES (1, $1, 'directory', $2, 'public', 0)`,
        [NAME, registry],
      );
      const first = await indexDirectoryPg(store, 1, registry, { signer, now: 1000 });
      assert.ok(first.recorded > 10, `recorded ${first.recorded}`);
      assert.deepEqual(first.quarantined, []);

      // The signed checkpoint's root is the root of the records, recomputed independently.
      const rows = (
        await store.pool.query<{ template: string; version: string; digest: string }>(
          'SELECT template, version, digest FROM first_seen ORDER BY log_index',
        )
      ).rows;
      assert.equal(rows.length, first.recorded);
      const memory = await MerkleLog.open(new MemoryHashStore());
      await memory.append(rows.map((r) => encodeRecord(r)));
      const reads = new PostgresReads(store);
      const checkpoint = await reads.latestCheckpoint();
      const verified = verifyCheckpoint(checkpoint!.note, parseVerifierKey(keys.verifierKey));
      assert.equal(verified.size, rows.length);
      assert.deepEqual(verified.root, await memory.root());
      const stored = await MerkleLog.open(reads.logHashes());
      assert.deepEqual(await stored.root(), verified.root);

      // An edit of one published file: quarantined, first-seen rows served, new bytes not stored.
      const before = (
        await store.pool.query<{ digest: string }>(
          `SELECT v.digest FROM versions v JOIN templates t ON t.id = v.template_id
         WHERE t.name = 'redis' AND v.version = 'v1.1'`,
        )
      ).rows[0]!.digest;
      const file = join(registry, 'redis', 'v1.1', 'example.yaml');
      const edited = `${readFileSync(file, 'utf8')}# edited after publishing\n`;
      writeFileSync(file, edited);
      const second = await indexDirectoryPg(store, 1, registry, { signer, now: 2000 });
      assert.equal(second.recorded, 0);
      assert.deepEqual(
        second.quarantined.map((q) => [q.template, q.version, q.changedFiles.map((f) => f.path)]),
        [[`${NAME}/redis`, 'v1.1', ['example.yaml']]],
      );
      const served = (
        await store.pool.query<{ digest: string }>(
          `SELECT v.digest FROM versions v JOIN templates t ON t.id = v.template_id
         WHERE t.name = 'redis' AND v.version = 'v1.1'`,
        )
      ).rows[0]!.digest;
      assert.equal(served, before);
      const newBytes = await store.pool.query('SELECT 1 FROM files WHERE content = $1', [
        Buffer.from(edited),
      ]);
      assert.equal(newBytes.rowCount, 0);
      const open = await reads.openQuarantines(1);
      assert.equal(open.length, 1);
      assert.equal(open[0]!.since, 2000);
      assert.equal((await reads.newestRecord(`${NAME}/redis`, 'v1.1'))?.digest, before);

      // The same edit again is not a new event; the log did not grow.
      const third = await indexDirectoryPg(store, 1, registry, { signer, now: 3000 });
      assert.deepEqual(third.quarantined, []);
      assert.equal((await reads.latestCheckpoint())?.size, rows.length);

      for (const sql of [
        "UPDATE first_seen SET digest = 'x'",
        'DELETE FROM log_hashes',
        'DELETE FROM log_checkpoints',
      ]) {
        await assert.rejects(store.pool.query(sql), /append-only/, sql);
      }
    });
  });
}

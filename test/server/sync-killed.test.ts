/**
 * A sync killed mid-way (SIGKILL inside the swap transaction) leaves the previous index serving
 * and the database consistent; the next start marks the sync interrupted and a new sync succeeds.
 * On both databases: on PostgreSQL the killed process's sync lease expires first (docs/server.md,
 * "Several replicas": while a lease is live, another replica may still be syncing).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ADMIN_ACCESS } from '../../server/src/api/access.js';
import { isPostgres } from '../../server/src/store/open-store.js';
import { DIALECTS, killAt, killTestRegistry, leasesExpired, openDatabase } from './helpers.js';

const everyone = ADMIN_ACCESS;

for (const dialect of DIALECTS) {
  describe(`killed sync (${dialect})`, () => {
    it('a sync killed inside its swap transaction leaves the old index serving and the database consistent', async () => {
      const t = await killTestRegistry(dialect);
      try {
        const { before, registry: countsBefore } = t;
        // Change the registry, then sync it in a child process killed mid-swap.
        writeFileSync(join(t.registryDir, 'redis', 'v1.1', 'example.yaml'), 'resources: []\n');
        await killAt(join(import.meta.dirname, 'sync-child.js'), [t.db, t.dir], 'mid-swap');

        // Restart: consistent database, old index serving, the sync marked interrupted.
        const probe = await openDatabase(t.db);
        await leasesExpired(probe);
        await probe.close();
        const first = await t.open();
        await first.service.recovered;
        const store = first.store;
        if (!isPostgres(store)) {
          assert.equal(store.sqlite.pragma('integrity_check', { simple: true }), 'ok');
          assert.deepEqual(store.sqlite.pragma('foreign_key_check'), []);
          const fts = store.sqlite.prepare('SELECT count(*) AS n FROM templates_fts').get() as { n: number };
          const templates = store.sqlite.prepare('SELECT count(*) AS n FROM templates').get() as {
            n: number;
          };
          assert.equal(fts.n, templates.n);
        }
        const served = await first.service.catalog.resolve('github.com/acme/templates/redis:v1.1', everyone);
        assert.equal(served.digest, before.digest);
        const countsAfter = await first.service.find(1, everyone);
        assert.equal(countsAfter.versionCount, countsBefore.versionCount);
        assert.equal(countsAfter.templateCount, countsBefore.templateCount);
        assert.equal(countsAfter.commit, countsBefore.commit);
        assert.equal((await first.service.data.reads.templates(1)).length, countsBefore.templateCount);
        const syncs = (await first.service.data.reads.syncs(1)).map((s) => s.status);
        assert.deepEqual(syncs, ['interrupted', 'succeeded']);
        assert.equal(countsAfter.lastSyncStatus, 'interrupted');

        // And the next sync swaps the new commit in (the edited published version quarantined,
        // docs/integrity-store.md).
        assert.equal((await first.service.sync(1, 'manual')).status, 'succeeded');
        assert.notEqual((await first.service.find(1, everyone)).commit, countsBefore.commit);
        const quarantined = await first.service.data.reads.openQuarantines(1);
        assert.equal(quarantined.length, 1);
        await first.close();
      } finally {
        t.dispose();
      }
    });
  });
}

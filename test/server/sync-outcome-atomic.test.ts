/**
 * The sync's outcome is written inside the swap transaction on both databases (docs/server.md,
 * "Indexing"): when the database refuses the `succeeded` record (a trigger here), the new index is
 * rolled back with it — the old index keeps serving and the sync ends `failed`.
 */
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN_ACCESS } from '../../server/src/api/access.js';
import { DIALECTS, type DialectTestServer, FIXTURES, testServerOn } from './helpers.js';

const REG = 'github.com/acme/templates';

async function refuseSucceeded(s: DialectTestServer): Promise<void> {
  const store = s.store;
  if ('pool' in store) {
    await store.pool.query(`CREATE FUNCTION refuse_succeeded() RETURNS trigger AS $$
      BEGIN RAISE EXCEPTION 'the outcome is refused'; END $$ LANGUAGE plpgsql`);
    await store.pool.query(`CREATE TRIGGER refuse_succeeded BEFORE UPDATE ON syncs FOR EACH ROW
      WHEN (NEW.status = 'succeeded') EXECUTE FUNCTION refuse_succeeded()`);
  } else {
    store.sqlite.exec(`CREATE TRIGGER refuse_succeeded BEFORE UPDATE ON syncs
      WHEN NEW.status = 'succeeded' BEGIN SELECT RAISE(ABORT, 'the outcome is refused'); END`);
  }
}

for (const dialect of DIALECTS) {
  describe(`sync outcome in the swap transaction (${dialect})`, () => {
    let s: DialectTestServer;
    let registryDir: string;
    before(async () => {
      s = await testServerOn(dialect, { defaultRegistry: REG });
      registryDir = join(s.dir, 'registry');
      cpSync(FIXTURES, registryDir, { recursive: true });
    });
    after(() => s.close());

    it('a refused outcome rolls the new index back with it', async () => {
      const id = (await s.service.add({ source: registryDir, name: REG })).id;
      assert.equal((await s.service.sync(id, 'manual')).status, 'succeeded');
      const before = await s.service.find(id, ADMIN_ACCESS);
      const digest = (await s.service.catalog.resolve(`${REG}/redis:v1.1`, ADMIN_ACCESS)).digest;

      writeFileSync(join(registryDir, 'redis', 'v1.1', 'example.yaml'), 'resources: []\n');
      await refuseSucceeded(s);
      const outcome = await s.service.sync(id, 'manual');
      assert.equal(outcome.status, 'failed');

      const after = await s.service.find(id, ADMIN_ACCESS);
      assert.equal(after.commit, before.commit);
      assert.equal(after.lastSyncStatus, 'failed');
      assert.equal((await s.service.catalog.resolve(`${REG}/redis:v1.1`, ADMIN_ACCESS)).digest, digest);
      // Nothing of the refused swap stayed: no quarantine opened for the edited version.
      assert.deepEqual(await s.service.data.reads.openQuarantines(id), []);
    });
  });
}

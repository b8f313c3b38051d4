/**
 * Issue 15 item 13: a process killed right after the swap commits. The sync's outcome is recorded
 * in the swap transaction, so the restarted server serves the new index and says `succeeded`
 * (it used to say `interrupted` next to the new index). On both databases.
 */
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ADMIN_ACCESS } from '../../../server/src/api/access.js';
import { DIALECTS, killAt, killTestRegistry } from '../helpers.js';

const everyone = ADMIN_ACCESS;

for (const dialect of DIALECTS) {
  describe(`hostile: killed right after the swap (${dialect})`, () => {
    it('the new index and its succeeded status survive together', async () => {
      const t = await killTestRegistry(dialect);
      try {
        // A new version (an edit of a published one would be quarantined, docs/integrity-store.md).
        const redis = join(t.registryDir, 'redis');
        cpSync(join(redis, 'v1.1'), join(redis, 'v1.9'), { recursive: true });
        writeFileSync(join(redis, 'v1.9', 'example.yaml'), 'resources: []\n');
        await killAt(join(import.meta.dirname, 'after-swap-child.js'), [t.db, t.dir], 'after-swap');

        const first = await t.open();
        await first.service.recovered;
        const served = await first.service.catalog.resolve('github.com/acme/templates/redis:v1.9', everyone);
        assert.equal(served.version, 'v1.9', 'the new index is not serving');
        assert.notEqual(served.digest, t.before.digest);
        const info = await first.service.info(await first.service.find(1, everyone), { viewer: everyone });
        assert.equal(info.sync.status, 'succeeded');
        const [last] = await first.service.data.reads.syncs(1);
        assert.equal(last?.status, 'succeeded');
        await first.close();
      } finally {
        t.dispose();
      }
    });
  });
}

/**
 * Concurrent syncs of one registry are serialised (never two swaps at once) and coalesced (a burst
 * of requests while one runs costs one more sync, not one per request).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIALECTS, FIXTURES, testServerOn } from './helpers.js';

for (const dialect of DIALECTS) {
  describe(`sync serialisation (${dialect})`, () => {
    it('syncs of one registry never overlap, and a burst while one runs coalesces into one more', async () => {
      const s = await testServerOn(dialect);
      try {
        const row = await s.service.add({ source: FIXTURES, name: 'github.com/acme/templates' });
        let inside = 0;
        let maxInside = 0;
        const hooks = {
          beforeSwap: async () => {
            inside++;
            maxInside = Math.max(maxInside, inside);
            await new Promise((r) => setTimeout(r, 30));
            inside--;
          },
        };
        const results = await Promise.all([
          s.service.sync(row.id, 'manual', hooks),
          s.service.sync(row.id, 'manual', hooks),
          s.service.sync(row.id, 'manual', hooks),
          s.service.sync(row.id, 'manual', hooks),
        ]);
        assert.equal(maxInside, 1);
        const ids = new Set(results.map((r) => r.syncId));
        assert.equal(ids.size, 2, 'four requests should make exactly two syncs');
        const rows = (await s.service.data.reads.syncs(row.id))
          .reverse()
          .map((r) => ({ s: r.startedAt, f: r.finishedAt! }));
        assert.equal(rows.length, 2);
        assert.ok(rows[1]!.s >= rows[0]!.f, 'the second sync started before the first finished');
      } finally {
        await s.close();
      }
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`scheduled syncs (${dialect})`, () => {
    it('startScheduler() syncs a registry whose interval has passed, and not one without an interval', async () => {
      let now = 1_000_000;
      const s = await testServerOn(dialect, { clock: () => now });
      try {
        const scheduled = await s.service.add({
          source: FIXTURES,
          name: 'github.com/acme/scheduled',
          interval: 60,
        });
        const manual = await s.service.add({ source: FIXTURES, name: 'github.com/acme/manual' });
        s.service.startScheduler(20);
        await new Promise((r) => setTimeout(r, 300));
        await s.service.queue.idle();
        const count = async (id: number) => (await s.service.data.reads.syncs(id)).length;
        assert.equal(await count(scheduled.id), 1);
        assert.equal(await count(manual.id), 0);
        now += 61_000;
        await new Promise((r) => setTimeout(r, 300));
        await s.service.queue.idle();
        assert.equal(await count(scheduled.id), 2);
      } finally {
        await s.close();
      }
    });
  });
}

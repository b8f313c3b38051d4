/**
 * Concurrent syncs of one registry are serialised (never two swaps at once) and coalesced (a burst
 * of requests while one runs costs one more sync, not one per request).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXTURES, testServer } from './helpers.js';

describe('sync serialisation', () => {
  it('syncs of one registry never overlap, and a burst while one runs coalesces into one more', async () => {
    const s = testServer();
    try {
      const row = s.service.add({ source: FIXTURES, name: 'github.com/acme/templates' });
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
      const rows = s.store.sqlite
        .prepare('SELECT started_at AS s, finished_at AS f FROM syncs ORDER BY id')
        .all() as {
        s: number;
        f: number;
      }[];
      assert.equal(rows.length, 2);
      assert.ok(rows[1]!.s >= rows[0]!.f, 'the second sync started before the first finished');
    } finally {
      await s.close();
    }
  });
});

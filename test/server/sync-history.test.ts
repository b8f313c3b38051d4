/**
 * `GET /api/v1/registries/{id}/syncs` (docs/server.md, "Sync history"): the last 100 syncs newest
 * first with the replica that ran each, for admin tokens and read tokens for that registry; a token
 * that may not read the registry gets 404 (never 403), no token 401.
 */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import type { SyncHistory } from '../../server/src/api/shapes.js';
import { admin, DIALECTS, type DialectTestServer, FIXTURES, testServerOn } from './helpers.js';

const REG = 'github.com/acme/templates';
const PRIVATE = 'github.com/acme/private';

for (const dialect of DIALECTS) {
  describe(`sync history API (${dialect})`, () => {
    let s: DialectTestServer;
    let id: number;
    let privateId: number;
    before(async () => {
      s = await testServerOn(dialect, { defaultRegistry: REG });
      id = (await s.service.add({ source: FIXTURES, name: REG })).id;
      privateId = (await s.service.add({ source: FIXTURES, name: PRIVATE, visibility: 'private' })).id;
      assert.equal((await s.service.sync(id, 'manual')).status, 'succeeded');
      assert.equal((await s.service.sync(id, 'webhook')).status, 'unchanged');
      assert.equal((await s.service.sync(privateId, 'cli')).status, 'succeeded');
    });
    after(() => s.close());

    const get = (path: string, token?: string) =>
      s.app.request(path, token ? { headers: { authorization: `Bearer ${token}` } } : {});

    it('lists the syncs newest first with trigger, status, times, replica and cost', async () => {
      const res = await s.app.request(`/api/v1/registries/${id}/syncs`, { headers: admin });
      assert.equal(res.status, 200);
      const body = (await res.json()) as SyncHistory;
      assert.deepEqual(
        body.syncs.map((x) => [x.trigger, x.status]),
        [
          ['webhook', 'unchanged'],
          ['manual', 'succeeded'],
        ],
      );
      const [newest, oldest] = body.syncs;
      assert.ok(newest!.id > oldest!.id);
      for (const x of body.syncs) {
        assert.equal(x.replica, `${hostname()}:${process.pid}`);
        assert.ok(Date.parse(x.startedAt) <= Date.parse(x.finishedAt ?? ''));
        assert.equal(typeof x.apiRequests, 'number');
        assert.equal(x.error, null);
      }
      const byName = await s.app.request(`/api/v1/registries/${encodeURIComponent(REG)}/syncs`, {
        headers: admin,
      });
      assert.equal(byName.status, 200);
    });

    it('answers read tokens for that registry, 404 to other tokens, 401 without a token', async () => {
      const reader = await s.service.createToken({ admin: false, registry: PRIVATE });
      const ok = await get(`/api/v1/registries/${privateId}/syncs`, reader);
      assert.equal(ok.status, 200);
      assert.equal(((await ok.json()) as SyncHistory).syncs[0]?.trigger, 'cli');
      assert.equal((await get(`/api/v1/registries/${id}/syncs`, reader)).status, 404);
      const other = await s.service.createToken({ admin: false, registry: REG });
      const hidden = await get(`/api/v1/registries/${privateId}/syncs`, other);
      assert.equal(hidden.status, 404);
      const missing = await get('/api/v1/registries/999/syncs', other);
      assert.equal(missing.status, 404);
      assert.deepEqual(
        Object.keys(((await hidden.json()) as { error: object }).error).sort(),
        Object.keys(((await missing.json()) as { error: object }).error).sort(),
      );
      assert.equal((await get(`/api/v1/registries/${id}/syncs`)).status, 401);
      assert.equal((await get(`/api/v1/registries/${privateId}/syncs`)).status, 401);
    });

    it('keeps the registry endpoint itself unchanged', async () => {
      const res = await s.app.request(`/api/v1/registries/${id}`, { headers: admin });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { name: string }).name, REG);
    });
  });
}

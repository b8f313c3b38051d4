/**
 * Issue 25 item 16: the database stops, starts again, and hangs, under a running dm-registry (its
 * own private PostgreSQL cluster, test/support/postgres.ts). While it is down, database-backed
 * requests answer 503 DATABASE_UNAVAILABLE with Retry-After; while it hangs (connections accepted,
 * never answered), a request that needs a new connection gets the same 503 once the bounded wait
 * for one ends, instead of a 500 after ten seconds; cached resolve answers keep flowing throughout,
 * and once the database is back the same requests answer 200.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { postgresBinaries, startPostgres } from '../../support/postgres.js';
import { FIXTURES } from '../helpers.js';
import { ADMIN, startRegistry } from './process.js';

const REG = 'github.com/dm-samples/templates';

describe('hostile: the database restarts and hangs (postgres)', { skip: !postgresBinaries() }, () => {
  it('503 DATABASE_UNAVAILABLE while it is down or hangs, cached resolves flow, 200 once it is back', async () => {
    const cluster = await startPostgres();
    const db = await cluster.createDatabase('restart');
    const server = await startRegistry(['--index', FIXTURES], { db, dialect: 'postgres' });
    let frozen = false;
    try {
      const get = async (path: string, headers: Record<string, string> = {}) => {
        const res = await fetch(`${server.url}${path}`, { headers });
        return { status: res.status, body: await res.text(), retryAfter: res.headers.get('retry-after') };
      };
      const search = '/api/v1/search?q=redis';
      const resolve = `/api/v1/resolve?ref=${REG}/redis:v1.0`;
      const unavailable = (r: { status: number; body: string; retryAfter: string | null }) => {
        assert.equal(r.status, 503, r.body);
        assert.match(r.body, /DATABASE_UNAVAILABLE/);
        assert.equal(r.retryAfter, '1');
      };
      assert.equal((await get(search)).status, 200);
      assert.equal((await get(resolve)).status, 200);

      // Stopped: every database-backed request is 503, the cached resolve 200.
      cluster.pause();
      for (let i = 0; i < 5; i++) {
        unavailable(await get(search));
        assert.equal((await get(resolve)).status, 200);
      }
      cluster.resume();
      assert.equal((await get(search)).status, 200);

      // Hanging: more requests at once than the pool holds connections, so most need a new one.
      // The sync history is read from the database on every request (search may be answered
      // from the words held in memory once they are loaded, so it may or may not need it).
      const listed = JSON.parse((await get('/api/v1/registries')).body) as { registries: { id: string }[] };
      const registryId = listed.registries[0]?.id;
      assert.ok(registryId, 'the indexed registry is listed');
      const syncs = `/api/v1/registries/${encodeURIComponent(registryId)}/syncs`;
      const asAdmin = { authorization: `Bearer ${ADMIN}` };
      assert.equal((await get(syncs, asAdmin)).status, 200);
      cluster.freeze();
      frozen = true;
      const during = Promise.all([
        ...Array.from({ length: 16 }, () => get(syncs, asAdmin)),
        ...Array.from({ length: 4 }, () => get(search)),
      ]);
      assert.equal((await get(resolve)).status, 200);
      const answers = await during;
      for (const a of answers) if (a.status !== 200) unavailable(a);
      assert.ok(
        answers.slice(0, 16).some((a) => a.status === 503),
        answers.map((a) => a.status).join(' '),
      );
      cluster.thaw();
      frozen = false;
      assert.equal((await get(search)).status, 200);
      assert.equal(server.exited(), undefined, server.log().slice(-2000));
      assert.equal(await server.stop(), 0);
    } finally {
      if (frozen) cluster.thaw();
      server.dispose();
      cluster.stop();
    }
  });
});

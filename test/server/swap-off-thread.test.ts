/**
 * The index swap runs off the request thread (docs/server.md, "Indexing"): while a 10,000-version
 * swap holds the database's write lock (its transaction is open in the swap worker), the server
 * answers requests from the old index. No timing: a second connection probes the write lock
 * before and after each request. SQLite's worker thread and write lock are SQLite's own; on
 * PostgreSQL the swap is one transaction on a pooled connection, and the same promise (requests
 * and writes answered meanwhile, from the old index, nothing of the new one visible until COMMIT)
 * is checked from inside that transaction (its `midSwap` hook).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { generatedIndex } from '../../bench/generated-index.js';
import { ADMIN_ACCESS } from '../../server/src/api/access.js';
import { serviceStoreOf } from '../../server/src/store/open-store.js';
import {
  DIALECTS,
  type DialectTestServer,
  FIXTURES,
  type TestServer,
  testServer,
  testServerOn,
} from './helpers.js';

const REG = 'github.com/acme/templates';

/** Whether another connection holds the database's write lock (a transaction is open). */
function writeLocked(probe: Database.Database): boolean {
  try {
    probe.exec('BEGIN IMMEDIATE');
    probe.exec('ROLLBACK');
    return false;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return true;
    throw error;
  }
}

describe('index swap off the request thread', () => {
  let s: TestServer;
  before(() => {
    s = testServer({ defaultRegistry: REG });
  });
  after(() => s.close());

  it('answers requests while a 10,000-version swap is in its transaction', async () => {
    const small = await s.service.add({ source: FIXTURES, name: REG });
    assert.equal((await s.service.sync(small.id, 'manual')).status, 'succeeded');
    const big = await s.service.add({ source: FIXTURES, name: 'local.dm/local/big' });
    const probe = new Database(s.store.file, { timeout: 0 });
    try {
      let done = false;
      const swapped = serviceStoreOf(s.store)
        .swap(generatedIndex(10_000), { registryId: big.id, commit: 'big', etag: null, now: Date.now() })
        .finally(() => {
          done = true;
        });
      let during = 0;
      let requests = 0;
      while (!done && requests < 100_000) {
        const lockedBefore = writeLocked(probe);
        const res = await s.app.request('/api/v1/resolve?ref=redis:v1.1');
        requests++;
        assert.equal(res.status, 200);
        assert.equal(((await res.json()) as { version: string }).version, 'v1.1');
        if (lockedBefore && writeLocked(probe) && !done) during++;
        // Let the hand-over to the worker go on between requests.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const result = await swapped;
      assert.equal(result.versionCount, 10_000);
      assert.ok(
        during > 0,
        `no request was answered while the swap's transaction was open (${requests} in all)`,
      );
      // And the new index is there once it settled.
      assert.equal((await s.service.find(big.id, ADMIN_ACCESS)).versionCount, 10_000);
    } finally {
      probe.close();
    }
  });

  it('lets writes of the request thread and a second swap wait for the swap instead of failing busy', async () => {
    const other = await s.service.add({ source: FIXTURES, name: 'local.dm/local/other' });
    const probe = new Database(s.store.file, { timeout: 0 });
    const store = serviceStoreOf(s.store);
    try {
      let done = false;
      const first = store
        .swap(generatedIndex(10_000), { registryId: other.id, commit: 'one', etag: null, now: Date.now() })
        .finally(() => {
          done = true;
        });
      // Wait (answering requests) until the swap's transaction holds the write lock.
      while (!done && !writeLocked(probe)) {
        const res = await s.app.request('/api/v1/resolve?ref=redis:v1.1');
        assert.equal(res.status, 200);
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(done, false, 'the swap ended before its transaction could be observed');
      // A write of this thread (a registry added) and a second swap, both while the lock is held.
      let added = false;
      const adding = s.service.add({ source: FIXTURES, name: 'local.dm/local/later' }).then((r) => {
        added = true;
        return r;
      });
      const second = store.swap(generatedIndex(100), {
        registryId: other.id,
        commit: 'two',
        etag: null,
        now: Date.now(),
      });
      let answeredWhileWaiting = 0;
      while (!added) {
        const res = await s.app.request('/api/v1/resolve?ref=redis:v1.1');
        assert.equal(res.status, 200);
        if (!added && !done) answeredWhileWaiting++;
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.ok((await adding).id > other.id);
      assert.equal(done, true, 'the write went ahead while the swap was writing');
      assert.ok(answeredWhileWaiting > 0, 'no request was answered while the write waited');
      assert.equal((await first).versionCount, 10_000);
      assert.equal((await second).versionCount, 100);
      assert.equal((await s.service.find(other.id, ADMIN_ACCESS)).versionCount, 100);
    } finally {
      probe.close();
    }
  });
});

if (DIALECTS.includes('postgres')) {
  describe('index swap beside the requests (postgres)', () => {
    let s: DialectTestServer;
    before(async () => {
      s = await testServerOn('postgres', { defaultRegistry: REG });
    });
    after(() => s.close());

    it('answers requests and writes from the old index while a 10,000-version swap is in its transaction', async () => {
      const small = await s.service.add({ source: FIXTURES, name: REG });
      assert.equal((await s.service.sync(small.id, 'manual')).status, 'succeeded');
      const big = await s.service.add({ source: FIXTURES, name: 'local.dm/local/big' });
      let inside = 0;
      let added = 0;
      const result = await serviceStoreOf(s.store).swap(generatedIndex(10_000), {
        registryId: big.id,
        commit: 'big',
        etag: null,
        now: Date.now(),
        // Runs inside the swap's transaction, half the new index written (store/postgres/swap-index.ts).
        midSwap: async () => {
          for (let i = 0; i < 20; i++) {
            const res = await s.app.request('/api/v1/resolve?ref=redis:v1.1');
            assert.equal(res.status, 200);
            assert.equal(((await res.json()) as { version: string }).version, 'v1.1');
            inside++;
          }
          // Nothing of the half-written index is visible to another connection.
          assert.equal((await s.service.data.reads.templates(big.id)).length, 0);
          assert.equal((await s.service.find(big.id, ADMIN_ACCESS)).versionCount, 0);
          // A write of the request path goes ahead (MVCC: it does not wait for the swap).
          await s.service.add({ source: FIXTURES, name: 'local.dm/local/later' });
          added++;
        },
      });
      assert.equal(inside, 20);
      assert.equal(added, 1);
      assert.equal(result.versionCount, 10_000);
      assert.equal((await s.service.find(big.id, ADMIN_ACCESS)).versionCount, 10_000);
      assert.equal((await s.service.data.reads.templates(big.id)).length, 10_000);
    });
  });
}

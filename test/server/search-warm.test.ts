/**
 * The search's held rows follow an index swap without a search paying the load (docs/server.md,
 * "Store"), on both databases: a sync loads the new generation before it is reported done; a swap
 * made by another process is loaded by the generation watch; and a search that comes while the
 * new generation is being loaded is answered from the database, never from half of one. The
 * store's counters (`searchCounters()`: answered from the held rows or the database, generations
 * loaded) say which path answered.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { defaultSourceFactory, RegistryService } from '../../server/src/service.js';
import type { SearchCounters } from '../../server/src/store/contract.js';
import { isPostgres } from '../../server/src/store/open-store.js';
import { openPostgresStore } from '../../server/src/store/postgres/open.js';
import { openStore } from '../../server/src/store/sqlite/open.js';
import { DIALECTS, type DialectTestServer, FIXTURES, tempDir, testServerOn } from './helpers.js';

const REG = 'local.dm/acme/warm';

/** A registry source: redis from the fixtures, and `extra` templates (one version each). */
function source(extra: readonly string[]): string {
  const dir = tempDir('dm-warm-src-');
  cpSync(join(FIXTURES, 'redis'), join(dir, 'redis'), { recursive: true });
  for (const name of extra) addTemplate(dir, name);
  return dir;
}

function addTemplate(dir: string, name: string): void {
  mkdirSync(join(dir, name, 'v1.0'), { recursive: true });
  writeFileSync(join(dir, name, 'v1.0', `${name}.jinja`), 'resources: []\n');
  writeFileSync(join(dir, name, 'v1.0', 'example.yaml'), 'resources: []\n');
}

async function names(s: DialectTestServer, q: string): Promise<string[]> {
  const res = await s.app.request(`/api/v1/search?q=${encodeURIComponent(q)}&limit=50`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { hits: { name: string }[] }).hits.map((h) => h.name);
}

/** A registry of `source(extra)` added to `s` and synced: its source directory and id. */
async function synced(s: DialectTestServer, extra: readonly string[]): Promise<{ dir: string; id: number }> {
  const dir = source(extra);
  const row = await s.service.add({ source: dir, name: REG });
  assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
  return { dir, id: row.id };
}

function counters(s: DialectTestServer): SearchCounters {
  return s.service.data.reads.searchCounters();
}

/** A second process's view of the same database: its own connection and service. */
async function otherProcess(
  s: DialectTestServer,
): Promise<{ service: RegistryService; close(): Promise<void> }> {
  const store = isPostgres(s.store)
    ? await openPostgresStore(String(s.store.pool.options.connectionString), { max: 2 })
    : openStore(join(s.dir, 'registry.db'));
  const service = new RegistryService({
    store,
    sources: defaultSourceFactory({ gitCacheDir: join(s.dir, 'other-git') }),
    secretKey: Buffer.alloc(32),
  });
  return {
    service,
    async close() {
      await service.stop();
      await store.close();
    },
  };
}

for (const dialect of DIALECTS) {
  describe(`search rows after an index swap (${dialect})`, () => {
    it('the first search after a sync is answered from the rows the sync loaded', async () => {
      const s = await testServerOn(dialect);
      try {
        const { dir, id } = await synced(s, []);
        assert.deepEqual(await names(s, 'redis'), ['redis']);
        addTemplate(dir, 'zebra-cache');
        const before = counters(s);
        assert.equal((await s.service.sync(id, 'manual')).status, 'succeeded');
        const loaded = counters(s);
        assert.equal(loaded.loads, before.loads + 1, 'the sync loaded the new generation');
        assert.deepEqual(await names(s, 'zebra'), ['zebra-cache']);
        const after = counters(s);
        assert.equal(after.loads, loaded.loads, 'the search loaded nothing');
        assert.equal(after.database, before.database, 'nor asked the database in its place');
        assert.equal(after.held, loaded.held + 1);
      } finally {
        await s.close();
      }
    });

    it('a swap by another process is loaded by the generation watch, before any search', async () => {
      const s = await testServerOn(dialect);
      const other = await otherProcess(s);
      try {
        const { dir, id } = await synced(s, ['yak-store']);
        assert.deepEqual(await names(s, 'yak'), ['yak-store']);
        s.service.startScheduler(3_600_000);
        addTemplate(dir, 'zebra-cache');
        const before = counters(s);
        assert.equal((await other.service.sync(id, 'manual')).status, 'succeeded');
        // The watch polls every 200 ms; the bound is a limit for a loaded machine, not a timing.
        const limit = Date.now() + 60_000;
        while (counters(s).loads === before.loads && Date.now() < limit) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const watched = counters(s);
        assert.equal(watched.loads, before.loads + 1, 'the watch loaded the new generation');
        assert.equal(watched.held + watched.database, before.held + before.database, 'no search meanwhile');
        assert.deepEqual(await names(s, 'zebra'), ['zebra-cache']);
        const after = counters(s);
        assert.equal(after.loads, watched.loads, 'the search loaded nothing');
        assert.equal(after.held, watched.held + 1, 'it was answered from the held rows');
      } finally {
        await other.close();
        await s.close();
      }
    });

    it('a search while the new generation loads is answered from the database, whole', async () => {
      const s = await testServerOn(dialect);
      const other = await otherProcess(s);
      try {
        const { dir, id } = await synced(s, ['yak-store']);
        const heldAnswer = await names(s, 'redis yak');
        addTemplate(dir, 'zebra-cache');
        addTemplate(dir, 'yak-zebra');
        // No watch running: nothing has loaded the other process's swap when the search comes.
        assert.equal((await other.service.sync(id, 'manual')).status, 'succeeded');
        const before = counters(s);
        assert.deepEqual((await names(s, 'zebra')).sort(), ['yak-zebra', 'zebra-cache']);
        const during = counters(s);
        assert.equal(during.database, before.database + 1, 'answered from the database');
        assert.equal(during.held, before.held);
        // The same answers as the held rows give once loaded (the search started the load).
        const fromDatabase = [await names(s, 'yak'), await names(s, 'redis yak'), await names(s, 'zebra')];
        await s.service.warmSearch();
        const loaded = counters(s);
        assert.equal(loaded.loads, before.loads + 1, 'the new generation loaded once');
        const fromHeld = [await names(s, 'yak'), await names(s, 'redis yak'), await names(s, 'zebra')];
        assert.equal(counters(s).held, loaded.held + 3);
        assert.deepEqual(fromDatabase, fromHeld);
        assert.deepEqual(fromHeld[0], ['yak-store', 'yak-zebra']);
        assert.deepEqual(fromHeld[1], heldAnswer);
      } finally {
        await other.close();
        await s.close();
      }
    });
  });
}

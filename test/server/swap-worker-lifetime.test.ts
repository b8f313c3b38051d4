/**
 * The SQLite swap worker is kept between swaps (docs/server.md, "Indexing"): one per open store,
 * started at the first swap, ended when the store closes, never keeping the process alive, and
 * started again after it died — a worker that dies in a swap fails that swap with
 * INDEX_SWAP_FAILED, leaves the previous index serving and does not take the process down.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { generatedIndex } from '../../bench/generated-index.js';
import { isDmError } from '../../client/src/error.js';
import { ADMIN_ACCESS } from '../../server/src/api/access.js';
import { serviceStoreOf } from '../../server/src/store/open-store.js';
import { stopSwapWorker, swapWorkerThreadId } from '../../server/src/store/sqlite/swap-index-thread.js';
import { FIXTURES, type TestServer, tempDir, testServer } from './helpers.js';

const REG = 'github.com/acme/templates';

describe('the SQLite swap worker kept between swaps', () => {
  let s: TestServer;
  before(() => {
    s = testServer({ defaultRegistry: REG });
  });
  after(() => s.close());

  it('is started by the first swap and reused by the next ones', async () => {
    const row = await s.service.add({ source: FIXTURES, name: REG });
    assert.equal(swapWorkerThreadId(s.store), undefined);
    assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
    const first = swapWorkerThreadId(s.store);
    assert.ok(first !== undefined, 'no swap worker after a swap');
    const store = serviceStoreOf(s.store);
    for (let i = 0; i < 3; i++) {
      const result = await store.swap(generatedIndex(20 + i), {
        registryId: row.id,
        commit: `c${i}`,
        etag: null,
        now: Date.now(),
      });
      assert.equal(result.versionCount, 20 + i);
      assert.equal(swapWorkerThreadId(s.store), first, `swap ${i} started another worker`);
    }
  });

  it('fails the swap in flight when its worker dies, keeps the old index and starts another for the next swap', async () => {
    const row = await s.service.add({ source: FIXTURES, name: 'local.dm/local/dies' });
    const store = serviceStoreOf(s.store);
    const meta = { registryId: row.id, etag: null, now: Date.now() };
    assert.equal((await store.swap(generatedIndex(30), { ...meta, commit: 'kept' })).versionCount, 30);
    const dead = swapWorkerThreadId(s.store);
    // The worker dies inside the swap's transaction (its midSwap hook runs on this thread while
    // the worker waits): terminated as a crash would end it.
    let stopping: Promise<void> | undefined;
    const failed = await store
      .swap(generatedIndex(40), {
        ...meta,
        commit: 'lost',
        midSwap: () => {
          stopping = stopSwapWorker(s.store);
        },
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    await stopping;
    assert.ok(isDmError(failed), `the swap did not fail with a DmError: ${String(failed)}`);
    assert.equal(failed.code, 'INDEX_SWAP_FAILED');
    assert.match(failed.message, /swap worker .* stopped .* before the swap committed/);
    // Nothing of the failed swap was committed.
    const kept = await s.service.find(row.id, ADMIN_ACCESS);
    assert.equal(kept.versionCount, 30);
    assert.equal(kept.commit, 'kept');
    // The next swap starts another worker and succeeds; this process is still here to see it.
    assert.equal((await store.swap(generatedIndex(50), { ...meta, commit: 'next' })).versionCount, 50);
    const next = swapWorkerThreadId(s.store);
    assert.ok(next !== undefined && next !== dead, 'the next swap did not start another worker');
    assert.equal((await s.service.find(row.id, ADMIN_ACCESS)).commit, 'next');
  });

  it('never keeps a process alive, and ends when the store is closed', () => {
    const dir = tempDir('dm-swap-worker-');
    try {
      const dist = (p: string) => pathToFileURL(join(process.cwd(), 'dist', p)).href;
      // A process that swaps twice and never closes its store must still exit on its own; one that
      // closes its store has no swap worker left.
      const script = join(dir, 'swap.mjs');
      writeFileSync(
        script,
        `import { openStore } from ${JSON.stringify(dist('server/src/store/sqlite/open.js'))};
import { serviceStoreOf } from ${JSON.stringify(dist('server/src/store/open-store.js'))};
import { swapWorkerThreadId } from ${JSON.stringify(dist('server/src/store/sqlite/swap-index-thread.js'))};
import { generatedIndex } from ${JSON.stringify(dist('bench/generated-index.js'))};
const store = openStore(${JSON.stringify(dir)} + '/' + process.argv[2] + '.db');
const service = serviceStoreOf(store);
const row = await service.registries.insert({ name: 'local.dm/local/x', sourceType: 'directory', source: '/nowhere', createdAt: Date.now() });
for (const n of [10, 11]) await service.swap(generatedIndex(n), { registryId: row.id, commit: String(n), etag: null, now: Date.now() });
if (process.argv[2] === 'close') {
  store.close();
  await new Promise((resolve) => setTimeout(resolve, 50));
  console.log(swapWorkerThreadId(store) === undefined ? 'closed' : 'still there');
} else console.log('swapped');
`,
      );
      for (const mode of ['open', 'close']) {
        const run = spawnSync(process.execPath, [script, mode], { encoding: 'utf8', timeout: 60_000 });
        assert.equal(
          run.error,
          undefined,
          `${mode}: ${String(run.error)} (the process did not exit by itself)`,
        );
        assert.equal(run.status, 0, `${mode}: ${run.stderr}`);
        assert.equal(run.stdout.trim(), mode === 'open' ? 'swapped' : 'closed');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

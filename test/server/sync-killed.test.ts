/**
 * A sync killed mid-way (SIGKILL inside the swap transaction) leaves the previous index serving
 * and the database consistent; the next start marks the sync interrupted and a new sync succeeds.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ADMIN_ACCESS } from '../../server/src/api/access.js';
import { openStore } from '../../server/src/store/db.js';
import { FIXTURES, tempDir } from './helpers.js';

const everyone = ADMIN_ACCESS;

describe('killed sync', () => {
  it('a sync killed inside its swap transaction leaves the old index serving and the database consistent', async () => {
    const dir = tempDir();
    try {
      const registryDir = join(dir, 'registry');
      cpSync(FIXTURES, registryDir, { recursive: true });
      const dbFile = join(dir, 'data', 'registry.db');

      // The first index, in this process.
      const { createApp } = await import('../../server/src/api/app.js');
      const { defaultSourceFactory } = await import('../../server/src/service.js');
      const { silentLogger } = await import('../../server/src/log.js');
      const { randomBytes } = await import('node:crypto');
      const open = () => {
        const store = openStore(dbFile);
        const app = createApp({
          store,
          sources: defaultSourceFactory({ gitCacheDir: join(dir, 'git') }),
          secretKey: randomBytes(32),
          logger: silentLogger,
          accessLog: false,
        });
        return { store, ...app };
      };
      let first = open();
      const row = await first.service.add({ source: registryDir, name: 'github.com/acme/templates' });
      assert.equal(row.id, 1);
      assert.equal((await first.service.sync(row.id, 'manual')).status, 'succeeded');
      const before = await first.service.catalog.resolve('github.com/acme/templates/redis:v1.1', everyone);
      const countsBefore = await first.service.find(1, everyone);
      first.store.close();

      // Change the registry, then sync it in a child process killed mid-swap.
      writeFileSync(join(registryDir, 'redis', 'v1.1', 'example.yaml'), 'resources: []\n');
      const child = spawn(process.execPath, [join(import.meta.dirname, 'sync-child.js'), dbFile], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('mid-swap')) {
            child.kill('SIGKILL');
            resolve();
          }
          if (out.includes('finished'))
            reject(new Error(`the child finished its sync; it should have been killed: ${out}`));
        });
        child.on('exit', () => resolve());
      });
      await new Promise((r) => child.on('close', r));
      assert.equal(child.signalCode, 'SIGKILL');

      // Restart: consistent database, old index serving, the sync marked interrupted.
      first = open();
      assert.equal(first.store.sqlite.pragma('integrity_check', { simple: true }), 'ok');
      assert.deepEqual(first.store.sqlite.pragma('foreign_key_check'), []);
      const fts = first.store.sqlite.prepare('SELECT count(*) AS n FROM templates_fts').get() as {
        n: number;
      };
      const templates = first.store.sqlite.prepare('SELECT count(*) AS n FROM templates').get() as {
        n: number;
      };
      assert.equal(fts.n, templates.n);
      const served = await first.service.catalog.resolve('github.com/acme/templates/redis:v1.1', everyone);
      assert.equal(served.digest, before.digest);
      const countsAfter = await first.service.find(1, everyone);
      assert.equal(countsAfter.versionCount, countsBefore.versionCount);
      assert.equal(countsAfter.commit, countsBefore.commit);
      const syncs = first.store.sqlite.prepare('SELECT status FROM syncs ORDER BY id').pluck().all();
      assert.deepEqual(syncs, ['succeeded', 'interrupted']);
      assert.equal(countsAfter.lastSyncStatus, 'interrupted');

      // And the next sync swaps the new commit in (the edited published version quarantined,
      // docs/integrity-store.md).
      assert.equal((await first.service.sync(1, 'manual')).status, 'succeeded');
      assert.notEqual((await first.service.find(1, everyone)).commit, countsBefore.commit);
      const quarantined = await first.service.data.reads.openQuarantines(1);
      assert.equal(quarantined.length, 1);
      first.store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Issue 15 item 13: a process killed right after the swap commits. The sync's outcome is recorded
 * in the swap transaction, so the restarted server serves the new index and says `succeeded`
 * (it used to say `interrupted` next to the new index).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ADMIN_ACCESS } from '../../../server/src/api/access.js';
import { defaultSourceFactory, RegistryService } from '../../../server/src/service.js';
import { openStore } from '../../../server/src/store/db.js';
import { FIXTURES, tempDir } from '../helpers.js';

const everyone = ADMIN_ACCESS;

describe('hostile: killed right after the swap', () => {
  it('the new index and its succeeded status survive together', async () => {
    const dir = tempDir();
    try {
      const registryDir = join(dir, 'registry');
      cpSync(FIXTURES, registryDir, { recursive: true });
      const dbFile = join(dir, 'data', 'registry.db');
      const open = () => {
        const store = openStore(dbFile);
        const service = new RegistryService({
          store,
          sources: defaultSourceFactory({ gitCacheDir: join(dir, 'git') }),
          secretKey: randomBytes(32),
        });
        return { store, service };
      };
      let first = open();
      const row = await first.service.add({ source: registryDir, name: 'github.com/acme/templates' });
      assert.equal(row.id, 1);
      assert.equal((await first.service.sync(row.id, 'manual')).status, 'succeeded');
      const before = await first.service.catalog.resolve('github.com/acme/templates/redis:v1.1', everyone);
      first.store.close();

      // A new version (an edit of a published one would be quarantined, docs/integrity-store.md).
      cpSync(join(registryDir, 'redis', 'v1.1'), join(registryDir, 'redis', 'v1.9'), { recursive: true });
      writeFileSync(join(registryDir, 'redis', 'v1.9', 'example.yaml'), 'resources: []\n');
      const child = spawn(process.execPath, [join(import.meta.dirname, 'after-swap-child.js'), dbFile], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('after-swap')) {
            child.kill('SIGKILL');
            resolve();
          }
          if (out.includes('finished'))
            reject(new Error(`the child finished; it should have been killed: ${out}`));
        });
        child.on('exit', () => resolve());
      });
      await new Promise((r) => child.on('close', r));
      assert.equal(child.signalCode, 'SIGKILL');

      first = open();
      const served = await first.service.catalog.resolve('github.com/acme/templates/redis:v1.9', everyone);
      assert.equal(served.version, 'v1.9', 'the new index is not serving');
      assert.notEqual(served.digest, before.digest);
      const info = await first.service.info(await first.service.find(1, everyone), { viewer: everyone });
      assert.equal(info.sync.status, 'succeeded');
      const last = first.store.sqlite.prepare('SELECT status FROM syncs ORDER BY id DESC LIMIT 1').get() as {
        status: string;
      };
      assert.equal(last.status, 'succeeded');
      first.store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

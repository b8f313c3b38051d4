/**
 * Issue 15 item 2: a sync that fails before it starts (its registry deleted meanwhile, its
 * credential unreadable after a key change) ends as a failed sync status and a log line, never as
 * an unhandled rejection: for each trigger (a new registry, `?wait=false`, the scheduler, a queued
 * follow-up), against the real service and a real dm-registry process.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createApp } from '../../../server/src/api/app.js';
import { silentLogger } from '../../../server/src/log.js';
import { defaultSourceFactory } from '../../../server/src/service.js';
import { DIALECTS, FIXTURES, tempDir, testServerOn } from '../helpers.js';
import { ADMIN, startRegistry } from './process.js';

const auth = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

interface Info {
  sync: { status: string | null; error: string | null };
}

async function waitForSync(url: string, id: number, status: string): Promise<Info> {
  // Bounded polling of the server's own status (no sleep-based timing): at most 600 reads.
  for (let i = 0; i < 600; i++) {
    const res = await fetch(`${url}/api/v1/registries/${id}`, { headers: auth });
    assert.equal(res.status, 200);
    const info = (await res.json()) as Info;
    if (info.sync.status === status) return info;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`registry ${id} never reached sync status ${status}`);
}

for (const dialect of DIALECTS) {
  describe(`hostile: background syncs that fail before they start (${dialect})`, () => {
    it('a credential unreadable after a key change fails the sync of a new registry and of ?wait=false; the server lives', async () => {
      const dir = tempDir('dm-hostile-key-');
      const keyA = randomBytes(32).toString('base64');
      const keyB = randomBytes(32).toString('base64');
      let server = await startRegistry([], { dir, dialect, env: { DM_REGISTRY_SECRET_KEY: keyA } });
      try {
        const cred = await fetch(`${server.url}/api/v1/credentials/deploy-key`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ secret: 'ghp_secret' }),
        });
        assert.equal(cred.status, 204);
        assert.equal(await server.stop(), 0);
        server = await startRegistry([], {
          dir,
          dialect,
          db: server.db,
          env: { DM_REGISTRY_SECRET_KEY: keyB },
        });
        // Trigger: a new registry (its first sync runs in the background).
        const added = await fetch(`${server.url}/api/v1/registries`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ source: FIXTURES, name: 'local.dm/local/keyed', credential: 'deploy-key' }),
        });
        assert.equal(added.status, 201, await added.clone().text());
        const { id } = (await added.json()) as { id: number };
        const first = await waitForSync(server.url, id, 'failed');
        assert.match(first.sync.error ?? '', /SECRET_UNREADABLE/);
        // Trigger: a manual sync without waiting.
        const queued = await fetch(`${server.url}/api/v1/registries/${id}/sync?wait=false`, {
          method: 'POST',
          headers: auth,
        });
        assert.equal(queued.status, 202);
        // A waited sync answers after the queued one: both have failed by then.
        const waited = await fetch(`${server.url}/api/v1/registries/${id}/sync`, {
          method: 'POST',
          headers: auth,
        });
        assert.equal(waited.status, 200);
        assert.equal(((await waited.json()) as { status: string }).status, 'failed');
        assert.equal(server.exited(), undefined, server.log());
        assert.match(server.log(), /"msg":"sync finished".*SECRET_UNREADABLE/);
        assert.doesNotMatch(server.log(), /unhandled| {4}at /);
        assert.equal(await server.stop(), 0);
      } finally {
        server.dispose();
      }
    });

    it('a queued follow-up sync of a registry deleted meanwhile ends failed, not as a rejection', async () => {
      const s = await testServerOn(dialect);
      try {
        const row = await s.service.add({ source: FIXTURES, name: 'local.dm/local/doomed' });
        let release!: () => void;
        const held = new Promise<void>((r) => {
          release = r;
        });
        let reached!: () => void;
        const atSwap = new Promise<void>((r) => {
          reached = r;
        });
        const first = s.service.sync(row.id, 'manual', {
          beforeSwap: async () => {
            reached();
            await held;
          },
        });
        await atSwap;
        const followUp = s.service.sync(row.id, 'webhook');
        await s.service.remove(row.id);
        release();
        assert.equal((await first).status, 'failed');
        const outcome = await followUp;
        assert.equal(outcome.status, 'failed');
        assert.equal(outcome.error?.code, 'REGISTRY_NOT_FOUND');
      } finally {
        await s.close();
      }
    });

    it('the scheduler survives a registry whose credential cannot be decrypted', async () => {
      const s = await testServerOn(dialect);
      try {
        await s.service.storeCredential('old', 'secret');
        const row = await s.service.add({
          source: FIXTURES,
          name: 'local.dm/local/sched',
          credential: 'old',
          interval: 60,
        });
        // The same database opened with another key, as after a key change.
        const other = createApp({
          store: s.store,
          sources: defaultSourceFactory({ gitCacheDir: tempDir() }),
          secretKey: randomBytes(32),
          logger: silentLogger,
          accessLog: false,
        });
        other.service.startScheduler(10);
        try {
          for (let i = 0; i < 600; i++) {
            const info = await other.service.info((await other.service.all()).find((r) => r.id === row.id)!, {
              viewer: { admin: true },
            });
            if (info.sync.status === 'failed') {
              assert.match(info.sync.error ?? '', /SECRET_UNREADABLE/);
              return;
            }
            await new Promise((r) => setTimeout(r, 20));
          }
          assert.fail('the scheduled sync never failed');
        } finally {
          await other.service.stop();
        }
      } finally {
        await s.close();
      }
    });
  });
}

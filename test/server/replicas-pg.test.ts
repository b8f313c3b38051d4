/**
 * Coordination of replicas sharing PostgreSQL (docs/server.md, "Several replicas"), on a private
 * cluster with one pool per replica: the sync lease lets one replica sync a registry at a time
 * under 100 concurrent triggers and coalesces them; a holder that stops renewing (killed) loses the
 * lease to another replica once it expires; an index swapped in on one replica is reported by the
 * generation watch on another. Registered where PostgreSQL is installed (always in CI).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GenerationWatch } from '../../server/src/store/generation-watch.js';
import { serviceStoreOf } from '../../server/src/store/open-store.js';
import { openPostgresStore, type PostgresStore } from '../../server/src/store/postgres/open.js';
import { SyncLeases } from '../../server/src/store/postgres/sync-lease.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';
import { FIXTURES } from './helpers.js';
import { indexDirectoryPg } from './pg-index.js';

if (postgresBinaries()) {
  describe('replicas on one PostgreSQL', () => {
    let cluster: PostgresCluster;
    let replicas: PostgresStore[] = [];
    const registryIds: number[] = [];

    before(async () => {
      cluster = await startPostgres();
      const url = await cluster.createDatabase('replicas');
      replicas = await Promise.all([1, 2, 3].map(() => openPostgresStore(url, { max: 8 })));
      for (const name of ['github.com/a/one', 'github.com/a/two']) {
        const r = await replicas[0]!.pool.query<{ id: number }>(
          `INSERT INTO registries (name, source_type, source, created_at) VALUES ($1, 'directory', $2, 0) RETURNING id`,
          [name, FIXTURES],
        );
        registryIds.push(r.rows[0]!.id);
      }
    });
    after(async () => {
      await Promise.all(replicas.map((r) => r.close()));
      cluster?.stop();
    });

    it('100 concurrent triggers across three replicas: one sync per registry at a time, coalesced', async () => {
      const leases = replicas.map((r, i) => new SyncLeases(r, `replica-${i}`, { ttlMs: 60_000 }));
      const running = new Map<number, string>();
      const overlaps: string[] = [];
      const rounds = new Map<number, number>(registryIds.map((id) => [id, 0]));
      const sync = (registryId: number, holder: string) => async () => {
        const other = running.get(registryId);
        if (other !== undefined) overlaps.push(`${registryId}: ${holder} while ${other}`);
        running.set(registryId, holder);
        rounds.set(registryId, (rounds.get(registryId) ?? 0) + 1);
        // Real work against the database between start and end, so triggers do overlap.
        await replicas[0]!.pool.query('SELECT count(*) FROM registries');
        await new Promise((resolve) => setImmediate(resolve));
        running.delete(registryId);
      };
      const triggers = Array.from({ length: 100 }, (_, i) => {
        const lease = leases[i % 3]!;
        const registryId = registryIds[i % 2]!;
        return lease.run(registryId, sync(registryId, lease.holder));
      });
      const ran = await Promise.all(triggers);
      assert.deepEqual(overlaps, []);
      for (const id of registryIds) {
        const n = rounds.get(id) ?? 0;
        assert.ok(n >= 1 && n <= 50, `registry ${id}: ${n} syncs for 50 triggers`);
      }
      assert.equal(
        ran.reduce((a, b) => a + b, 0),
        [...rounds.values()].reduce((a, b) => a + b, 0),
      );
      const left = await replicas[0]!.pool.query('SELECT * FROM sync_leases');
      assert.equal(left.rowCount, 0, 'every lease released');
    });

    it('a trigger while another replica syncs is run by that replica (coalesced), not dropped', async () => {
      const [a, b] = [new SyncLeases(replicas[0]!, 'a'), new SyncLeases(replicas[1]!, 'b')];
      const id = registryIds[0]!;
      let rounds = 0;
      let triggeredDuringSync: Promise<number> | undefined;
      const ranByA = await a.run(id, async () => {
        rounds++;
        if (rounds === 1) triggeredDuringSync = b.run(id, async () => assert.fail('b must not sync'));
        if (rounds === 1) assert.equal(await triggeredDuringSync, 0);
      });
      assert.equal(ranByA, 2, 'the pending trigger made a run one more round');
      assert.equal(rounds, 2);
    });

    it('a holder that stops renewing (killed) loses the lease to another replica once it expires', async () => {
      const id = registryIds[1]!;
      const dead = new SyncLeases(replicas[0]!, 'dead', { ttlMs: 200 });
      const live = new SyncLeases(replicas[1]!, 'live', { ttlMs: 60_000 });
      assert.equal(await dead.acquire(id), true);
      // No heartbeat and no release from here on, as after kill -9.
      let took = false;
      for (let i = 0; i < 600 && !took; i++) {
        took = await live.acquire(id);
        if (!took) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(took, 'the live replica took the expired lease');
      assert.equal(await dead.renew(id), false, 'the old holder learns it lost the lease');
      assert.equal(await live.release(id), false);
    });

    it('an index swapped in on one replica is reported by the generation watch on another', async () => {
      const id = registryIds[0]!;
      const seen: number[][] = [];
      let resolveSeen: (() => void) | undefined;
      const reported = new Promise<void>((resolve) => {
        resolveSeen = resolve;
      });
      const watch = new GenerationWatch(serviceStoreOf(replicas[2]!).registries.generations, (ids) => {
        seen.push(ids);
        if (ids.includes(id)) resolveSeen?.();
      });
      await watch.start();
      try {
        await indexDirectoryPg(replicas[0]!, id, FIXTURES);
        await reported;
        assert.deepEqual(seen.flat(), [id]);
      } finally {
        watch.stop();
      }
    });
  });
} else {
  process.stdout.write('# PostgreSQL is not installed here: the replica coordination tests are not run\n');
}

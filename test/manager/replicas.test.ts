/**
 * The Deployment Manager on replicas sharing PostgreSQL (docs/manager.md, "Several replicas"): two
 * servers (one pool each, distinct replica names) on one private cluster, the real kubectl against
 * the Kubernetes stand-in. A deployment created on one is seen on the other; changes of one
 * deployment sent to both at once never overlap; an operation left running by a replica whose lease
 * expired is marked interrupted by the other, the previous manifest current, and the deployment
 * applies again.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createApp, type RegistryApp } from '../../server/src/api/app.js';
import { silentLogger } from '../../server/src/log.js';
import { createManagerToken } from '../../server/src/manager/manager-tokens.js';
import { defaultSourceFactory } from '../../server/src/service.js';
import { openPostgresStore, type PostgresStore } from '../../server/src/store/postgres/open.js';
import { type KubeStandin, startKubeStandin } from '../kube-standin/server.js';
import { ADMIN_TOKEN, tempDir } from '../server/helpers.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';
import { APP, APP_WITHOUT_EXTRA } from './fixtures.js';

type Json = Record<string, unknown>;

if (postgresBinaries()) {
  describe('Deployment Manager on two replicas sharing PostgreSQL', () => {
    let cluster: PostgresCluster;
    let standin: KubeStandin;
    const stores: PostgresStore[] = [];
    const servers: RegistryApp[] = [];
    let token: string;

    before(async () => {
      cluster = await startPostgres();
      standin = await startKubeStandin();
      const url = await cluster.createDatabase('manager_replicas');
      const dir = tempDir('dm-manager-replicas-');
      const kubeconfig = standin.writeKubeconfig(dir, { namespace: 'default' });
      for (const name of ['replica-a', 'replica-b']) {
        const store = await openPostgresStore(url, { max: 4 });
        stores.push(store);
        servers.push(
          createApp({
            store,
            sources: defaultSourceFactory({ gitCacheDir: join(dir, name, 'git') }),
            secretKey: randomBytes(32),
            adminTokens: [ADMIN_TOKEN],
            logger: silentLogger,
            accessLog: false,
            manager: {
              clusters: { prod: kubeconfig },
              stateFile: join(dir, name, 'unused.db'),
              dataDir: join(dir, name, 'manager'),
              replica: name,
              leaseTtlMs: 60_000,
            },
          }),
        );
      }
      token = await createManagerToken(stores[0]!, join(dir, 'registry.db'), 'deploy', ['prod/default']);
    });
    after(async () => {
      for (const s of servers) {
        await s.manager?.idle();
        await s.manager?.close();
        await s.service.stop();
      }
      for (const s of stores) await s.close();
      await standin.close();
      await cluster.stop();
    });

    const call = async (replica: number, method: string, path: string, body?: unknown) => {
      const res = await servers[replica]!.app.request(path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const content = (v: string) => ({
      configuration: {
        content: APP_WITHOUT_EXTRA.replace('dbHost:', `v: "${v}"\n      dbHost:`),
        imports: [],
      },
    });

    it('a deployment created on one replica is seen on the other, with its manifest and token', async () => {
      const created = await call(0, 'POST', '/api/v1/deployments?wait=true', {
        name: 'app',
        cluster: 'prod',
        namespace: 'default',
        configuration: { content: APP, imports: [] },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.body.status, 'done', JSON.stringify(created.body));
      const seen = await call(1, 'GET', '/api/v1/deployments/app');
      assert.equal(seen.status, 200, JSON.stringify(seen.body));
      assert.equal(seen.body.state, 'deployed');
      assert.equal(seen.body.latestManifest, 'app-1');
      const op = await call(1, 'GET', `/api/v1/operations/${created.body.id}`);
      assert.equal(op.body.status, 'done');
      const again = await call(1, 'POST', '/api/v1/deployments', {
        name: 'app',
        cluster: 'prod',
        namespace: 'default',
        configuration: { content: APP, imports: [] },
      });
      assert.equal(again.status, 409, JSON.stringify(again.body));
    });

    it('changes of one deployment sent to both replicas at once run one after the other', async () => {
      const sent = await Promise.all([
        call(0, 'PUT', '/api/v1/deployments/app', content('a1')),
        call(1, 'PUT', '/api/v1/deployments/app', content('b1')),
        call(0, 'PUT', '/api/v1/deployments/app', content('a2')),
        call(1, 'PUT', '/api/v1/deployments/app', content('b2')),
      ]);
      for (const r of sent) assert.equal(r.status, 202, JSON.stringify(r.body));
      await Promise.all(sent.map((r, i) => servers[i % 2]!.manager!.waitFor(String(r.body.id))));
      const ops = await Promise.all(sent.map((r) => call(0, 'GET', `/api/v1/operations/${r.body.id}`)));
      for (const o of ops) assert.equal(o.body.status, 'done', JSON.stringify(o.body));
      const spans = ops
        .map((o) => ({
          start: Date.parse(String(o.body.startedAt)),
          end: Date.parse(String(o.body.finishedAt)),
        }))
        .sort((x, y) => x.start - y.start);
      for (let i = 1; i < spans.length; i++) {
        assert.ok(spans[i]!.start >= spans[i - 1]!.end, `operations overlap: ${JSON.stringify(spans)}`);
      }
      const manifests = new Set(ops.map((o) => o.body.manifest));
      assert.deepEqual([...manifests].sort(), ['app-2', 'app-3', 'app-4', 'app-5']);
      const d = await call(1, 'GET', '/api/v1/deployments/app');
      assert.equal(d.body.latestManifest, 'app-5');
      assert.equal(d.body.state, 'deployed');
    });

    it('an operation left running by a replica whose lease expired is interrupted by the other', async () => {
      // What a replica killed mid-apply leaves: its operation running, its manifest applying, the
      // deployment pointing at it, and a lease nobody renews (expired).
      const pool = stores[0]!.pool;
      const manager = servers[0]!.manager!;
      const op = await manager.operations.create({
        deployment: 'app',
        action: 'update',
        actor: 'admin',
        cluster: 'prod',
        namespace: 'default',
      });
      const begun = await manager.store.beginManifest({
        deployment: 'app',
        action: 'update',
        inputConfig: {},
        expandedConfig: { resources: [] },
        layout: { resources: [] },
        references: [],
        target: { namespace: 'default' },
        resources: [],
        instances: [],
        lockOwner: '1@gone-host',
        isAlive: () => true,
      });
      await manager.operations.start(op.id, begun.name, 'app-5');
      await pool.query(
        `INSERT INTO deployment_leases (deployment, holder, operation, expires_at) VALUES ('app', 'replica-gone', $1, 0)`,
        [op.id],
      );
      const next = await call(1, 'PUT', '/api/v1/deployments/app?wait=true', content('after'));
      assert.equal(next.body.status, 'done', JSON.stringify(next.body));
      const stale = await call(0, 'GET', `/api/v1/operations/${op.id}`);
      assert.equal(stale.body.status, 'interrupted', JSON.stringify(stale.body));
      const manifest = await call(1, 'GET', `/api/v1/deployments/app/manifests/${begun.name}`);
      assert.equal(manifest.body.status, 'failed');
      assert.equal(next.body.manifest, 'app-7');
      const leases = await pool.query('SELECT count(*)::int AS n FROM deployment_leases');
      assert.equal(leases.rows[0].n, 0);
    });
  });
}

/**
 * The Deployment Manager on two real `dm-registry start --cluster` processes sharing PostgreSQL
 * (docs/manager.md, "Several replicas"), the real kubectl against the Kubernetes stand-in: the
 * replica applying a change is killed with SIGKILL mid-apply, another change queued behind it; the
 * other replica notices its expired lease (its sweep) and marks the operation interrupted, the
 * previous manifest current, then the queued one (its heartbeat stopped), and the deployment
 * applies again through it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type KubeStandin, startKubeStandin } from '../kube-standin/server.js';
import { tempDir } from '../server/helpers.js';
import { BIN, type RegistryProcess, startRegistry } from '../server/hostile/process.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';
import { APP_WITHOUT_EXTRA } from './fixtures.js';

type Json = Record<string, unknown>;

const WITH_WORKLOAD = `${APP_WITHOUT_EXTRA}- name: web
  type: apps/v1/Deployment
  properties:
    spec:
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: nginx}]}
`;

if (postgresBinaries()) {
  describe('Deployment Manager replicas as processes: one killed mid-apply', () => {
    let cluster: PostgresCluster;
    let standin: KubeStandin;
    let dir: string;
    let db: string;
    let token: string;
    const replicas: RegistryProcess[] = [];
    // A short lease: the survivor notices the dead replica within about a second.
    const env = {
      DM_REGISTRY_SECRET_KEY: Buffer.alloc(32, 5).toString('base64'),
      DM_REGISTRY_SYNC_LEASE_TTL_MS: '1000',
    };

    before(async () => {
      cluster = await startPostgres();
      standin = await startKubeStandin();
      db = await cluster.createDatabase('manager_kill');
      dir = tempDir('dm-manager-kill-');
      const kubeconfig = standin.writeKubeconfig(dir, { namespace: 'default' });
      const created = spawnSync(
        process.execPath,
        [BIN, 'token', 'create', '--deploy', 'prod/default', '--db', db],
        { encoding: 'utf8', cwd: dir, env: { ...process.env, ...env } },
      );
      assert.equal(created.status, 0, created.stderr);
      token = created.stdout.trim();
      for (const name of ['a', 'b']) {
        const home = join(dir, name);
        mkdirSync(home);
        replicas.push(
          await startRegistry(['--cluster', `prod=${kubeconfig}`], { db, dir: home, cwd: home, env }),
        );
      }
    });
    after(async () => {
      for (const r of replicas) r.dispose();
      await standin.close();
      await cluster.stop();
    });

    const api = async (replica: number, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${replicas[replica]!.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };

    it('the survivor marks the dead replica’s operation interrupted; the deployment applies again', async () => {
      const created = await api(0, 'POST', '/api/v1/deployments?wait=true', {
        name: 'app',
        cluster: 'prod',
        namespace: 'default',
        configuration: { content: APP_WITHOUT_EXTRA, imports: [] },
      });
      assert.equal(created.body.status, 'done', JSON.stringify(created.body));

      standin.setReadyByDefault(false);
      const accepted = await api(0, 'PUT', '/api/v1/deployments/app', {
        configuration: { content: WITH_WORKLOAD, imports: [] },
        waitForReady: true,
        timeoutSeconds: 600,
      });
      assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
      // Until the workload is applied and replica a waits for it to become ready (read on b).
      for (;;) {
        const op = await api(1, 'GET', `/api/v1/operations/${accepted.body.id}`);
        if (op.body.status === 'running' && standin.get('apps/v1', 'Deployment', 'default', 'web')) break;
        assert.ok(['pending', 'running'].includes(String(op.body.status)), JSON.stringify(op.body));
        await new Promise((r) => setTimeout(r, 100));
      }
      // A second change queued on replica a behind the first: pending when a dies.
      const queued = await api(0, 'PUT', '/api/v1/deployments/app', {
        configuration: { content: APP_WITHOUT_EXTRA, imports: [] },
      });
      assert.equal(queued.body.status, 'pending', JSON.stringify(queued.body));
      replicas[0]!.child.kill('SIGKILL');
      await replicas[0]!.exit;

      // Replica b's sweep notices the expired lease (bounded: 60 s).
      const deadline = Date.now() + 60_000;
      let op: { body: Json };
      for (;;) {
        op = await api(1, 'GET', `/api/v1/operations/${accepted.body.id}`);
        if (op.body.status !== 'running' || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(op.body.status, 'interrupted', JSON.stringify(op.body));
      const d = await api(1, 'GET', '/api/v1/deployments/app');
      assert.equal(d.body.latestManifest, 'app-1', 'the previous manifest is current again');
      assert.equal(d.body.state, 'failed');
      const m2 = await api(1, 'GET', '/api/v1/deployments/app/manifests/app-2');
      assert.equal(m2.body.status, 'failed');
      assert.match(String(m2.body.error), /interrupted/);
      // The queued one: its heartbeat stopped with its replica (three lease lifetimes).
      for (;;) {
        const q = await api(1, 'GET', `/api/v1/operations/${queued.body.id}`);
        if (q.body.status !== 'pending' || Date.now() > deadline) {
          assert.equal(q.body.status, 'interrupted', JSON.stringify(q.body));
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }

      standin.setReadyByDefault(true);
      standin.setReady('Deployment', 'default', 'web', true);
      const again = await api(1, 'PUT', '/api/v1/deployments/app?wait=true', {
        configuration: { content: WITH_WORKLOAD, imports: [] },
        waitForReady: true,
        timeoutSeconds: 120,
      });
      assert.equal(again.body.status, 'done', JSON.stringify(again.body));
      assert.equal(again.body.manifest, 'app-3');
    });
  });
}

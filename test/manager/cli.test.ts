/**
 * The Deployment Manager through real processes (docs/manager.md): `dm-registry start --cluster`,
 * `dm-registry token create --deploy`, `dm --manager-url` for deploy (create, update with prune),
 * deployments, manifests, types and delete, with the real kubectl against the stand-in; and a
 * dry run through the service (the local dry run's plan, nothing applied); a
 * server killed with SIGKILL in the middle of an apply, restarted: the operation is interrupted,
 * the previous manifest current, and the deployment applies again. And the files a configuration's
 * expansion reads beyond its `imports:` (a schema's imports, an import by URL) reach the service.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type KubeStandin, startKubeStandin } from '../kube-standin/server.js';
import { loopbackCertificate } from '../kube-standin/tls.js';
import { tempDir } from '../server/helpers.js';
import { freePort } from '../support/registry-server.js';
import { APP, APP_WITHOUT_EXTRA } from './fixtures.js';

const root = new URL('../../../', import.meta.url).pathname;
const REGISTRY_BIN = join(root, 'bin', 'dm-registry.js');
const DM_BIN = join(root, 'bin', 'dm.js');

type Json = Record<string, unknown>;

describe('dm --manager-url and dm-registry --cluster (real processes)', () => {
  let standin: KubeStandin;
  let dir: string;
  let db: string;
  let kubeconfig: string;
  let port: number;
  let server: ChildProcess | undefined;
  let token: string;
  const url = () => `http://127.0.0.1:${port}`;

  const startServer = async () => {
    const child = spawn(
      process.execPath,
      [REGISTRY_BIN, 'start', '--port', String(port), '--db', db, '--cluster', `prod=${kubeconfig}`],
      {
        env: { ...process.env, DM_ADMIN_TOKEN: 'admin-token' },
      },
    );
    let stderr = '';
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('"msg":"listening"')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`dm-registry exited ${code}: ${stderr}`)));
    });
    server = child;
  };
  const stopServer = async (signal: NodeJS.Signals) => {
    const child = server!;
    server = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.on('exit', () => resolve());
      child.kill(signal);
    });
  };
  // Asynchronous: the stand-in answers kubectl from this process's event loop.
  const run = (args: string[], env: Record<string, string | undefined>, cwd = dir) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, args, { cwd, env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
  const dm = (args: string[]) =>
    run([DM_BIN, '--manager-url', url(), ...args], {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, 'cfg'),
      DM_MANAGER_TOKEN: token,
      NO_COLOR: '1',
    });
  const api = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${url()}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  before(async () => {
    standin = await startKubeStandin();
    dir = tempDir('dm-manager-cli-');
    db = join(dir, 'data', 'registry.db');
    kubeconfig = standin.writeKubeconfig(dir, { namespace: 'default' });
    port = await freePort();
    const created = spawnSync(
      process.execPath,
      [REGISTRY_BIN, 'token', 'create', '--deploy', 'prod/default', '--db', db],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(created.status, 0, created.stderr);
    token = created.stdout.trim();
    assert.match(token, /^\S{20,}$/);
    await startServer();
  });
  after(async () => {
    if (server) await stopServer('SIGTERM');
    await standin.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('dm deploy creates and updates with prune through the service, with the local output and exit codes', async () => {
    writeFileSync(join(dir, 'app.yaml'), APP);
    const first = await dm(['deploy', 'app.yaml', '--name', 'app', '--cluster', 'prod', '-n', 'default']);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /^deployment app: manifest app-1 applied\n/);
    assert.match(first.stdout, /settings\s+applied/);
    assert.ok(standin.get('v1', 'ConfigMap', 'default', 'extra'));
    writeFileSync(join(dir, 'app.yaml'), APP_WITHOUT_EXTRA);
    const second = await dm(['deploy', 'app.yaml', '--name', 'app']);
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /extra \(prune\)\s+pruned/);
    assert.equal(standin.get('v1', 'ConfigMap', 'default', 'extra'), undefined);

    const list = await dm(['-o', 'json', 'deployments', 'list']);
    assert.equal(list.status, 0, list.stderr);
    assert.deepEqual(
      (JSON.parse(list.stdout) as Json[]).map((d) => [d.name, d.state, d.manifest]),
      [['app', 'deployed', 'app-2']],
    );
    const manifests = await dm(['-o', 'json', 'manifests', 'app']);
    assert.deepEqual(
      (JSON.parse(manifests.stdout) as Json[]).map((m) => m.action),
      ['create', 'update'],
    );
    const instances = await dm(['types', 'instances', 'all']);
    assert.equal(instances.status, 0, instances.stderr);
    assert.match(instances.stdout, /^NAME +TYPE +DEPLOYMENT +MANIFEST +PATH\n/);
    assert.match(instances.stdout, /^db +Service +app +app-2 +\$\.resources\[0\]$/m);
    const missing = await dm(['deployments', 'get', 'nope']);
    assert.equal(missing.status, 3, 'not found exits 3 as locally');
    const noToken = await run([DM_BIN, '--manager-url', url(), 'deployments', 'list'], {
      PATH: process.env.PATH,
      HOME: dir,
    });
    assert.equal(noToken.status, 1);
    assert.match(noToken.stderr, /need a token/);
  });

  it('dm deploy --dry-run through the service plans as the local dry run does and applies nothing', async () => {
    writeFileSync(join(dir, 'app.yaml'), APP);
    const update = await dm(['deploy', 'app.yaml', '--name', 'app', '--dry-run']);
    assert.equal(update.status, 0, update.stderr);
    assert.match(update.stdout, /^dry run of deployment app \(server-side, against live objects\)\n/);
    assert.match(update.stdout, /^create {4}ConfigMap default\/extra/m);
    assert.match(update.stdout, /^unchanged ConfigMap default\/settings$/m);
    assert.equal(standin.get('v1', 'ConfigMap', 'default', 'extra'), undefined, 'nothing was applied');
    const manifests = await api('GET', '/api/v1/deployments/app/manifests');
    assert.equal((manifests.body as unknown as Json[]).length, 2, 'no manifest was recorded');
    const ops = await api('GET', '/api/v1/deployments/app/operations');
    assert.equal((ops.body as unknown as Json[]).length, 2, 'no operation was recorded');

    // A new deployment: the service's plan is the local command's plan, field for field.
    const remote = await dm([
      '-o',
      'json',
      'deploy',
      'app.yaml',
      '--name',
      'fresh',
      '--cluster',
      'prod',
      '-n',
      'default',
      '--dry-run',
    ]);
    assert.equal(remote.status, 0, remote.stderr);
    const local = await run(
      [
        DM_BIN,
        '-o',
        'json',
        '--kubeconfig',
        kubeconfig,
        '-n',
        'default',
        'deploy',
        'app.yaml',
        '--name',
        'fresh',
        '--dry-run',
      ],
      {
        PATH: process.env.PATH,
        HOME: dir,
        XDG_CONFIG_HOME: join(dir, 'cfg'),
        XDG_STATE_HOME: join(dir, 'local-state'),
      },
    );
    assert.equal(local.status, 0, local.stderr);
    assert.deepEqual(JSON.parse(remote.stdout), JSON.parse(local.stdout));
    const plan = JSON.parse(remote.stdout) as Record<'create' | 'update' | 'unchanged', unknown[]>;
    assert.equal(plan.create.length + plan.update.length + plan.unchanged.length, 3, remote.stdout);
    assert.equal((await dm(['deployments', 'get', 'fresh'])).status, 3, 'the dry run created nothing');
    const refused = await api('POST', '/api/v1/deployments?dryRun=true', {
      name: 'elsewhere',
      cluster: 'prod',
      namespace: 'other',
      configuration: { content: APP, imports: [] },
    });
    assert.equal(refused.status, 403, 'a dry run is checked as a change is');
  });

  it("dm deploy sends what the expansion reads: a schema's imports and an import by URL, fetched by the client", async () => {
    // The URL's file comes from an HTTPS stand-in the dm process trusts; the service never fetches it.
    const cert = loopbackCertificate();
    const asked: string[] = [];
    const web = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      asked.push(req.url ?? '');
      if (req.url === '/shared/cm.jinja') {
        res.end(
          'resources:\n- name: {{ env["name"] }}\n  type: v1/ConfigMap\n  properties: {data: {from: url}}\n',
        );
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    const project = join(dir, 'imports-project');
    mkdirSync(project, { recursive: true });
    const caFile = join(project, 'ca.pem');
    writeFileSync(caFile, cert.cert);
    const cm = `https://127.0.0.1:${(web.address() as AddressInfo).port}/shared/cm.jinja`;
    // Nothing under the configuration's imports: app.jinja is found beside it, its schema names the rest.
    writeFileSync(join(project, 'config.yaml'), 'resources:\n- name: web\n  type: app.jinja\n');
    writeFileSync(
      join(project, 'app.jinja'),
      'resources:\n- name: {{ env["name"] }}-helper\n  type: helper.jinja\n- name: {{ env["name"] }}-remote\n  type: cm.jinja\n',
    );
    writeFileSync(
      join(project, 'app.jinja.schema'),
      `imports:\n- path: parts/helper.jinja\n  name: helper.jinja\n- path: ${cm}\n  name: cm.jinja\n`,
    );
    mkdirSync(join(project, 'parts'));
    writeFileSync(
      join(project, 'parts', 'helper.jinja'),
      'resources:\n- name: {{ env["name"] }}\n  type: v1/ConfigMap\n  properties: {data: {from: helper}}\n',
    );
    try {
      const r = await run(
        [
          DM_BIN,
          '--manager-url',
          url(),
          '-o',
          'json',
          'deploy',
          'config.yaml',
          '--name',
          'imports',
          '--cluster',
          'prod',
          '-n',
          'default',
          '--dry-run',
        ],
        {
          PATH: process.env.PATH,
          HOME: dir,
          XDG_CONFIG_HOME: join(dir, 'cfg'),
          DM_MANAGER_TOKEN: token,
          NO_COLOR: '1',
          NODE_EXTRA_CA_CERTS: caFile,
        },
        project,
      );
      assert.equal(r.status, 0, r.stderr);
      const plan = JSON.parse(r.stdout) as { create: { name: string; kind: string }[] };
      assert.deepEqual(plan.create.map((c) => [c.kind, c.name]).sort(), [
        ['ConfigMap', 'web-helper'],
        ['ConfigMap', 'web-remote'],
      ]);
      // The client asked once for the file and once for a schema beside it, as gcloud did.
      assert.deepEqual(asked, ['/shared/cm.jinja', '/shared/cm.jinja.schema']);
    } finally {
      await new Promise<void>((r) => web.close(() => r()));
    }
  });

  it('a server killed mid-apply restarts with the operation interrupted, the previous manifest current, and re-applies', async () => {
    standin.setReadyByDefault(false);
    const withWorkload = `${APP_WITHOUT_EXTRA}- name: web
  type: apps/v1/Deployment
  properties:
    spec:
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: nginx}]}
`;
    const accepted = await api('PUT', '/api/v1/deployments/app', {
      configuration: { content: withWorkload, imports: [] },
      waitForReady: true,
      timeoutSeconds: 600,
    });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    // Wait until the workload is applied and the operation is waiting for it to become ready.
    for (;;) {
      const op = await api('GET', `/api/v1/operations/${accepted.body.id}`);
      if (op.body.status === 'running' && standin.get('apps/v1', 'Deployment', 'default', 'web')) break;
      assert.ok(['pending', 'running'].includes(String(op.body.status)), JSON.stringify(op.body));
      await new Promise((r) => setTimeout(r, 100));
    }
    await stopServer('SIGKILL');
    await startServer();
    const op = await api('GET', `/api/v1/operations/${accepted.body.id}`);
    assert.equal(op.body.status, 'interrupted', JSON.stringify(op.body));
    assert.ok(op.body.finishedAt);
    const d = await api('GET', '/api/v1/deployments/app');
    assert.equal(d.body.latestManifest, 'app-2', 'the previous manifest is current again');
    assert.equal(d.body.state, 'failed');
    const m3 = await api('GET', '/api/v1/deployments/app/manifests/app-3');
    assert.equal(m3.body.status, 'failed');
    assert.match(String(m3.body.error), /interrupted/);

    standin.setReadyByDefault(true);
    standin.setReady('Deployment', 'default', 'web', true);
    writeFileSync(join(dir, 'app.yaml'), withWorkload);
    const again = await dm(['deploy', 'app.yaml', '--name', 'app', '--wait', '--timeout', '120']);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /manifest app-4 applied/);
  });

  it('dm deployments delete removes every object through the service', async () => {
    const r = await dm(['deployments', 'delete', 'app']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^deployment app deleted \(manifest app-5\)/);
    assert.equal(standin.get('v1', 'Service', 'default', 'db'), undefined);
    assert.equal(standin.get('apps/v1', 'Deployment', 'default', 'web'), undefined);
    assert.equal((await dm(['deployments', 'get', 'app'])).status, 3);
  });
});

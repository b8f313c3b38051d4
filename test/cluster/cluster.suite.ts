/**
 * The deploy scenarios against a REAL kube-apiserver (Debian's kubernetes 1.20.2 on etcd-server,
 * test/cluster/real-apiserver.sh): deploy with $(ref), update with prune, failure part-way and
 * convergence, dry-run, CRD then CR, delete; and the same through the Deployment Manager service
 * (docs/manager.md: a real `dm-registry start --cluster`, create, update with prune, $(ref) order,
 * delete through the API). Run with `npm run test:cluster` (builds the server once;
 * not part of `npm test`). 1.20 has no controllers: workloads never become ready and deleted
 * Namespaces stay Terminating, so --wait and namespace removal are not asserted here.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

const root = new URL('../../../', import.meta.url).pathname;
const script = join(root, 'test', 'cluster', 'real-apiserver.sh');
const dmBin = join(root, 'bin', 'dm.js');
const registryBin = join(root, 'bin', 'dm-registry.js');

const APP = `resources:
- name: team
  type: Namespace
- name: db
  type: Service
  properties:
    metadata: {namespace: team}
    spec: {ports: [{port: 5432, protocol: TCP}], selector: {app: db}}
- name: settings
  type: ConfigMap
  properties:
    metadata: {namespace: team}
    data: {dbHost: $(ref.db.spec.clusterIP)}
- name: web
  type: apps/v1/Deployment
  properties:
    metadata: {namespace: team}
    spec:
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: nginx}]}
`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A real `dm-registry start --cluster real=KUBECONFIG` on a free port; its URL once it listens. */
async function startManager(
  dir: string,
  kubeconfig: string,
  adminToken: string,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      registryBin,
      'start',
      '--port',
      '0',
      '--db',
      join(dir, 'data', 'registry.db'),
      '--cluster',
      `real=${kubeconfig}`,
    ],
    { env: { PATH: process.env.PATH, HOME: dir, DM_ADMIN_TOKEN: adminToken } },
  );
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      for (const line of out.split('\n')) {
        if (!line.includes('"msg":"listening"')) continue;
        resolve(`http://127.0.0.1:${(JSON.parse(line) as { port?: number }).port}`);
      }
    });
    child.on('exit', (code) => reject(new Error(`dm-registry exited ${code}: ${stderr}`)));
  });
  return { child, url };
}

/** Stops what startManager started (if it still runs), then the apiserver, and removes `dir`. */
async function stopAll(child: ChildProcess | undefined, dir: string): Promise<void> {
  if (child && child.exitCode === null && child.signalCode === null) {
    await new Promise<void>((resolve) => {
      child.on('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
  execFileSync('bash', [script, 'stop', join(dir, 'server')]);
  rmSync(dir, { recursive: true, force: true });
}

/** The manager's API as the admin: a request, and following an operation to its end (each GET holds up to 30 s). */
function managerApi(url: () => string, token: string) {
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url()}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const follow = async (id: unknown) => {
    for (let i = 0; i < 20; i++) {
      const op = await api('GET', `/api/v1/operations/${String(id)}?wait=30`);
      assert.equal(op.status, 200, JSON.stringify(op.body));
      if (op.body.status !== 'pending' && op.body.status !== 'running') return op.body;
    }
    assert.fail(`operation ${String(id)} did not finish`);
  };
  return { api, follow };
}

describe('dm deploy against a real kube-apiserver 1.20', () => {
  let dir: string;
  let kubeconfig: string;
  const run = (cmd: string, args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        cmd,
        args,
        {
          cwd: join(dir, 'work'),
          env: {
            PATH: process.env.PATH,
            HOME: dir,
            XDG_STATE_HOME: join(dir, 'state'),
            XDG_CONFIG_HOME: join(dir, 'config'),
            XDG_CACHE_HOME: join(dir, 'cache'),
          },
          timeout: 180_000,
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
  const dm = (args: string[]) => run(process.execPath, [dmBin, '--kubeconfig', kubeconfig, ...args]);
  const kubectl = (args: string[]) => run('kubectl', ['--kubeconfig', kubeconfig, ...args]);
  const file = (name: string, text: string) => {
    const path = join(dir, 'work', name);
    writeFileSync(path, text);
    return path;
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'dm-cluster-'));
    mkdirSync(join(dir, 'work'));
    kubeconfig = execFileSync('bash', [script, 'start', join(dir, 'server')], { encoding: 'utf8' }).trim();
  });
  after(() => {
    execFileSync('bash', [script, 'stop', join(dir, 'server')]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('deploys in dependency order with the Service clusterIP substituted', async () => {
    const r = await dm(['deploy', file('app.yaml', APP), '--name', 'app']);
    assert.equal(r.code, 0, r.stderr);
    const ip = (await kubectl(['get', 'service', 'db', '-n', 'team', '-o', 'jsonpath={.spec.clusterIP}']))
      .stdout;
    const host = (
      await kubectl(['get', 'configmap', 'settings', '-n', 'team', '-o', 'jsonpath={.data.dbHost}'])
    ).stdout;
    assert.match(ip, /^10\.0\.0\.\d+$/);
    assert.equal(host, ip);
    const managers = (
      await kubectl([
        'get',
        'configmap',
        'settings',
        '-n',
        'team',
        '-o',
        'jsonpath={.metadata.managedFields[*].manager}',
      ])
    ).stdout;
    assert.match(managers, /\bdm\b/);
  });

  it('dry-run shows the update and the prune, then the update prunes', async () => {
    const smaller = file('app2.yaml', APP.split('- name: web')[0]!.replace('port: 5432,', 'port: 5433,'));
    const plan = await dm(['-o', 'json', 'deploy', smaller, '--name', 'app', '--dry-run']);
    assert.equal(plan.code, 0, plan.stderr);
    const p = JSON.parse(plan.stdout) as { update: { name: string }[]; prune: { name: string }[] };
    assert.deepEqual(
      p.update.map((u) => u.name),
      ['db'],
    );
    assert.deepEqual(
      p.prune.map((u) => u.name),
      ['web'],
    );
    const r = await dm(['deploy', smaller, '--name', 'app']);
    assert.equal(r.code, 0, r.stderr);
    assert.notEqual((await kubectl(['get', 'deployment', 'web', '-n', 'team'])).code, 0);
  });

  it('records a failure part-way and converges on re-run', async () => {
    const bad = `resources:
- {name: first, type: ConfigMap, properties: {data: {a: "1"}}}
- {name: Bad_Name, type: ConfigMap}
- {name: after, type: ConfigMap, properties: {data: {x: $(ref.first.data.a)}}}
`;
    const r1 = await dm(['deploy', file('bad.yaml', bad), '--name', 'partial']);
    assert.equal(r1.code, 1);
    const m = JSON.parse((await dm(['-o', 'json', 'manifests', 'partial', '1'])).stdout) as {
      resources: { name: string; outcome: string }[];
    };
    assert.deepEqual(
      m.resources.map((x) => [x.name, x.outcome]),
      [
        ['first', 'applied'],
        ['Bad_Name', 'failed'],
        ['after', 'not-attempted'],
      ],
    );
    const r2 = await dm([
      'deploy',
      file('bad.yaml', bad.replace('Bad_Name', 'good-name')),
      '--name',
      'partial',
    ]);
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal((await kubectl(['get', 'configmap', 'after', '-o', 'jsonpath={.data.x}'])).stdout, '1');
  });

  it('applies a CRD, waits for Established, then the custom resource', async () => {
    const config = `resources:
- name: widget
  type: example.com/v1/Widget
  properties: {spec: {size: 3}}
- name: widgets-crd
  type: CustomResourceDefinition
  properties:
    metadata: {name: widgets.example.com}
    spec:
      group: example.com
      scope: Namespaced
      names: {plural: widgets, singular: widget, kind: Widget}
      versions:
      - name: v1
        served: true
        storage: true
        schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}
`;
    const r = await dm(['deploy', file('crd.yaml', config), '--name', 'crd']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await kubectl(['get', 'widget', 'widget', '-o', 'jsonpath={.spec.size}'])).stdout, '3');
  });

  it('deletes a deployment (its objects go; the manifests stay)', async () => {
    const r = await dm(['deployments', 'delete', 'partial']);
    assert.equal(r.code, 0, r.stderr);
    assert.notEqual((await kubectl(['get', 'configmap', 'first'])).code, 0);
    const manifests = JSON.parse((await dm(['-o', 'json', 'manifests', 'partial'])).stdout) as {
      action: string;
    }[];
    assert.deepEqual(
      manifests.map((m) => m.action),
      ['create', 'update', 'delete'],
    );
  });

  it('a token the cluster refuses, an identity RBAC forbids, and a server that is not there: what the cluster said (exit 1, with the context), "cannot reach" only when nothing answered (exit 5)', async () => {
    const { readFileSync } = await import('node:fs');
    const good = readFileSync(kubeconfig, 'utf8');
    const viewerToken = readFileSync(join(dir, 'server', 'viewer-token'), 'utf8').trim();
    const variant = (name: string, text: string) => {
      assert.notEqual(text, good, `${name} differs from the kubeconfig`);
      return file(name, text);
    };
    const badToken = variant(
      'bad-token.kubeconfig',
      good.replace(/token: [0-9a-f]+/, 'token: 0123456789abcdef'),
    );
    const viewer = variant('viewer.kubeconfig', good.replace(/token: [0-9a-f]+/, `token: ${viewerToken}`));
    const refused = variant(
      'refused.kubeconfig',
      good.replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:1'),
    );
    const config = file(
      'refusal.yaml',
      'resources:\n- {name: refusal, type: v1/ConfigMap, properties: {data: {a: "1"}}}\n',
    );
    const as = (kc: string, args: string[]) => run(process.execPath, [dmBin, '--kubeconfig', kc, ...args]);
    const oneSentence = (r: Run, says: RegExp) => {
      assert.match(r.stderr, says);
      assert.doesNotMatch(r.stderr, /cannot reach/);
      assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
      assert.equal(r.stderr.split('\n').filter((l) => l.startsWith('error: ')).length, 1, r.stderr);
    };

    // A token the apiserver does not know: 401, in kubectl's words, naming the context.
    const unauthorized =
      /^error: the cluster at https:\/\/127\.0\.0\.1:\d+ refused the credentials of context 'real': You must be logged in to the server \((Unauthorized|the server has asked for the client to provide credentials)\)$/m;
    for (const args of [
      ['deploy', config, '--name', 'refusal'],
      ['deploy', config, '--name', 'refusal', '--dry-run'],
      ['drift', 'app'],
    ]) {
      const r = await as(badToken, args);
      assert.equal(r.code, 1, `dm ${args.join(' ')}: ${r.stderr}`);
      oneSentence(r, unauthorized);
    }
    // A user with no credentials at all (`user: {}`): kubectl would ask for a username on a
    // terminal; dm says what is missing instead of kubectl's "EOF" (exit 1, CLUSTER_UNAUTHORIZED).
    const noCredentials = variant(
      'no-credentials.kubeconfig',
      good.replace(/user: \{token: [0-9a-f]+\}/, 'user: {}'),
    );
    for (const args of [
      ['deploy', config, '--name', 'refusal'],
      ['deploy', config, '--name', 'refusal', '--dry-run'],
    ]) {
      const r = await as(noCredentials, args);
      assert.equal(r.code, 1, `dm ${args.join(' ')}: ${r.stderr}`);
      oneSentence(
        r,
        /^error: context 'real' has no credentials for the cluster at https:\/\/127\.0\.0\.1:\d+ \(its kubeconfig user names no token, client certificate or exec plugin\)$/m,
      );
      assert.doesNotMatch(r.stderr, /EOF|Please enter/);
    }
    const json = await as(badToken, ['-o', 'json', 'deploy', config, '--name', 'refusal']);
    assert.equal(json.code, 1, json.stderr);
    assert.equal((JSON.parse(json.stdout) as { error: { code: string } }).error.code, 'CLUSTER_UNAUTHORIZED');

    // dm-viewer may discover kinds but not write or read ConfigMaps (RBAC): 403, in kubectl's words.
    for (const [args, verb] of [
      [['deploy', config, '--name', 'refusal'], 'patch'],
      [['deploy', config, '--name', 'refusal', '--dry-run'], 'get'],
    ] as const) {
      const r = await as(viewer, [...args]);
      assert.equal(r.code, 1, `dm ${args.join(' ')}: ${r.stderr}`);
      oneSentence(
        r,
        new RegExp(
          `^error: the cluster at https://127\\.0\\.0\\.1:\\d+ refused what context 'real' asked: Error from server \\(Forbidden\\): configmaps "refusal" is forbidden: User "dm-viewer" cannot ${verb} resource "configmaps" in API group "" in the namespace "default"$`,
          'm',
        ),
      );
    }
    assert.notEqual((await kubectl(['get', 'configmap', 'refusal'])).code, 0, 'nothing was created');

    // Nothing listens: that alone is "cannot reach", exit 5.
    const away = await as(refused, ['deploy', config, '--name', 'refusal']);
    assert.equal(away.code, 5, away.stderr);
    assert.match(
      away.stderr,
      /^error: cannot reach the cluster at https:\/\/127\.0\.0\.1:1 \(context 'real'\)$/m,
    );
    const drift = await as(refused, ['drift', 'app']);
    assert.equal(drift.code, 5, drift.stderr);
    assert.match(
      drift.stderr,
      /^error: cannot reach the cluster at https:\/\/127\.0\.0\.1:1 \(context 'real'\) to read the live objects$/m,
    );
  });
});

describe('the Deployment Manager service against a real kube-apiserver 1.20', () => {
  let dir: string;
  let kubeconfig: string;
  let server: ChildProcess | undefined;
  let url: string;
  const ADMIN = 'cluster-suite-admin-token';
  const NS = 'managed';

  const kubectl = (args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        'kubectl',
        ['--kubeconfig', kubeconfig, ...args],
        { env: { PATH: process.env.PATH, HOME: dir }, timeout: 120_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
  /** Follows an operation to its end, as dm --manager-url does (each GET holds up to 30 s). */
  const { api, follow } = managerApi(() => url, ADMIN);
  const jsonpath = async (kind: string, name: string, path: string) => {
    const r = await kubectl(['get', kind, name, '-n', NS, '-o', `jsonpath={${path}}`]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };

  // APP without its Namespace: the deployment's namespace is the service's to name.
  const CONFIG = APP.replace('- name: team\n  type: Namespace\n', '').replaceAll(
    '    metadata: {namespace: team}\n',
    '',
  );

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dm-cluster-manager-'));
    kubeconfig = execFileSync('bash', [script, 'start', join(dir, 'server')], { encoding: 'utf8' }).trim();
    const nsFile = join(dir, 'namespace.json');
    writeFileSync(nsFile, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }));
    const ns = await kubectl(['apply', '-f', nsFile]);
    assert.equal(ns.code, 0, ns.stderr);
    ({ child: server, url } = await startManager(dir, kubeconfig, ADMIN));
  });
  after(() => stopAll(server, dir));

  it('creates a deployment through the API: applied in $(ref) order on the real apiserver', async () => {
    const accepted = await api('POST', '/api/v1/deployments', {
      name: 'svc-app',
      cluster: 'real',
      namespace: NS,
      configuration: { content: CONFIG, imports: [] },
    });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const op = await follow(accepted.body.id);
    assert.equal(op.status, 'done', JSON.stringify(op));
    // The ConfigMap needs the Service's clusterIP, allocated by the apiserver: it can only hold it if
    // the Service was applied (and its IP read back) before it.
    const ip = await jsonpath('service', 'db', '.spec.clusterIP');
    assert.match(ip, /^10\.0\.0\.\d+$/);
    assert.equal(await jsonpath('configmap', 'settings', '.data.dbHost'), ip);
    assert.match(await jsonpath('configmap', 'settings', '.metadata.managedFields[*].manager'), /\bdm\b/);
    assert.equal(await jsonpath('deployment', 'web', '.spec.template.spec.containers[0].image'), 'nginx');
    const d = await api('GET', '/api/v1/deployments/svc-app');
    assert.equal(d.status, 200);
    assert.equal(d.body.state, 'deployed', JSON.stringify(d.body));
  });

  it('updates through the API with prune: the resource that left the configuration is deleted', async () => {
    const smaller = CONFIG.split('- name: web')[0]!.replace('port: 5432,', 'port: 5433,');
    const accepted = await api('PUT', '/api/v1/deployments/svc-app', {
      configuration: { content: smaller, imports: [] },
    });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const op = await follow(accepted.body.id);
    assert.equal(op.status, 'done', JSON.stringify(op));
    assert.equal(await jsonpath('service', 'db', '.spec.ports[0].port'), '5433');
    assert.notEqual((await kubectl(['get', 'deployment', 'web', '-n', NS])).code, 0, 'web was pruned');
    const manifests = await fetch(`${url}/api/v1/deployments/svc-app/manifests`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(manifests.status, 200);
    assert.equal(((await manifests.json()) as unknown[]).length, 2);
  });

  it('deletes a deployment through the API: its objects go, the deployment is not found', async () => {
    const accepted = await api('DELETE', '/api/v1/deployments/svc-app');
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const op = await follow(accepted.body.id);
    assert.equal(op.status, 'done', JSON.stringify(op));
    for (const [kind, name] of [
      ['configmap', 'settings'],
      ['service', 'db'],
    ] as const) {
      assert.notEqual((await kubectl(['get', kind, name, '-n', NS])).code, 0, `${kind}/${name} is gone`);
    }
    assert.equal((await api('GET', '/api/v1/deployments/svc-app')).status, 404);
  });

  it("a cluster that refuses the service's own credentials answers 502 naming the cluster, never the caller's 401", async () => {
    const { readFileSync } = await import('node:fs');
    const badDir = join(dir, 'bad-credentials');
    mkdirSync(badDir);
    const bad = join(badDir, 'kubeconfig');
    const good = readFileSync(kubeconfig, 'utf8');
    writeFileSync(bad, good.replace(/token: [0-9a-f]+/, 'token: 0123456789abcdef'));
    assert.notEqual(readFileSync(bad, 'utf8'), good, 'the kubeconfig has a token to replace');
    const started = await startManager(badDir, bad, ADMIN);
    try {
      // A token limited to one namespace: the service reads the cluster's kinds before accepting.
      const token = spawnSync(
        process.execPath,
        [
          registryBin,
          'token',
          'create',
          '--deploy',
          `real/${NS}`,
          '--db',
          join(badDir, 'data', 'registry.db'),
        ],
        { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: badDir } },
      );
      assert.equal(token.status, 0, token.stderr);
      const limited = managerApi(() => started.url, token.stdout.trim());
      const refused = await limited.api('POST', '/api/v1/deployments', {
        name: 'refused',
        cluster: 'real',
        namespace: NS,
        configuration: {
          content: 'resources:\n- {name: c, type: v1/ConfigMap, properties: {data: {a: "1"}}}\n',
          imports: [],
        },
      });
      assert.equal(refused.status, 502, JSON.stringify(refused.body));
      const error = refused.body.error as { code: string; message: string };
      assert.equal(error.code, 'CLUSTER_UNAUTHORIZED');
      assert.match(error.message, /refused the credentials of context/);
      assert.doesNotMatch(error.message, new RegExp(badDir), 'no server path in the answer');
    } finally {
      const { child } = started;
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.on('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
    }
  });
});

/**
 * `dm deploy` and the Deployment Manager service on ONE real kube-apiserver (docs/deployments.md
 * "Order and batching": one plan-and-apply path): the same configurations through both, the objects
 * compared; then what builds on that path.
 */
describe('dm and the Deployment Manager service share one apply path on a real kube-apiserver 1.20', () => {
  let dir: string;
  let kubeconfig: string;
  let server: ChildProcess | undefined;
  let url: string;
  const ADMIN = 'cluster-suite-shared-admin';
  const env = () => ({
    PATH: process.env.PATH,
    HOME: dir,
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    DM_MANAGER_TOKEN: ADMIN,
    NO_COLOR: '1',
  });
  const run = (cmd: string, args: string[], input?: string): Promise<Run> =>
    new Promise((resolve) => {
      const child = execFile(
        cmd,
        args,
        { cwd: join(dir, 'work'), env: env(), timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(input ?? '');
    });
  const dm = (args: string[]) => run(process.execPath, [dmBin, '--kubeconfig', kubeconfig, ...args]);
  const dmRemote = (args: string[]) => run(process.execPath, [dmBin, '--manager-url', url, ...args]);
  const kubectl = (args: string[]) => run('kubectl', ['--kubeconfig', kubeconfig, ...args]);
  const file = (name: string, text: string) => {
    const path = join(dir, 'work', name);
    writeFileSync(path, text);
    return path;
  };
  const { api, follow } = managerApi(() => url, ADMIN);
  /** The objects of some kinds in a namespace (and the Namespace), without what each write changes. */
  const objectsIn = async (ns: string) => {
    const r = await kubectl(['get', 'service,configmap', '-n', ns, '-l', 'dm.io/deployment', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const nsObject = await kubectl(['get', 'namespace', ns, '-o', 'json']);
    assert.equal(nsObject.code, 0, nsObject.stderr);
    const items = [JSON.parse(nsObject.stdout), ...(JSON.parse(r.stdout) as { items: unknown[] }).items];
    return JSON.parse(
      JSON.stringify(items, (key, value) =>
        ['uid', 'resourceVersion', 'creationTimestamp', 'time', 'selfLink'].includes(key) ? undefined : value,
      ).replaceAll(ns, 'NS'),
    ) as Record<string, unknown>[];
  };

  // A Namespace, a Service and a ConfigMap naming it, one $(ref) between them (issue 30).
  const OWN_NAMESPACE = (ns: string) => `resources:
- name: ${ns}
  type: Namespace
- name: svc
  type: Service
  properties:
    metadata: {namespace: ${ns}}
    spec: {ports: [{port: 80, protocol: TCP}], selector: {app: svc}}
- name: settings
  type: ConfigMap
  properties:
    metadata: {namespace: ${ns}}
    data: {host: $(ref.svc.spec.clusterIP), url: "http://$(ref.svc.spec.clusterIP):$(ref.svc.spec.ports[0].port)"}
`;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dm-cluster-shared-'));
    mkdirSync(join(dir, 'work'));
    kubeconfig = execFileSync('bash', [script, 'start', join(dir, 'server')], { encoding: 'utf8' }).trim();
    ({ child: server, url } = await startManager(dir, kubeconfig, ADMIN));
  });
  after(() => stopAll(server, dir));

  it('a configuration that names its own namespace applies the same through dm deploy -n and POST /api/v1/deployments', async () => {
    const local = await dm([
      '-n',
      'default',
      'deploy',
      file('own-cli.yaml', OWN_NAMESPACE('own-cli')),
      '--name',
      'own',
    ]);
    assert.equal(local.code, 0, local.stderr);
    const accepted = await api('POST', '/api/v1/deployments', {
      name: 'own',
      cluster: 'real',
      namespace: 'default',
      configuration: { content: OWN_NAMESPACE('own-api'), imports: [] },
    });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const op = await follow(accepted.body.id);
    assert.equal(op.status, 'done', JSON.stringify(op));
    const viaCli = await objectsIn('own-cli');
    const viaApi = await objectsIn('own-api');
    assert.equal(viaCli.length, 3);
    // The clusterIPs differ; each ConfigMap holds its own Service's.
    for (const objects of [viaCli, viaApi]) {
      const svc = objects.find((o) => o.kind === 'Service')!;
      const cm = objects.find((o) => o.kind === 'ConfigMap')!;
      const ip = (svc.spec as Record<string, unknown>).clusterIP as string;
      assert.match(ip, /^10\.0\.0\.\d+$/);
      assert.deepEqual(cm.data, { host: ip, url: `http://${ip}:80` });
      (svc.spec as Record<string, unknown>).clusterIP = 'IP';
      (svc.spec as Record<string, unknown>).clusterIPs = ['IP'];
      (cm.data as Record<string, unknown>).host = 'IP';
      (cm.data as Record<string, unknown>).url = 'IP';
    }
    assert.deepEqual(viaApi, viaCli);
  });

  it('a typo, an empty file, an unknown key or /dev/null is refused before the cluster is contacted; the live deployment keeps its objects', async () => {
    const six = `resources:\n${[1, 2, 3, 4, 5, 6].map((i) => `- {name: keep-${i}, type: ConfigMap, properties: {data: {i: "${i}"}}}`).join('\n')}\n`;
    const first = await dm(['deploy', file('six.yaml', six), '--name', 'six']);
    assert.equal(first.code, 0, first.stderr);
    const cases: [string, string, RegExp][] = [
      [
        'typo.yaml',
        six.replace('resources:', 'resource:'),
        /typo\.yaml: unknown top-level key 'resource' \(did you mean 'resources'\?\)/,
      ],
      ['empty.yaml', '', /empty\.yaml is empty: there is nothing to deploy/],
      ['foo.yaml', 'foo: bar\n', /foo\.yaml: unknown top-level key 'foo'/],
      ['none.yaml', 'resources: []\n', /none\.yaml has no resources: there is nothing to deploy/],
    ];
    // A kubeconfig whose server nothing answers shows that nothing is contacted: the refusal comes first.
    const nowhere = file(
      'nowhere-kubeconfig',
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: nowhere, context: {cluster: c, user: u}}]\ncurrent-context: nowhere\n',
    );
    for (const [name, text, message] of cases) {
      for (const args of [
        ['deploy', file(name, text), '--name', 'six'],
        ['--kubeconfig', nowhere, 'deploy', file(name, text), '--name', 'six'],
        ['deploy', file(name, text), '--name', 'six', '--dry-run'],
      ]) {
        const r = await dm(args);
        assert.equal(r.code, 4, `${name} ${args.join(' ')}: ${r.code} ${r.stderr}`);
        assert.match(r.stderr, message);
        const lines = r.stderr.trim().split('\n');
        assert.equal(lines.filter((l) => !l.startsWith('hint: ')).length, 1, r.stderr);
        assert.doesNotMatch(r.stderr, /\n\s+at /);
      }
    }
    const devNull = await dm(['deploy', '/dev/null', '--name', 'six']);
    assert.notEqual(devNull.code, 0, devNull.stdout);
    assert.match(devNull.stderr, /\/dev\/null/);
    // The same rules through the service and through dm --manager-url.
    const made = await api('POST', '/api/v1/deployments?wait=true', {
      name: 'six',
      cluster: 'real',
      namespace: 'six-api',
      configuration: {
        content: `resources:\n- {name: six-api, type: Namespace}\n${six.slice('resources:\n'.length).replaceAll('ConfigMap, properties: {', 'ConfigMap, properties: {metadata: {namespace: six-api}, ')}`,
        imports: [],
      },
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.equal(made.body.status, 'done', JSON.stringify(made.body));
    for (const [, text, message] of cases) {
      const r = await api('PUT', '/api/v1/deployments/six', {
        configuration: { content: text, imports: [] },
      });
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.match(
        String((r.body.error as Record<string, unknown>).message),
        new RegExp(message.source.replace(/^[a-z]+\\\.yaml/, 'configuration\\.content')),
      );
      const remote = await dmRemote(['deploy', file('remote.yaml', text), '--name', 'six']);
      assert.equal(remote.code, 4, remote.stderr);
      assert.match(remote.stderr, new RegExp(message.source.replace(/^[a-z]+\\\.yaml/, 'remote\\.yaml')));
    }
    const kept = await kubectl(['get', 'configmaps', '-l', 'dm.io/deployment=six', '-A', '-o', 'name']);
    assert.equal(kept.code, 0, kept.stderr);
    assert.equal(kept.stdout.trim().split('\n').length, 12, kept.stdout);
  });

  it('a deploy that would prune all or most of a deployment stops unless --prune-all; --dry-run shows the count', async () => {
    const two = `resources:\n- {name: other-1, type: ConfigMap}\n- {name: other-2, type: ConfigMap}\n`;
    const plan = await dm(['-o', 'json', 'deploy', file('two.yaml', two), '--name', 'six', '--dry-run']);
    assert.equal(plan.code, 0, plan.stderr);
    const p = JSON.parse(plan.stdout) as { prune: unknown[]; existing: number; refused?: string };
    assert.equal(p.prune.length, 6);
    assert.equal(p.existing, 6);
    assert.match(String(p.refused), /would prune every object \(6 of 6\) of deployment 'six'/);
    const text = await dm(['deploy', file('two.yaml', two), '--name', 'six', '--dry-run']);
    assert.match(text.stdout, /prunes 6 of the deployment's 6 objects/);
    const refused = await dm(['deploy', file('two.yaml', two), '--name', 'six']);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /would prune every object \(6 of 6\) of deployment 'six'.*--prune-all/);
    assert.equal((await kubectl(['get', 'configmap', 'keep-1'])).code, 0, 'nothing was pruned');
    assert.notEqual((await kubectl(['get', 'configmap', 'other-1'])).code, 0, 'nothing was applied');
    // Four of six (more than half) stops too; three of six goes through.
    const keepTwo = `resources:\n- {name: keep-1, type: ConfigMap, properties: {data: {i: "1"}}}\n- {name: keep-2, type: ConfigMap, properties: {data: {i: "2"}}}\n`;
    const most = await dm(['deploy', file('keep-two.yaml', keepTwo), '--name', 'six']);
    assert.equal(most.code, 1, most.stderr);
    assert.match(most.stderr, /would prune 4 of the 6 objects/);
    const keepThree = keepTwo + `- {name: keep-3, type: ConfigMap, properties: {data: {i: "3"}}}\n`;
    const half = await dm(['deploy', file('keep-three.yaml', keepThree), '--name', 'six']);
    assert.equal(half.code, 0, half.stderr);
    assert.notEqual((await kubectl(['get', 'configmap', 'keep-6'])).code, 0, 'keep-6 was pruned');
    const all = await dm(['deploy', file('two.yaml', two), '--name', 'six', '--prune-all']);
    assert.equal(all.code, 0, all.stderr);
    assert.notEqual((await kubectl(['get', 'configmap', 'keep-1'])).code, 0, 'keep-1 was pruned');
    // The service: 409 before an operation, unless pruneAll.
    const api1 = await api('PUT', '/api/v1/deployments/six', {
      configuration: {
        content: `resources:\n- {name: lone, type: ConfigMap, properties: {metadata: {namespace: six-api}}}\n`,
        imports: [],
      },
    });
    assert.equal(api1.status, 409, JSON.stringify(api1.body));
    assert.equal((api1.body.error as Record<string, unknown>).code, 'PRUNE_REFUSED');
    const ops = await api('GET', '/api/v1/deployments/six/operations');
    assert.equal((ops.body as unknown as unknown[]).length, 1, 'no operation was recorded');
    const api2 = await api('PUT', '/api/v1/deployments/six?wait=true', {
      configuration: {
        content: `resources:\n- {name: lone, type: ConfigMap, properties: {metadata: {namespace: six-api}}}\n`,
        imports: [],
      },
      pruneAll: true,
    });
    assert.equal(api2.body.status, 'done', JSON.stringify(api2.body));
  });
  // A ConfigMap and a Secret in their own namespace: what diff, drift, rollback and history act on.
  const RELEASE = (ns: string, b: string, password: string) => `resources:
- {name: ${ns}, type: Namespace}
- name: cfg
  type: ConfigMap
  properties:
    metadata: {namespace: ${ns}}
    data: {a: "1", b: "${b}"}
- name: creds
  type: Secret
  properties:
    metadata: {namespace: ${ns}}
    stringData: {password: ${password}}
${b === 'y' ? `- name: extra\n  type: ConfigMap\n  properties:\n    metadata: {namespace: ${ns}}\n    data: {added: in-v2}\n` : ''}`;
  const SECRETS = ['s3cret-one', 's3cret-two'].flatMap((v) => [v, Buffer.from(v).toString('base64')]);
  const noSecret = (r: Run) => {
    for (const v of SECRETS)
      assert.ok(!`${r.stdout}${r.stderr}`.includes(v), `a Secret value was printed: ${r.stdout}${r.stderr}`);
  };

  for (const mode of ['local', 'manager'] as const) {
    it(`dm diff and dm drift (${mode}): drift and configured changes per field, --detailed-exitcode 2 then 0 after a redeploy, Secret values never shown`, async () => {
      const ns = mode === 'local' ? 'rel' : 'rel-api';
      const cli = (args: string[]) => (mode === 'local' ? dm(args) : dmRemote(args));
      const v1 = file(`${ns}-1.yaml`, RELEASE(ns, 'x', 's3cret-one'));
      const v2 = file(`${ns}-2.yaml`, RELEASE(ns, 'y', 's3cret-two'));
      const first = await cli([
        'deploy',
        v1,
        '--name',
        ns,
        ...(mode === 'manager' ? ['--cluster', 'real', '-n', ns] : []),
      ]);
      assert.equal(first.code, 0, first.stderr);
      const clean = await cli(['drift', ns, '--detailed-exitcode']);
      assert.equal(clean.code, 0, clean.stdout + clean.stderr);
      assert.match(clean.stdout, /no drift/);
      const patched = await kubectl([
        'patch',
        'configmap',
        'cfg',
        '-n',
        ns,
        '--type',
        'merge',
        '-p',
        '{"data":{"a":"9"}}',
      ]);
      assert.equal(patched.code, 0, patched.stderr);

      const drift = await cli(['drift', ns, '--detailed-exitcode']);
      assert.equal(drift.code, 2, drift.stdout + drift.stderr);
      assert.match(drift.stdout, /drift\s+\.data\.a: last applied "1", live "9"/);
      noSecret(drift);

      const diff = await cli(['diff', v2, '--name', ns, '--detailed-exitcode']);
      assert.equal(diff.code, 2, diff.stdout + diff.stderr);
      assert.match(diff.stdout, /update, drift ConfigMap [\w-]+\/cfg/);
      assert.match(diff.stdout, /drift\s+\.data\.a: last applied "1", live "9"/);
      assert.match(diff.stdout, /change\s+\.data\.b: live "x" -> "y"/);
      assert.match(diff.stdout, /\.data\.password: changed \(Secret value not shown\)/);
      noSecret(diff);
      const json = await cli(['-o', 'json', 'diff', v2, '--name', ns]);
      assert.equal(json.code, 0, json.stderr);
      noSecret(json);
      const d = JSON.parse(json.stdout) as {
        objects: {
          name: string;
          action: string;
          drift: { path: string }[];
          changes: { path: string }[];
          secretData?: Record<string, string>;
        }[];
      };
      const cfg = d.objects.find((o) => o.name === 'cfg')!;
      assert.deepEqual(
        cfg.drift.map((f) => f.path),
        ['.data.a'],
      );
      assert.deepEqual(cfg.changes.map((f) => f.path).sort(), ['.data.a', '.data.b']);
      assert.deepEqual(d.objects.find((o) => o.name === 'creds')!.secretData, { password: 'changed' });
      const plan = await cli(['-o', 'json', 'deploy', v2, '--name', ns, '--dry-run']);
      assert.equal(plan.code, 0, plan.stderr);
      noSecret(plan);

      const redeploy = await cli(['deploy', v2, '--name', ns, '--force-conflicts']);
      assert.equal(redeploy.code, 0, redeploy.stderr);
      noSecret(redeploy);
      const after = await cli(['diff', v2, '--name', ns, '--detailed-exitcode']);
      assert.equal(after.code, 0, after.stdout + after.stderr);
      assert.match(after.stdout, /0 to create, 0 to update, 0 to prune, 0 drifted/);
      const driftAfter = await cli(['drift', ns, '--detailed-exitcode']);
      assert.equal(driftAfter.code, 0, driftAfter.stdout + driftAfter.stderr);
      const missing = await cli(['diff', v2, '--name', 'no-such-deployment', '--detailed-exitcode']);
      assert.equal(missing.code, 1, missing.stdout + missing.stderr);
    });
  }
  for (const mode of ['local', 'manager'] as const) {
    it(`dm rollback and dm history (${mode}): the previous manifest's objects back, the newer one's pruned, three manifests with the restored one marked`, async () => {
      const ns = mode === 'local' ? 'rel' : 'rel-api';
      const cli = (args: string[]) => (mode === 'local' ? dm(args) : dmRemote(args));
      const jsonpath = async (kind: string, name: string, path: string) => {
        const r = await kubectl(['get', kind, name, '-n', ns, '-o', `jsonpath={${path}}`]);
        assert.equal(r.code, 0, r.stderr);
        return r.stdout;
      };
      assert.equal(await jsonpath('configmap', 'extra', '.data.added'), 'in-v2');
      const plan = await cli(['-o', 'json', 'rollback', ns, '--dry-run']);
      assert.equal(plan.code, 0, plan.stderr);
      noSecret(plan);
      const p = JSON.parse(plan.stdout) as {
        restoredFrom: string;
        prune: { name: string }[];
        update: { name: string }[];
      };
      assert.equal(p.restoredFrom, `${ns}-1`);
      assert.deepEqual(
        p.prune.map((x) => x.name),
        ['extra'],
      );
      assert.deepEqual(p.update.map((x) => x.name).sort(), ['cfg', 'creds']);
      assert.equal(await jsonpath('configmap', 'cfg', '.data.b'), 'y', 'the dry run changed nothing');

      const r = await cli(['rollback', ns]);
      assert.equal(r.code, 0, r.stderr);
      noSecret(r);
      assert.equal(await jsonpath('configmap', 'cfg', '.data.b'), 'x');
      const password = await jsonpath('secret', 'creds', '.data.password');
      assert.equal(
        Buffer.from(password, 'base64').toString(),
        's3cret-one',
        'the Secret is the first one again',
      );
      assert.notEqual((await kubectl(['get', 'configmap', 'extra', '-n', ns])).code, 0, 'extra was pruned');

      const history = await cli(['-o', 'json', 'history', ns]);
      assert.equal(history.code, 0, history.stderr);
      const rows = JSON.parse(history.stdout) as {
        revision: number;
        manifest: string;
        action: string;
        status: string;
        actor: string;
        restoredFrom?: string;
        applied: number;
        pruned: number;
      }[];
      assert.deepEqual(
        rows.map((x) => [x.revision, x.action, x.status, x.restoredFrom ?? null, x.applied, x.pruned]),
        [
          [1, 'create', 'applied', null, 3, 0],
          [2, 'update', 'applied', null, 4, 0],
          [3, 'rollback', 'applied', `${ns}-1`, 3, 1],
        ],
      );
      assert.ok(
        rows.every((x) => x.actor !== '-' && x.actor !== ''),
        JSON.stringify(rows),
      );
      if (mode === 'manager')
        assert.ok(
          rows.every((x) => x.actor === 'admin'),
          JSON.stringify(rows),
        );
      const text = await cli(['history', ns]);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^REVISION\s+MANIFEST\s+TIME\s+ACTOR/);
      assert.match(
        text.stdout,
        new RegExp(
          `3\\s+${ns}-3\\s+\\S+\\s+\\S+\\s+rollback\\s+applied\\s+3\\s+1\\s+0\\s+rollback to ${ns}-1`,
        ),
      );
      const none = await cli(['rollback', ns, '9']);
      assert.equal(none.code, 3, none.stderr);
      assert.match(none.stderr, new RegExp(`deployment '${ns}' has no manifest '9'`));
    });
  }
});

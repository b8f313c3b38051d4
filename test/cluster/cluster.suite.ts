/**
 * The deploy scenarios against a REAL kube-apiserver (Debian's kubernetes 1.20.2 on etcd-server,
 * test/cluster/real-apiserver.sh): deploy with $(ref), update with prune, failure part-way and
 * convergence, dry-run, CRD then CR, delete. Run with `npm run test:cluster` (builds the server once;
 * not part of `npm test`). 1.20 has no controllers: workloads never become ready and deleted
 * Namespaces stay Terminating, so --wait and namespace removal are not asserted here.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

const root = new URL('../../../', import.meta.url).pathname;
const script = join(root, 'test', 'cluster', 'real-apiserver.sh');
const dmBin = join(root, 'bin', 'dm.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
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
});

/**
 * dm in GitOps tools (docs/deployments.md "Argo CD and KRM functions"), through the real CLI, driven
 * as their documented contracts say (no Argo CD or kustomize binary here): Argo CD's config
 * management plugin runs `generate` in the application's directory with ARGOCD_APP_NAME,
 * ARGOCD_APP_NAMESPACE, ARGOCD_APP_PARAMETERS / PARAM_* in the environment and reads Kubernetes
 * objects from stdout; a KRM function reads a config.kubernetes.io/v1 ResourceList on stdin and
 * writes one on stdout, with `results` on error.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { parseYaml, parseYamlDocuments } from '../../client/src/document/yaml.js';
import { isolatedEnv, runDm } from '../support/run-cli.js';

type Json = Record<string, unknown>;

const CONFIG = `resources:
- name: web
  type: web.jinja
- name: settings
  type: ConfigMap
  properties:
    data: {mode: plain}
`;
const WEB = `resources:
- name: {{ env.deployment }}-web
  type: apps/v1/Deployment
  properties:
    spec:
      replicas: {{ properties.replicas }}
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:{{ properties.tag }}"}]}
`;
const WEB_SCHEMA = `properties:
  replicas: {type: integer, default: 1}
  tag: {type: string, default: "1.25"}
`;

/** Every document is a Kubernetes object: apiVersion, kind, metadata.name. */
function objectsOf(stdout: string): Json[] {
  const docs = parseYamlDocuments(stdout, { source: 'stdout' }).filter((d) => d !== null) as Json[];
  for (const d of docs) {
    assert.equal(typeof d.apiVersion, 'string', JSON.stringify(d));
    assert.equal(typeof d.kind, 'string', JSON.stringify(d));
    assert.equal(typeof (d.metadata as Json)?.name, 'string', JSON.stringify(d));
  }
  return docs;
}

describe('dm generate as an Argo CD config management plugin', () => {
  let app: string;
  let env: Record<string, string>;
  before(async () => {
    app = mkdtempSync(join(tmpdir(), 'dm-argocd-'));
    writeFileSync(join(app, 'config.yaml'), CONFIG);
    writeFileSync(join(app, 'web.jinja'), WEB);
    writeFileSync(join(app, 'web.jinja.schema'), WEB_SCHEMA);
    writeFileSync(
      join(app, 'refs.yaml'),
      'resources:\n- {name: db, type: Service, properties: {spec: {ports: [{port: 5432}]}}}\n- {name: cfg, type: ConfigMap, properties: {data: {host: $(ref.db.spec.clusterIP)}}}\n',
    );
    env = {
      ...(await isolatedEnv()),
      ARGOCD_APP_NAME: 'shop',
      ARGOCD_APP_NAMESPACE: 'shop-prod',
      ARGOCD_APP_PARAMETERS: JSON.stringify([
        { name: 'replicas', string: '5' },
        { name: 'tag', string: '1.27-alpine' },
      ]),
    };
  });

  it('prints only objects, with the parameters, name and namespace Argo CD gives, the same bytes every run', async () => {
    const first = await runDm(['--offline', 'generate'], { cwd: app, env });
    assert.equal(first.code, 0, first.stderr);
    const objects = objectsOf(first.stdout);
    assert.deepEqual(
      objects.map((o) => [o.kind, (o.metadata as Json).name, (o.metadata as Json).namespace]),
      [
        ['Deployment', 'shop-web', 'shop-prod'],
        ['ConfigMap', 'settings', 'shop-prod'],
      ],
    );
    const spec = objects[0]!.spec as Json;
    assert.equal(spec.replicas, 5);
    assert.match(JSON.stringify(spec), /nginx:1\.27-alpine/);
    const second = await runDm(['--offline', 'generate'], { cwd: app, env });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, first.stdout, 'byte for byte');
  });

  it('reads PARAM_* when ARGOCD_APP_PARAMETERS is absent', async () => {
    const r = await runDm(['--offline', 'generate', 'config.yaml'], {
      cwd: app,
      env: { ...env, ARGOCD_APP_PARAMETERS: undefined, PARAM_REPLICAS: '7' },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((objectsOf(r.stdout)[0]!.spec as Json).replicas, 7);
  });

  it('a $(ref) that needs the live cluster is an error naming it, with nothing on stdout', async () => {
    const r = await runDm(['--offline', 'generate', 'refs.yaml'], { cwd: app, env });
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /resource 'cfg': \$\(ref\.db\.spec\.clusterIP\) needs the live object of 'db'/);
  });
});

describe('dm fn as a KRM function', () => {
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dm-krm-'));
    writeFileSync(join(dir, 'config.yaml'), CONFIG);
    writeFileSync(join(dir, 'web.jinja'), WEB);
    writeFileSync(join(dir, 'web.jinja.schema'), WEB_SCHEMA);
    env = await isolatedEnv();
  });
  const resourceList = (functionConfig: Json) =>
    JSON.stringify({
      apiVersion: 'config.kubernetes.io/v1',
      kind: 'ResourceList',
      items: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }],
      functionConfig: {
        apiVersion: 'dm.io/v1',
        kind: 'DMConfiguration',
        metadata: { name: 'dm' },
        ...functionConfig,
      },
    });

  it('appends the expanded objects to items (configuration named by path or given inline), the same bytes every run', async () => {
    for (const fc of [
      { configuration: 'config.yaml', deployment: 'shop', namespace: 'shop', properties: { replicas: 2 } },
      {
        resources:
          parseYaml(CONFIG, { source: 'c' }) && (parseYaml(CONFIG, { source: 'c' }) as Json).resources,
        deployment: 'shop',
        namespace: 'shop',
        properties: { replicas: 2 },
      },
    ]) {
      const input = resourceList(fc);
      const r = await runDm(['fn'], { cwd: dir, env, input });
      assert.equal(r.code, 0, r.stderr);
      const out = parseYaml(r.stdout, { source: 'stdout' }) as Json;
      assert.equal(out.apiVersion, 'config.kubernetes.io/v1');
      assert.equal(out.kind, 'ResourceList');
      assert.equal(out.results, undefined);
      const items = out.items as Json[];
      assert.deepEqual(
        items.map((o) => [o.kind, (o.metadata as Json).name]),
        [
          ['Namespace', 'shop'],
          ['Deployment', 'shop-web'],
          ['ConfigMap', 'settings'],
        ],
      );
      for (const o of items) assert.ok(o.apiVersion && o.kind && (o.metadata as Json).name);
      assert.equal((items[1]!.spec as Json).replicas, 2);
      const again = await runDm(['fn'], { cwd: dir, env, input });
      assert.equal(again.stdout, r.stdout, 'byte for byte');
    }
  });

  it('an error is a result with severity error and the file, exit 1, the items passed through', async () => {
    const r = await runDm(['fn'], {
      cwd: dir,
      env,
      input: resourceList({ configuration: 'missing.yaml' }),
    });
    assert.equal(r.code, 1, r.stderr);
    const out = parseYaml(r.stdout, { source: 'stdout' }) as Json;
    assert.equal(out.kind, 'ResourceList');
    const results = out.results as { severity: string; message: string; file?: { path: string } }[];
    assert.equal(results.length, 1);
    assert.equal(results[0]!.severity, 'error');
    assert.match(results[0]!.message, /missing\.yaml/);
    assert.deepEqual(results[0]!.file, { path: 'missing.yaml' });
    assert.equal((out.items as unknown[]).length, 1);
    const refs = await runDm(['fn'], {
      cwd: dir,
      env,
      input: resourceList({
        resources: [
          { name: 'db', type: 'Service', properties: { spec: { ports: [{ port: 1 }] } } },
          { name: 'cfg', type: 'ConfigMap', properties: { data: { host: '$(ref.db.spec.clusterIP)' } } },
        ],
      }),
    });
    assert.equal(refs.code, 1, refs.stderr);
    const refResults = (parseYaml(refs.stdout, { source: 'stdout' }) as Json).results as {
      message: string;
    }[];
    assert.match(refResults[0]!.message, /\$\(ref\.db\.spec\.clusterIP\) needs the live object of 'db'/);
    const notAList = await runDm(['fn'], { cwd: dir, env, input: 'kind: Deployment\n' });
    assert.equal(notAList.code, 1);
    assert.match(notAList.stdout, /severity: error/);
  });
});

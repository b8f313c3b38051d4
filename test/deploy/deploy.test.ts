/**
 * `dm deploy` end to end (docs/deployments.md): the real dm CLI and the real kubectl against the
 * Kubernetes stand-in. Deploy, update with prune, delete, $(ref) ordering, CRD then CR, failure
 * part-way and convergence, dry-run, --wait, two concurrent deploys, DM's CLI forms.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DeployHarness, DM_BIN, deployHarness, subcommand } from './harness.js';

const APP = `resources:
- name: team
  type: Namespace
- name: db
  type: Service
  properties:
    metadata: {namespace: team}
    spec: {ports: [{port: 5432}], selector: {app: db}}
- name: settings
  type: ConfigMap
  properties:
    metadata: {namespace: team}
    data:
      dbHost: $(ref.db.spec.clusterIP)
      url: postgres://$(ref.db.spec.clusterIP):5432
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

interface ManifestView {
  name: string;
  status: string;
  action: string;
  resolvedValues: { resource: string; reference: string; value: unknown }[];
  inputConfig: { config: string; imports: { name: string; content: string }[] };
  expandedConfig: { resources: unknown[] };
  layout: { resources: unknown[] };
  resources: { name: string; action: string; level: number; outcome: string; message?: string }[];
}

const patchPaths = (h: DeployHarness) =>
  h.standin.log.filter((e) => e.method === 'PATCH' && e.status < 300).map((e) => e.path);

describe('dm deploy against the stand-in', () => {
  let h: DeployHarness;
  before(async () => {
    h = await deployHarness();
  });
  after(async () => {
    await h.close();
  });

  it('deploys in dependency levels, one kubectl apply per level, refs substituted from live objects', async () => {
    const config = h.file('app.yaml', APP);
    h.standin.clearLog();
    const r = await h.dm(['deploy', config, '--name', 'app']);
    assert.equal(r.code, 0, r.stderr);
    const applies = h.kubectlCalls().filter((c) => subcommand(c) === 'apply');
    assert.equal(applies.length, 3, 'levels: namespace | service, deployment | configmap');
    for (const a of applies) {
      assert.ok(a.includes('--server-side') && a.includes('--field-manager=dm'), a.join(' '));
      assert.ok(a.includes('--kubeconfig'));
    }
    const order = patchPaths(h);
    assert.ok(
      order.indexOf('/api/v1/namespaces/team') < order.indexOf('/api/v1/namespaces/team/services/db'),
    );
    assert.ok(
      order.indexOf('/api/v1/namespaces/team/services/db') <
        order.indexOf('/api/v1/namespaces/team/configmaps/settings'),
    );
    const svc = h.standin.get('v1', 'Service', 'team', 'db')!;
    const cm = h.standin.get('v1', 'ConfigMap', 'team', 'settings')!;
    const ip = (svc.spec as { clusterIP: string }).clusterIP;
    assert.deepEqual(cm.data, { dbHost: ip, url: `postgres://${ip}:5432` });
    const meta = cm.metadata as { labels: Record<string, string>; annotations: Record<string, string> };
    assert.equal(meta.labels['dm.io/deployment'], 'app');
    assert.equal(meta.annotations['dm.io/manifest'], 'app-1');
    const m = await h.dmJson<ManifestView>(['manifests', 'app', '1']);
    assert.equal(m.data.status, 'applied');
    assert.deepEqual(
      m.data.resources.map((x) => [x.name, x.level, x.outcome]),
      [
        ['team', 0, 'applied'],
        ['db', 1, 'applied'],
        ['settings', 2, 'applied'],
        ['web', 1, 'applied'],
      ],
    );
    assert.deepEqual(m.data.resolvedValues[0], {
      resource: 'settings',
      reference: '$(ref.db.spec.clusterIP)',
      value: ip,
    });
    assert.equal(m.data.inputConfig.config, APP);
    assert.equal(m.data.expandedConfig.resources.length, 4);
  });

  it('update applies, then prunes what left the configuration in reverse dependency order', async () => {
    const only = h.file('app2.yaml', APP.split('- name: web')[0]!.replace(/- name: db[\s\S]*/, ''));
    h.standin.clearLog();
    // v2 keeps only the namespace: settings (level 2) goes before db and web (level 1). Three of
    // four objects go: without --prune-all that stops (test/cluster/cluster.suite.ts).
    const r = await h.dm(['deploy', only, '--name', 'app', '--prune-all']);
    assert.equal(r.code, 0, r.stderr);
    const deletes = h.standin.log.filter((e) => e.method === 'DELETE').map((e) => e.path);
    assert.equal(deletes[0], '/api/v1/namespaces/team/configmaps/settings');
    assert.deepEqual(deletes.slice(1).sort(), [
      '/api/v1/namespaces/team/services/db',
      '/apis/apps/v1/namespaces/team/deployments/web',
    ]);
    assert.equal(h.standin.get('v1', 'ConfigMap', 'team', 'settings'), undefined);
    assert.ok(h.standin.get('v1', 'Namespace', undefined, 'team'));
    const m = await h.dmJson<ManifestView>(['manifests', 'app', '2']);
    assert.equal(m.data.action, 'update');
    assert.deepEqual(
      m.data.resources.filter((x) => x.action === 'prune').map((x) => [x.name, x.outcome]),
      [
        ['db', 'pruned'],
        ['settings', 'pruned'],
        ['web', 'pruned'],
      ],
    );
  });

  it('dry-run shows creates, updates with the changed fields, and prunes, and changes nothing', async () => {
    const config = h.file('app.yaml', APP.replace('port: 5432}', 'port: 5433}'));
    await h.dm(['deploy', h.file('app-v1.yaml', APP), '--name', 'dry']);
    const before = JSON.stringify(h.standin.objects().map((o) => o.metadata));
    const smaller = config.replace('app.yaml', 'app-smaller.yaml');
    h.file('app-smaller.yaml', APP.replace('port: 5432}', 'port: 5433}').split('- name: web')[0]!);
    const r = await h.dmJson<{
      server: boolean;
      update: { name: string; changes: string[] }[];
      unchanged: { name: string }[];
      prune: { name: string }[];
      create: { name: string }[];
    }>(['deploy', smaller, '--name', 'dry', '--dry-run']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.data.server, true);
    assert.deepEqual(
      r.data.update.map((u) => u.name),
      ['db'],
    );
    assert.match(r.data.update[0]!.changes.join('\n'), /\.spec\.ports\[0\]\.port: 5432 -> 5433/);
    assert.deepEqual(
      r.data.prune.map((p) => p.name),
      ['web'],
    );
    assert.deepEqual(r.data.create, []);
    assert.equal(JSON.stringify(h.standin.objects().map((o) => o.metadata)), before);
    const list = await h.dmJson<{ name: string; manifest: string }[]>(['deployments', 'list']);
    assert.equal(list.data.find((d) => d.name === 'dry')!.manifest, 'dry-1');
  });

  it('fails part-way with an invalid object, records applied/failed/not attempted, and converges on re-run', async () => {
    const bad = `resources:
- name: first
  type: ConfigMap
  properties: {data: {a: "1"}}
- name: broken
  type: Service
  properties: {spec: {ports: [{port: 0}]}}
- name: after
  type: ConfigMap
  properties: {data: {ip: $(ref.broken.spec.clusterIP)}}
`;
    const r1 = await h.dm(['deploy', h.file('bad.yaml', bad), '--name', 'partial']);
    assert.equal(r1.code, 1);
    assert.match(r1.stderr, /deployment 'partial' failed/);
    assert.match(r1.stderr, /broken.*must be between 1 and 65535/);
    const m1 = await h.dmJson<ManifestView>(['manifests', 'partial', '1']);
    assert.equal(m1.data.status, 'failed');
    assert.deepEqual(
      m1.data.resources.map((x) => [x.name, x.outcome]),
      [
        ['first', 'applied'],
        ['broken', 'failed'],
        ['after', 'not-attempted'],
      ],
    );
    assert.match(m1.data.resources[1]!.message!, /spec\.ports\[0\]\.port/);
    const got = await h.dmJson<{ state: string }>(['deployments', 'get', 'partial']);
    assert.equal(got.data.state, 'failed');
    const r2 = await h.dm([
      'deploy',
      h.file('bad.yaml', bad.replace('port: 0', 'port: 80')),
      '--name',
      'partial',
    ]);
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal(
      (await h.dmJson<{ state: string }>(['deployments', 'get', 'partial'])).data.state,
      'deployed',
    );
    assert.ok(h.standin.get('v1', 'ConfigMap', 'default', 'after'));
  });

  it('an unknown kind is an error before anything is applied', async () => {
    h.standin.clearLog();
    const r = await h.dm([
      'deploy',
      h.file('unknown.yaml', 'resources:\n- {name: a, type: ConfigMap}\n- {name: g, type: Gadget}\n'),
      '--name',
      'unknown',
    ]);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /type 'Gadget' is unknown/);
    assert.equal(h.standin.log.filter((e) => e.method === 'PATCH').length, 0);
    const m = await h.dm(['manifests', 'unknown']);
    assert.equal(m.code, 3);
  });

  it('deletes a deployment: objects removed, deployment gone, manifests kept', async () => {
    await h.dm([
      'deploy',
      h.file('del.yaml', 'resources:\n- {name: del-a, type: ConfigMap}\n'),
      '--name',
      'del',
    ]);
    assert.ok(h.standin.get('v1', 'ConfigMap', 'default', 'del-a'));
    const r = await h.dm(['deployments', 'delete', 'del']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(h.standin.get('v1', 'ConfigMap', 'default', 'del-a'), undefined);
    assert.equal((await h.dm(['deployments', 'get', 'del'])).code, 3);
    const manifests = await h.dmJson<{ name: string; action: string }[]>(['manifests', 'del']);
    assert.deepEqual(
      manifests.data.map((m) => m.action),
      ['create', 'delete'],
    );
    assert.equal((await h.dm(['deployments', 'delete', 'del'])).code, 3);
  });

  it('two concurrent deploys of different deployments both succeed', async () => {
    const a = h.file(
      'ca.yaml',
      'resources:\n- {name: conc-a, type: ConfigMap}\n- {name: conc-a2, type: Secret}\n',
    );
    const b = h.file(
      'cb.yaml',
      'resources:\n- {name: conc-b, type: ConfigMap}\n- {name: conc-b2, type: Secret}\n',
    );
    const [ra, rb] = await Promise.all([
      h.dm(['deploy', a, '--name', 'conc-a']),
      h.dm(['deploy', b, '--name', 'conc-b']),
    ]);
    assert.equal(ra.code, 0, ra.stderr);
    assert.equal(rb.code, 0, rb.stderr);
    const list = await h.dmJson<{ name: string; state: string }[]>(['deployments', 'list']);
    for (const n of ['conc-a', 'conc-b'])
      assert.equal(list.data.find((d) => d.name === n)?.state, 'deployed');
  });

  it('--context and --namespace pass through to kubectl', async () => {
    await h.dm([
      'deploy',
      h.file('ons.yaml', 'resources:\n- {name: other-ns, type: Namespace}\n'),
      '--name',
      'ons',
    ]);
    h.resetKubectlCalls();
    const r = await h.dm([
      '--context',
      'other',
      'deploy',
      h.file('ctx.yaml', 'resources:\n- {name: in-other, type: ConfigMap}\n'),
      '--name',
      'ctx',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(h.standin.get('v1', 'ConfigMap', 'other-ns', 'in-other'));
    assert.ok(h.kubectlCalls().every((c) => c.includes('--context') && c.includes('other')));
    const r2 = await h.dm([
      '-n',
      'team',
      'deploy',
      h.file('ns.yaml', 'resources:\n- {name: in-team, type: ConfigMap}\n'),
      '--name',
      'nsflag',
    ]);
    assert.equal(r2.code, 0, r2.stderr);
    assert.ok(h.standin.get('v1', 'ConfigMap', 'team', 'in-team'));
  });
});

describe('dm deploy: CRDs, waiting, templates', () => {
  let h: DeployHarness;
  before(async () => {
    h = await deployHarness({ crdEstablishDelayMs: 400 });
  });
  after(async () => {
    await h.close();
  });

  it('applies the CRD, waits until it is Established, then the custom resource', async () => {
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
    h.resetKubectlCalls();
    const r = await h.dm(['deploy', h.file('crd.yaml', config), '--name', 'crd']);
    assert.equal(r.code, 0, r.stderr);
    const calls = h
      .kubectlCalls()
      .map((c) => `${subcommand(c)} ${c.find((a) => a.startsWith('--for=')) ?? ''}`.trim());
    const crdApply = calls.indexOf('apply');
    assert.equal(calls[crdApply + 1], 'wait --for=condition=Established');
    assert.equal(calls[crdApply + 2], 'apply');
    assert.equal(
      (h.standin.get('example.com/v1', 'Widget', 'default', 'widget')!.spec as { size: number }).size,
      3,
    );
  });

  it('--wait fails when a workload does not become ready in time, and succeeds once it is', async () => {
    const config = h.file(
      'slow.yaml',
      `resources:
- name: slow
  type: Deployment
  properties:
    spec:
      selector: {matchLabels: {app: slow}}
      template:
        metadata: {labels: {app: slow}}
        spec: {containers: [{name: c, image: nginx}]}
`,
    );
    h.standin.setReady('Deployment', 'default', 'slow', false);
    const r1 = await h.dm(['deploy', config, '--name', 'slow', '--wait', '--timeout', '2']);
    assert.equal(r1.code, 1);
    assert.match(r1.stderr, /not ready within 2s/);
    h.standin.setReady('Deployment', 'default', 'slow', true);
    const r2 = await h.dm(['deploy', config, '--name', 'slow', '--wait', '--timeout', '300']);
    assert.equal(r2.code, 0, r2.stderr);
  });

  it('deploys a configuration with a Jinja template; types and instances carry layout paths', async () => {
    h.file(
      'web.jinja',
      `resources:
- name: {{ env['name'] }}-config
  type: ConfigMap
  properties:
    data: {replicas: "{{ properties['replicas'] }}"}
- name: {{ env['name'] }}-svc
  type: Service
  properties:
    spec: {ports: [{port: {{ properties['port'] }}}]}
`,
    );
    const config = h.file(
      'site.yaml',
      'imports:\n- path: web.jinja\nresources:\n- name: front\n  type: web.jinja\n  properties: {replicas: 2, port: 8080}\n',
    );
    const r = await h.dm(['--properties', 'replicas=3', 'deploy', config, '--name', 'site']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(h.standin.get('v1', 'ConfigMap', 'default', 'front-config')!.data, { replicas: '3' });
    const instances = await h.dmJson<{ name: string; type: string; path: string }[]>([
      'types',
      'instances',
      'all',
    ]);
    const site = instances.data.filter((i) => i.name.startsWith('front'));
    assert.deepEqual(
      site.map((i) => [i.name, i.type, i.path]),
      [
        ['front', 'web.jinja', '$.resources[0]'],
        ['front-config', 'ConfigMap', '$.resources[0].resources[0]'],
        ['front-svc', 'Service', '$.resources[0].resources[1]'],
      ],
    );
    const types = await h.dmJson<{ type: string; instances: number }[]>(['types']);
    assert.ok(types.data.some((t) => t.type === 'web.jinja' && t.instances === 1));
    const m = await h.dmJson<ManifestView>(['manifests', 'site', '1']);
    assert.deepEqual(
      m.data.inputConfig.imports.map((i) => i.name),
      ['web.jinja'],
    );
    const svc = await h.dmJson<{ name: string; path: string }[]>(['types', 'instances', 'Service']);
    assert.ok(svc.data.some((i) => i.name === 'front-svc'));
  });

  it('deploys a stream of Kubernetes objects (rendered documents)', async () => {
    const docs = h.file(
      'objects.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: doc-a}\ndata: {k: v}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: doc-a}\n',
    );
    const r = await h.dm(['deploy', docs, '--name', 'docs']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(h.standin.get('v1', 'ConfigMap', 'default', 'doc-a'));
    assert.ok(h.standin.get('v1', 'Secret', 'default', 'doc-a'));
  });

  it('deploys Deckhand-style layered documents: rendered, then their Kubernetes objects applied', async () => {
    const docs = h.file(
      'layered.yaml',
      `schema: deckhand/LayeringPolicy/v1
metadata: {schema: metadata/Control/v1, name: layering-policy}
data: {layerOrder: [global, site]}
---
schema: example/Kind/v1
metadata:
  schema: metadata/Document/v1
  name: cm
  layeringDefinition: {abstract: false, layer: site}
data: {apiVersion: v1, kind: ConfigMap, metadata: {name: layered}, data: {k: v}}
`,
    );
    const r = await h.dm(['deploy', docs, '--name', 'layered']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(h.standin.get('v1', 'ConfigMap', 'default', 'layered')!.data, { k: 'v' });
  });

  it('deploys a directory of layered dm/Configuration/v1 documents: the site layer specialises the global one', async () => {
    const dir = join(dirname(h.file('placeholder.txt', '')), 'site-docs');
    mkdirSync(dir);
    const put = (name: string, text: string) => writeFileSync(join(dir, name), text);
    put(
      'policy.yaml',
      'schema: deckhand/LayeringPolicy/v1\nmetadata: {schema: metadata/Control/v1, name: layering-policy}\ndata: {layerOrder: [global, site]}\n',
    );
    put(
      'global.yaml',
      `schema: dm/Configuration/v1
metadata:
  schema: metadata/Document/v1
  name: shop
  labels: {app: shop}
  layeringDefinition: {abstract: true, layer: global}
data:
  resources:
  - name: shop-settings
    type: ConfigMap
    properties:
      data: {region: none, replicas: "1"}
`,
    );
    put(
      'site.yaml',
      `schema: dm/Configuration/v1
metadata:
  schema: metadata/Document/v1
  name: shop-eu
  layeringDefinition:
    abstract: false
    layer: site
    parentSelector: {app: shop}
    actions:
    - {method: merge, path: .}
data:
  resources:
  - name: shop-settings
    type: ConfigMap
    properties:
      data: {region: eu-west, replicas: "3"}
`,
    );
    const r = await h.dm(['deploy', dir, '--name', 'shop']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(h.standin.get('v1', 'ConfigMap', 'default', 'shop-settings')!.data, {
      region: 'eu-west',
      replicas: '3',
    });
  });

  it("deploys a registry reference in DM's own form, recording the exact version and digest", async () => {
    const fixtures = join(dirname(DM_BIN), '..', 'registry-fixtures');
    const r = await h.dm([
      '--registry',
      'dm-samples/templates',
      '--registry-dir',
      fixtures,
      '--properties',
      'maxMemory=64mb,port=6380',
      'deploy',
      'redis:v1.0',
      '--name',
      'cache',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const svc = h.standin.get('v1', 'Service', 'default', 'cache');
    assert.ok(svc, "the template's Service was applied");
    assert.equal((svc!.spec as { ports: { port: number }[] }).ports[0]!.port, 6380);
    const config = h.standin.get('v1', 'ConfigMap', 'default', 'cache-config');
    assert.match(String((config!.data as Record<string, string>)['redis.conf']), /maxmemory 64mb/);
    const m = await h.dmJson<{ references: { reference: string; resolved: string; digest: string }[] }>([
      'manifests',
      'cache',
      '1',
    ]);
    assert.deepEqual(
      m.data.references.map((x) => [x.reference, x.resolved]),
      [['github.com/dm-samples/templates/redis:v1.0', 'github.com/dm-samples/templates/redis:=v1.0.3']],
    );
    assert.match(m.data.references[0]!.digest, /^sha256:[0-9a-f]{64}$/);
  });

  it('a short reference without a default registry is a usage error naming it', async () => {
    const r = await h.dm(['deploy', 'redis:v1']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /'redis:v1' is a short reference, but no default registry is set/);
  });
});

describe('dm deploy --dry-run without a reachable cluster', () => {
  it('plans against the last manifest (offline)', async () => {
    const h = await deployHarness();
    try {
      const config = h.file('off.yaml', 'resources:\n- {name: off-a, type: ConfigMap}\n');
      await h.dm(['deploy', config, '--name', 'off']);
      await h.standin.close();
      const r = await h.dmJson<{
        server: boolean;
        unchanged: { name: string }[];
        create: { name: string }[];
      }>([
        'deploy',
        h.file('off2.yaml', 'resources:\n- {name: off-a, type: ConfigMap}\n- {name: off-b, type: Secret}\n'),
        '--name',
        'off',
        '--dry-run',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.data.server, false);
      assert.deepEqual(
        r.data.unchanged.map((x) => x.name),
        ['off-a'],
      );
      assert.deepEqual(
        r.data.create.map((x) => x.name),
        ['off-b'],
      );
      const real = await h.dm(['deploy', config, '--name', 'off']);
      assert.equal(real.code, 5, real.stderr);
    } finally {
      await h.close().catch(() => {});
    }
  });
});

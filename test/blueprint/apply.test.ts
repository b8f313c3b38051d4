/**
 * `dm blueprint apply`: the real CLI with the real kubectl against the stand-in API server
 * (test/deploy/harness.ts); manifestLayers() on rendered results.
 */
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { manifestLayers } from '../../client/src/blueprint/apply.js';
import type { RenderResult } from '../../client/src/blueprint/index.js';
import { type DeployHarness, DM_BIN, deployHarness } from '../deploy/harness.js';

const root = join(DM_BIN, '..', '..');
const SAMPLE = join(root, 'registry-fixtures/platform/namespace-blueprint/v1');

const IMPORTS = `installation:
  name: team-a
  namespace: default
  imports:
    targets: [{name: cluster, target: my-cluster}]
    data: [{name: namespace, dataRef: ns}]
scope:
  targets:
    my-cluster:
      apiVersion: landscaper.gardener.cloud/v1alpha1
      kind: Target
      metadata: {name: my-cluster, namespace: default}
      spec: {type: landscaper.gardener.cloud/kubernetes-cluster, config: {}}
  dataObjects:
    ns: {name: team-a, team: a}
`;

const manifestItem = (name: string, cm: string, dependsOn?: string[]) => ({
  name,
  type: 'landscaper.gardener.cloud/kubernetes-manifest',
  ...(dependsOn ? { dependsOn } : {}),
  config: {
    manifests: [
      { policy: 'manage', manifest: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cm } } },
    ],
  },
});

describe('manifestLayers()', () => {
  it('manifestLayers() keeps dependsOn layers and installation order, and lists the items it does not apply', () => {
    const result: RenderResult = {
      installations: {
        root: {
          deployItems: [
            manifestItem('b', 'cm-b', ['a']),
            manifestItem('a', 'cm-a'),
            { name: 'h', type: 'landscaper.gardener.cloud/helm' },
          ],
          deployOrder: [['a', 'h'], ['b']],
        },
        'root/sub': { deployItems: [manifestItem('c', 'cm-c')], deployOrder: [['c']] },
      },
    };
    const { layers, skipped } = manifestLayers(result);
    assert.deepEqual(
      layers.map((l) => [l.items, l.objects.map((o) => (o.metadata as { name: string }).name)]),
      [
        [['root/a'], ['cm-a']],
        [['root/b'], ['cm-b']],
        [['root/sub/c'], ['cm-c']],
      ],
    );
    assert.deepEqual(skipped, [{ installation: 'root', item: 'h', type: 'landscaper.gardener.cloud/helm' }]);
  });
});

describe('dm blueprint apply against the stand-in', () => {
  let h: DeployHarness;
  before(async () => {
    h = await deployHarness();
  });
  after(async () => {
    await h.close();
  });

  it('dm blueprint apply creates the Namespace of the sample blueprint under the installation name', async () => {
    const imports = h.file('imports.yaml', IMPORTS);
    const r = await h.dmJson<{ deployment: string; status: string; layers: { items: string[] }[] }>([
      'blueprint',
      'apply',
      SAMPLE,
      '--imports',
      imports,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.data.deployment, 'team-a');
    assert.equal(r.data.status, 'applied');
    assert.deepEqual(r.data.layers[0]?.items, ['team-a/namespace']);
    const ns = h.standin.get('v1', 'Namespace', '', 'team-a');
    assert.ok(ns, 'the Namespace exists');
    assert.equal((ns.metadata as { labels: Record<string, string> }).labels.team, 'a');
  });

  it('dm blueprint apply --dry-run plans without changing the cluster', async () => {
    const imports = h.file('imports-b.yaml', IMPORTS.replace(/team-a/g, 'team-b'));
    const r = await h.dmJson<{ status: string }>([
      'blueprint',
      'apply',
      SAMPLE,
      '--imports',
      imports,
      '--dry-run',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.data.status, 'dry-run');
    assert.equal(h.standin.get('v1', 'Namespace', '', 'team-b'), undefined);
  });

  it('dm blueprint apply: applied again it deletes nothing on the way; a wrong --name meets the prune guard, --prune-all lets it go on', async () => {
    // Two layers: the Namespace, then two ConfigMaps that depend on it.
    const bp = join(h.dir, 'two-layers');
    cpSync(SAMPLE, bp, { recursive: true });
    writeFileSync(
      join(bp, 'deploy-execution.yaml'),
      `deployItems:
- name: namespace
  type: landscaper.gardener.cloud/kubernetes-manifest
  target: {import: cluster}
  config:
    manifests:
    - {policy: manage, manifest: {apiVersion: v1, kind: Namespace, metadata: {name: "{{ imports.namespace.name }}"}}}
- name: settings
  type: landscaper.gardener.cloud/kubernetes-manifest
  target: {import: cluster}
  dependsOn: [namespace]
  config:
    manifests:
    - {policy: manage, manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: one, namespace: "{{ imports.namespace.name }}"}}}
    - {policy: manage, manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: two, namespace: "{{ imports.namespace.name }}"}}}
`,
    );
    const imports = h.file('imports-l.yaml', IMPORTS.replace(/team-a/g, 'team-l'));
    const uid = () =>
      (h.standin.get('v1', 'ConfigMap', 'team-l', 'one')?.metadata as { uid?: string } | undefined)?.uid;
    const first = await h.dm(['blueprint', 'apply', bp, '--imports', imports]);
    assert.equal(first.code, 0, first.stderr);
    const before = uid();
    assert.ok(before, 'ConfigMap one exists');
    // Again, unchanged: the first layer's step must not prune the second layer's objects (2 of 3).
    const again = await h.dm(['blueprint', 'apply', bp, '--imports', imports]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(uid(), before, 'ConfigMap one was never deleted and created again');

    // The sample (one Namespace) under the name of the three-object deployment: it would prune all 3.
    const other = h.file('imports-m.yaml', IMPORTS.replace(/team-a/g, 'team-m'));
    const refused = await h.dm(['blueprint', 'apply', SAMPLE, '--imports', other, '--name', 'team-l']);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(
      refused.stderr,
      /^error: this deploy would prune every object \(3 of 3\) of deployment 'team-l'; check the configuration and --name, or pass --prune-all$/m,
    );
    assert.equal(uid(), before, 'nothing pruned');
    assert.equal(h.standin.get('v1', 'Namespace', '', 'team-m'), undefined, 'nothing applied');
    const forced = await h.dm([
      'blueprint',
      'apply',
      SAMPLE,
      '--imports',
      other,
      '--name',
      'team-l',
      '--prune-all',
    ]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.ok(h.standin.get('v1', 'Namespace', '', 'team-m'), 'applied');
    assert.equal(uid(), undefined, 'pruned with --prune-all');
  });
});

/**
 * Deploy a 200-resource configuration against the Kubernetes stand-in with the real kubectl:
 * kubectl invocations and wall time of `deployConfiguration` (one kubectl apply per dependency
 * level), against a baseline measured in the same run: one `kubectl apply --server-side` per object.
 * Run: node dist/bench/deploy.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deployConfiguration } from '../client/src/deploy/deploy.js';
import { Kubectl } from '../client/src/deploy/kubectl.js';
import type { Primitive } from '../client/src/deploy/model.js';
import { toObjects } from '../client/src/deploy/objects.js';
import { formatYamlDocuments } from '../client/src/document/yaml.js';
import { openStateDatabase } from '../client/src/state/database.js';
import { DeploymentStore } from '../client/src/state/deployments-store.js';
import { startKubeStandin } from '../test/kube-standin/server.js';

function configuration(prefix: string): Primitive[] {
  const rs: Primitive[] = [{ name: `${prefix}-ns`, type: 'Namespace' }];
  const ns = `${prefix}-ns`;
  for (let i = 0; i < 60; i++) {
    rs.push({
      name: `${prefix}-svc-${i}`,
      type: 'Service',
      properties: { metadata: { namespace: ns }, spec: { ports: [{ port: 80 + i }] } },
    });
  }
  for (let i = 0; i < 60; i++) {
    rs.push({
      name: `${prefix}-cfg-${i}`,
      type: 'ConfigMap',
      properties: {
        metadata: { namespace: ns },
        data: { endpoint: `$(ref.${prefix}-svc-${i}.spec.clusterIP)` },
      },
    });
  }
  for (let i = 0; i < 79; i++) {
    rs.push({
      name: `${prefix}-app-${i}`,
      type: 'apps/v1/Deployment',
      properties: {
        metadata: { namespace: ns },
        spec: {
          selector: { matchLabels: { app: `a${i}` } },
          template: {
            metadata: { labels: { app: `a${i}` } },
            spec: { containers: [{ name: 'c', image: 'nginx' }] },
          },
        },
      },
    });
  }
  return rs;
}

const standin = await startKubeStandin();
const dir = mkdtempSync(join(tmpdir(), 'dm-bench-deploy-'));
const kubeconfig = standin.writeKubeconfig(dir);
const cacheDir = join(dir, 'kube-cache');
try {
  // Warm kubectl's discovery cache for both runs alike.
  await new Kubectl({ kubeconfig, cacheDir }).run(['api-resources']);

  const resources = configuration('dm');
  const database = openStateDatabase(join(dir, 'state.db'));
  const kubectl = new Kubectl({ kubeconfig, cacheDir });
  const t0 = performance.now();
  const result = await deployConfiguration({
    name: 'bench',
    input: {
      inputConfig: { config: '', imports: [] },
      config: { resources },
      layout: { resources: resources.map((r) => ({ name: r.name, type: r.type })) },
      references: [],
    },
    store: new DeploymentStore(database),
    kubectl,
  });
  const dmMs = performance.now() - t0;
  await database.close();
  if (result.status !== 'applied')
    throw new Error(
      `bench deploy failed: ${JSON.stringify(result.resources.find((r) => r.outcome !== 'applied'))}`,
    );
  const applies = kubectl.calls.filter((c) => c.includes('apply')).length;

  // Baseline: the same objects (references filled in), one kubectl process per object, in order.
  const base = configuration('base').map((r) => ({
    ...r,
    properties: JSON.parse(JSON.stringify(r.properties ?? {}).replace(/\$\(ref\.[^)]+\)/g, '10.0.0.1')),
  }));
  const objects = toObjects(base, {
    served: undefined,
    defaultNamespace: 'default',
    labels: {},
    annotations: {},
  });
  const baseline = new Kubectl({ kubeconfig, cacheDir });
  const t1 = performance.now();
  for (const o of objects) {
    const r = await baseline.run(
      ['apply', '--server-side', '--field-manager=dm', '-f', '-'],
      formatYamlDocuments([o.body]),
    );
    if (r.code !== 0) throw new Error(`baseline apply failed: ${r.stderr}`);
  }
  const baseMs = performance.now() - t1;

  console.log(`deploy of ${resources.length} resources against the stand-in (real kubectl):`);
  console.log(
    `  dm deploy:  ${(dmMs / 1000).toFixed(2)} s, ${kubectl.invocations} kubectl invocations (${applies} apply calls, one per dependency level)`,
  );
  console.log(
    `  baseline:   ${(baseMs / 1000).toFixed(2)} s, ${baseline.invocations} kubectl invocations (one apply per object)`,
  );
  console.log(
    `  speed-up:   ${(baseMs / dmMs).toFixed(1)}x wall time, ${(baseline.invocations / kubectl.invocations).toFixed(1)}x fewer kubectl processes`,
  );
} finally {
  await standin.close();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * `dm deploy --dry-run` with no kubeconfig at all: the plan (objects, their `$(ref)` order) and a
 * statement that no cluster was contacted, exit 0; without --dry-run the same command fails naming
 * the missing context.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

const CONFIG = `resources:
- name: settings
  type: v1/ConfigMap
  properties: {data: {a: b}}
- name: web
  type: apps/v1/Deployment
  properties:
    spec:
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers:
          - name: web
            image: nginx
            env: [{name: SETTINGS, value: $(ref.settings.metadata.name)}]
`;

describe('dm deploy --dry-run without a cluster', () => {
  it('dm deploy --dry-run with no kubeconfig prints the plan in $(ref) order and says no cluster was contacted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-dry-'));
    await writeFile(join(dir, 'config.yaml'), CONFIG);
    const env = { ...(await isolatedEnv()), KUBECONFIG: join(dir, 'no-such-kubeconfig') };
    const json = await runDm(['deploy', 'config.yaml', '--name', 'dry', '--dry-run', '-o', 'json'], {
      cwd: dir,
      env,
    });
    assert.equal(json.code, 0, json.stderr);
    const plan = JSON.parse(json.stdout) as {
      server: boolean;
      offlineReason?: string;
      create: { name: string; kind: string; level?: number }[];
      prune: unknown[];
    };
    assert.equal(plan.server, false);
    assert.match(plan.offlineReason ?? '', /kubeconfig/);
    assert.deepEqual(
      plan.create.map((c) => [c.name, c.kind]),
      [
        ['settings', 'ConfigMap'],
        ['web', 'Deployment'],
      ],
    );
    const [settings, web] = plan.create;
    assert.ok((settings?.level ?? 0) < (web?.level ?? 0), 'the referenced ConfigMap comes first');
    assert.deepEqual(plan.prune, []);

    const text = await runDm(['deploy', 'config.yaml', '--name', 'dry', '--dry-run'], { cwd: dir, env });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /no cluster was contacted/);
    const lines = text.stdout.split('\n');
    const at = (s: string) => lines.findIndex((l) => l.includes(s));
    assert.ok(
      at('ConfigMap default/settings') > 0 && at('ConfigMap default/settings') < at('Deployment default/web'),
    );

    const real = await runDm(['deploy', 'config.yaml', '--name', 'dry'], { cwd: dir, env });
    assert.equal(real.code, 5, real.stderr);
    assert.match(real.stderr, /no Kubernetes context is selected/);
  });

  it('a dry run writes nothing: dm deploy --dry-run, dm blueprint apply --dry-run (and reading commands) create no deployments database', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-dry-'));
    await writeFile(join(dir, 'config.yaml'), CONFIG);
    await writeFile(
      join(dir, 'imports.yaml'),
      'installation: {name: team-a, namespace: default, imports: {targets: [{name: cluster, target: c}], data: [{name: namespace, dataRef: ns}]}}\n' +
        'scope:\n  targets:\n    c: {apiVersion: landscaper.gardener.cloud/v1alpha1, kind: Target, metadata: {name: c, namespace: default}, spec: {type: landscaper.gardener.cloud/kubernetes-cluster, config: {}}}\n' +
        '  dataObjects: {ns: {name: team-a, team: a}}\n',
    );
    const isolated = await isolatedEnv();
    const env = { ...isolated, KUBECONFIG: join(dir, 'no-such-kubeconfig') };
    const state = join(isolated.XDG_STATE_HOME!, 'dm');
    const sample = join(repoRoot, 'registry-fixtures/platform/namespace-blueprint/v1');
    for (const args of [
      ['deploy', 'config.yaml', '--name', 'dry', '--dry-run'],
      ['blueprint', 'apply', sample, '--imports', 'imports.yaml', '--dry-run'],
      ['deployments', 'list'],
      ['types'],
    ]) {
      const r = await runDm(args, { cwd: dir, env });
      assert.equal(r.code, 0, `dm ${args.join(' ')}: ${r.stderr}`);
      assert.equal(existsSync(state), false, `dm ${args.join(' ')} wrote ${state}`);
    }
  });
});

/**
 * registry-fixtures/platform/dm-registry (README, "Running dm-registry for an organisation"): its
 * example expands to N replicas of dm-registry reading PostgreSQL's URL and the credential key from
 * one Secret, ready on /readyz, and a migration Job named after the image; the real `dm` plans it
 * with a dry run against the Kubernetes stand-in (nothing created), applies it, and a second
 * deployment of the same image leaves the Job as it is (the migration runs once).
 */
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DeployHarness, DM_BIN, deployHarness } from './harness.js';

const EXAMPLE = join(
  dirname(DM_BIN),
  '..',
  'registry-fixtures',
  'platform',
  'dm-registry',
  'v1',
  'example.yaml',
);

interface Resource {
  name: string;
  type: string;
  properties: Record<string, unknown>;
}

interface Container {
  image: string;
  args: string[];
  env: { name: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[];
  readinessProbe?: { httpGet: { path: string; port: string } };
  livenessProbe?: { httpGet: { path: string; port: string } };
}

interface Plan {
  server: boolean;
  create: { name: string; kind: string }[];
  update: { name: string }[];
  unchanged: { name: string; kind: string }[];
  prune: { name: string }[];
}

describe('registry-fixtures/platform/dm-registry', () => {
  let h: DeployHarness;
  before(async () => {
    h = await deployHarness();
  });
  after(() => h?.close());

  it('expands its example to a Secret, a migration Job, 3 replicas ready on /readyz, a Service and a PDB', async () => {
    const r = await h.dmJson<{ config: { resources: Resource[] } }>(['expand', EXAMPLE]);
    assert.equal(r.code, 0, r.stderr);
    const byType = new Map(r.data.config.resources.map((x) => [x.type, x]));
    assert.deepEqual([...byType.keys()].sort(), [
      'apps/v1/Deployment',
      'batch/v1/Job',
      'policy/v1/PodDisruptionBudget',
      'v1/Secret',
      'v1/Service',
    ]);
    const secret = byType.get('v1/Secret')!.properties as {
      metadata: { name: string };
      data: Record<string, string>;
    };
    assert.match(
      Buffer.from(secret.data['database-url']!, 'base64').toString('utf8'),
      /^postgres:\/\/dm:[^@]+@acme-db:5432\/dm$/,
    );
    assert.equal(Buffer.from(secret.data['secret-key']!, 'base64').toString('utf8').length, 44);

    const deployment = byType.get('apps/v1/Deployment')!.properties as {
      metadata: { labels: Record<string, string> };
      spec: { replicas: number; template: { spec: { containers: Container[] } } };
    };
    assert.equal(deployment.spec.replicas, 3);
    assert.equal(deployment.metadata.labels['app.kubernetes.io/part-of'], 'acme');
    const [server] = deployment.spec.template.spec.containers;
    assert.deepEqual(server!.args, ['start', '--port', '8080', '--index', 'github.com/acme/templates']);
    assert.equal(server!.readinessProbe?.httpGet.path, '/readyz');
    assert.equal(server!.livenessProbe?.httpGet.path, '/healthz');
    const fromSecret = (c: Container) =>
      Object.fromEntries(c.env.map((e) => [e.name, e.valueFrom?.secretKeyRef]));
    assert.deepEqual(fromSecret(server!), {
      DM_REGISTRY_DB: { name: secret.metadata.name, key: 'database-url' },
      DM_REGISTRY_SECRET_KEY: { name: secret.metadata.name, key: 'secret-key' },
    });

    const job = byType.get('batch/v1/Job')!.properties as {
      metadata: { name: string };
      spec: { template: { spec: { containers: Container[] } } };
    };
    assert.match(job.metadata.name, /^acme-registry-migrate-[0-9a-f]{10}$/);
    const [migrate] = job.spec.template.spec.containers;
    assert.deepEqual(migrate!.args, ['migrate']);
    assert.equal(migrate!.image, server!.image);
    assert.deepEqual(fromSecret(migrate!), fromSecret(server!));
  });

  it('plans with a dry run against the stand-in (creating nothing), applies, and runs the migration once', async () => {
    const before = h.standin.objects().length;
    const dry = await h.dmJson<Plan>(['deploy', EXAMPLE, '--name', 'acme-registry', '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.data.server, true);
    assert.deepEqual(dry.data.create.map((c) => c.kind).sort(), [
      'Deployment',
      'Job',
      'PodDisruptionBudget',
      'Secret',
      'Service',
    ]);
    assert.equal(h.standin.objects().length, before, 'a dry run creates nothing');

    const applied = await h.dm(['deploy', EXAMPLE, '--name', 'acme-registry']);
    assert.equal(applied.code, 0, applied.stderr);
    const deployment = h.standin.get('apps/v1', 'Deployment', 'default', 'acme-registry');
    assert.ok(deployment, 'the Deployment was applied');
    assert.equal((deployment.spec as { replicas: number }).replicas, 3);
    const jobs = h.standin.objects().filter((o) => o.kind === 'Job');
    assert.equal(jobs.length, 1);

    // The same image again: the Job is unchanged, so it does not run a second time.
    const again = await h.dmJson<Plan>(['deploy', EXAMPLE, '--name', 'acme-registry', '--dry-run']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual([again.data.create, again.data.update, again.data.prune], [[], [], []]);
    assert.ok(
      again.data.unchanged.some(
        (u) => u.kind === 'Job' && u.name === (jobs[0]!.metadata as { name: string }).name,
      ),
    );
  });
});

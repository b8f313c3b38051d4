/**
 * The stand-in API server, driven by the real kubectl (spec/deployments.md §4). kubectl is a
 * dispatcher that picks its build from the server's /version; the stand-in reports 1.32.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubectl, normalizeRequestLine, requestLinesFromKubectlLog } from './kubectl.js';
import { MANIFEST, NAMESPACE_MANIFEST, SCENARIOS } from './scenarios.js';
import { type KubeStandin, type StandinOptions, startKubeStandin } from './server.js';

const fixtures = new URL('../../../test/kube-standin/fixtures/', import.meta.url).pathname;

interface Harness {
  standin: KubeStandin;
  dir: string;
  kubeconfig: string;
  cacheDir: string;
  run: (args: string[], input?: string) => ReturnType<typeof kubectl>;
  file: (name: string, text: string) => string;
  close: () => Promise<void>;
}

async function harness(options: StandinOptions = {}): Promise<Harness> {
  const standin = await startKubeStandin(options);
  const dir = mkdtempSync(join(tmpdir(), 'kube-standin-test-'));
  const kubeconfig = standin.writeKubeconfig(dir, { contexts: { other: 'other-ns' } });
  const cacheDir = join(dir, 'cache');
  return {
    standin,
    dir,
    kubeconfig,
    cacheDir,
    run: (args, input) => kubectl(args, { kubeconfig, cacheDir, ...(input === undefined ? {} : { input }) }),
    file: (name, text) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
    close: async () => {
      await standin.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Raw HTTPS call to the stand-in (for what kubectl cannot show, such as a 410 on a watch). */
function call(
  standin: KubeStandin,
  method: string,
  path: string,
  options: { token?: string | null; body?: string; contentType?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, standin.url);
    const headers: Record<string, string> = {};
    if (options.token !== null) headers.Authorization = `Bearer ${options.token ?? standin.token}`;
    if (options.contentType) headers['Content-Type'] = options.contentType;
    const req = request(url, { method, ca: standin.caCert, headers }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const apply = ['apply', '--server-side', '--field-manager=dm'];

describe('kube stand-in with the real kubectl', () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(async () => {
    await h.close();
  });

  it('/version reports 1.32 and the kubectl dispatcher runs 1.32', async () => {
    const r = await h.run(['version', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const v = JSON.parse(r.stdout);
    assert.equal(v.serverVersion.minor, '32');
    assert.match(v.clientVersion.gitVersion, /^v1\.32\./);
  });

  it('answers 401 with a Status without the right token', async () => {
    const r = await call(h.standin, 'GET', '/api/v1/namespaces', { token: null });
    assert.equal(r.status, 401);
    assert.equal(JSON.parse(r.body).reason, 'Unauthorized');
    const dir = mkdtempSync(join(tmpdir(), 'kube-standin-notoken-'));
    const kubeconfig = h.standin.writeKubeconfig(dir, { wrongToken: true });
    const k = await kubectl(['get', 'configmaps'], { kubeconfig, cacheDir: join(dir, 'cache') });
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, /Unauthorized|must be logged in/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('server-side apply creates (201), updates (200) and bumps resourceVersion and generation', async () => {
    const f = h.file('m1.yaml', MANIFEST.replaceAll('name: a}', 'name: ssa-a}').replaceAll('web', 'ssa-web'));
    const r1 = await h.run([...apply, '-f', f]);
    assert.equal(r1.code, 0, r1.stderr);
    const patches = h.standin.log.filter((e) => e.method === 'PATCH');
    assert.deepEqual(
      patches.map((p) => [
        p.status,
        p.contentType,
        p.query.fieldManager,
        p.query.fieldValidation,
        p.query.force,
      ]),
      [
        [201, 'application/apply-patch+yaml', 'dm', 'Strict', 'false'],
        [201, 'application/apply-patch+yaml', 'dm', 'Strict', 'false'],
      ],
    );
    const cm1 = h.standin.get('v1', 'ConfigMap', 'default', 'ssa-a')!;
    const dep1 = h.standin.get('apps/v1', 'Deployment', 'default', 'ssa-web')!;
    assert.equal((dep1.metadata as { generation: number }).generation, 1);
    // Unchanged apply: 200, no new resourceVersion.
    h.standin.clearLog();
    const r2 = await h.run([...apply, '-f', f]);
    assert.equal(r2.code, 0, r2.stderr);
    assert.deepEqual(
      h.standin.log.filter((e) => e.method === 'PATCH').map((p) => p.status),
      [200, 200],
    );
    const cm2 = h.standin.get('v1', 'ConfigMap', 'default', 'ssa-a')!;
    assert.equal(
      (cm2.metadata as { resourceVersion: string }).resourceVersion,
      (cm1.metadata as { resourceVersion: string }).resourceVersion,
    );
    // A spec change bumps generation; a label change does not.
    const changed = readFileSync(f, 'utf8').replace('image: nginx', 'image: nginx:2');
    await h.run([...apply, '-f', h.file('m1b.yaml', changed)]);
    const dep2 = h.standin.get('apps/v1', 'Deployment', 'default', 'ssa-web')!;
    assert.equal((dep2.metadata as { generation: number }).generation, 2);
    const labelled = changed.replace(
      'metadata: {name: ssa-web}',
      'metadata: {name: ssa-web, labels: {x: y}}',
    );
    await h.run([...apply, '-f', h.file('m1c.yaml', labelled)]);
    const dep3 = h.standin.get('apps/v1', 'Deployment', 'default', 'ssa-web')!;
    assert.equal((dep3.metadata as { generation: number }).generation, 2);
    assert.notEqual(
      (dep3.metadata as { resourceVersion: string }).resourceVersion,
      (dep2.metadata as { resourceVersion: string }).resourceVersion,
    );
  });

  it('field ownership: conflicts with another manager, --force-conflicts takes over, dropped fields go', async () => {
    const v1 = h.file(
      'own1.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owned}\ndata: {a: "1", b: "2"}\n',
    );
    assert.equal((await h.run([...apply, '-f', v1])).code, 0);
    // Same value from another manager: shared ownership, no conflict.
    const same = h.file(
      'own2.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owned}\ndata: {a: "1"}\n',
    );
    assert.equal((await h.run(['apply', '--server-side', '--field-manager=other', '-f', same])).code, 0);
    // Changed value: 409 with a FieldManagerConflict cause.
    const changed = h.file(
      'own3.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owned}\ndata: {b: "3"}\n',
    );
    h.standin.clearLog();
    const conflict = await h.run(['apply', '--server-side', '--field-manager=other', '-f', changed]);
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /conflict with "dm"/);
    const patch = h.standin.log.find((e) => e.method === 'PATCH')!;
    assert.equal(patch.status, 409);
    const forced = await h.run([
      'apply',
      '--server-side',
      '--field-manager=other',
      '--force-conflicts',
      '-f',
      changed,
    ]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(h.standin.log.at(-1)!.query.force, 'true');
    let cm = h.standin.get('v1', 'ConfigMap', 'default', 'owned')!;
    assert.deepEqual(cm.data, { a: '1', b: '3' });
    // other's forced apply sent only b, so other gave up a (dm still owned it); dm now drops a and b:
    // a goes (nobody owns it), b stays (other took it over).
    const none = h.file(
      'own4.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owned}\ndata: {c: "4"}\n',
    );
    assert.equal((await h.run([...apply, '-f', none])).code, 0);
    cm = h.standin.get('v1', 'ConfigMap', 'default', 'owned')!;
    assert.deepEqual(cm.data, { b: '3', c: '4' });
    // other drops everything it owns: b goes, c (dm's) stays.
    const empty = h.file('own5.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owned}\n');
    assert.equal((await h.run(['apply', '--server-side', '--field-manager=other', '-f', empty])).code, 0);
    cm = h.standin.get('v1', 'ConfigMap', 'default', 'owned')!;
    assert.deepEqual(cm.data, { c: '4' });
    const managers = (cm.metadata as { managedFields: { manager: string }[] }).managedFields.map(
      (m) => m.manager,
    );
    assert.deepEqual(managers, ['dm']);
  });

  it('dry-run stores nothing', async () => {
    const f = h.file('dry.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry}\ndata: {a: "1"}\n');
    const r = await h.run([...apply, '--dry-run=server', '-f', f]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /server dry run/);
    assert.equal(h.standin.log.at(-1)!.query.dryRun, 'All');
    assert.equal(h.standin.get('v1', 'ConfigMap', 'default', 'dry'), undefined);
  });

  it('validates names (422 with the Kubernetes message) per rule: subdomain, Namespace label, Service DNS-1035', async () => {
    const bad = h.file(
      'bad.yaml',
      [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n',
        'apiVersion: v1\nkind: Namespace\nmetadata: {name: a.b}\n',
        'apiVersion: v1\nkind: Service\nmetadata: {name: 1svc}\nspec: {ports: [{port: 80}]}\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good.name}\n',
      ].join('---\n'),
    );
    h.standin.clearLog();
    const r = await h.run([...apply, '-f', bad]);
    assert.equal(r.code, 1);
    assert.deepEqual(
      h.standin.log.filter((e) => e.method === 'PATCH').map((e) => e.status),
      [422, 422, 422, 201],
    );
    assert.match(r.stderr, /a lowercase RFC 1123 subdomain/);
    assert.match(r.stderr, /a lowercase RFC 1123 label/);
    assert.match(r.stderr, /a DNS-1035 label/);
  });

  it('requires the namespace to exist (404) and refuses content in a terminating one (403)', async () => {
    const h2 = await harness({ namespaceFinalizeMs: null });
    try {
      const f = h2.file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n');
      const missing = await h2.run([...apply, '-n', 'nope', '-f', f]);
      assert.notEqual(missing.code, 0);
      assert.match(missing.stderr, /namespaces "nope" not found/);
      await h2.run([...apply, '-f', h2.file('ns.yaml', NAMESPACE_MANIFEST)]);
      assert.equal((await h2.run([...apply, '-n', 'team', '-f', f])).code, 0);
      await h2.run(['delete', 'namespace', 'team', '--wait=false']);
      const terminating = await h2.run([...apply, '-n', 'team', '-f', f.replace('cm.yaml', 'cm.yaml')]);
      // The existing object is updated only if unchanged: a new one is refused.
      const other = h2.file('cm2.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yy}\n');
      const refused = await h2.run([...apply, '-n', 'team', '-f', other]);
      assert.equal(terminating.code, 0);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /because it is being terminated/);
    } finally {
      await h2.close();
    }
  });

  it('is strict: unknown kinds are not discovered, unknown fields are a 400 strict decoding error, protobuf a 415', async () => {
    const unknownKind = h.file('uk.yaml', 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n');
    const r1 = await h.run([...apply, '-f', unknownKind]);
    assert.notEqual(r1.code, 0);
    assert.match(r1.stderr, /no matches for kind "Gadget"|could not find the requested resource/);
    const unknownField = h.file(
      'uf.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: uf}\ndatta: {a: "1"}\n',
    );
    const r2 = await h.run([...apply, '-f', unknownField]);
    assert.notEqual(r2.code, 0);
    assert.match(r2.stderr, /strict decoding error: unknown field "datta"/);
    const r3 = await call(h.standin, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: 'x',
      contentType: 'application/vnd.kubernetes.protobuf',
    });
    assert.equal(r3.status, 415);
    const r4 = await call(h.standin, 'PATCH', '/api/v1/namespaces/default/configmaps/owned', {
      body: '{}',
      contentType: 'application/strategic-merge-patch+json',
    });
    assert.equal(r4.status, 415);
  });

  it('CRD then CR: the CR is refused until the CRD is Established, then served', async () => {
    // A slow establishment so the early apply surely comes before it, even on a busy machine.
    const h = await harness({ crdEstablishDelayMs: 3000 });
    try {
      const crd = h.file(
        'crd.yaml',
        `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object}}}}
`,
      );
      const cr = h.file(
        'cr.yaml',
        'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 3}\n',
      );
      assert.equal((await h.run([...apply, '-f', crd])).code, 0);
      const early = await h.run([...apply, '-f', cr]);
      assert.notEqual(early.code, 0);
      const wait = await h.run([
        'wait',
        '--for=condition=Established',
        'crd/widgets.example.com',
        '--timeout=10s',
      ]);
      assert.equal(wait.code, 0, wait.stderr);
      const late = await h.run([...apply, '-f', cr]);
      assert.equal(late.code, 0, late.stderr);
      assert.equal(
        (h.standin.get('example.com/v1', 'Widget', 'default', 'w1')!.spec as { size: number }).size,
        3,
      );
    } finally {
      await h.close();
    }
  });

  it('readiness is switchable: rollout status times out, then succeeds once the test makes it ready', async () => {
    const f = h.file('slow.yaml', MANIFEST.split('---\n')[1]!.replaceAll('web', 'slow'));
    h.standin.setReady('Deployment', 'default', 'slow', false);
    assert.equal((await h.run([...apply, '-f', f])).code, 0);
    const timeout = await h.run(['rollout', 'status', 'deployment/slow', '--timeout=1s']);
    assert.notEqual(timeout.code, 0);
    assert.match(timeout.stderr, /timed out/);
    const waiting = h.run(['wait', '--for=condition=Available', 'deployment/slow', '--timeout=20s']);
    setTimeout(() => h.standin.setReady('Deployment', 'default', 'slow', true), 500);
    const done = await waiting;
    assert.equal(done.code, 0, done.stderr);
  });

  it('watch replays every event after the requested resourceVersion and answers 410 once compacted', async () => {
    const list = JSON.parse((await call(h.standin, 'GET', '/api/v1/namespaces/default/configmaps')).body);
    const from = list.metadata.resourceVersion;
    const f = h.file(
      'w.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: watched}\ndata: {a: "1"}\n',
    );
    await h.run([...apply, '-f', f]);
    await h.run(['delete', '-f', f]);
    const replay = await call(
      h.standin,
      'GET',
      `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${from}&timeoutSeconds=1&fieldSelector=metadata.name%3Dwatched`,
    );
    const events = replay.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'DELETED'],
    );
    h.standin.compact();
    const expired = await call(h.standin, 'GET', `/api/v1/configmaps?watch=true&resourceVersion=${from}`);
    const event = JSON.parse(expired.body.trim());
    assert.equal(event.type, 'ERROR');
    assert.equal(event.object.code, 410);
    assert.equal(event.object.reason, 'Expired');
  });

  it('--context and --namespace pass through kubeconfig contexts', async () => {
    await h.run([
      ...apply,
      '-f',
      h.file('ons.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata: {name: other-ns}\n'),
    ]);
    const f = h.file('ctx.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ctx}\n');
    assert.equal((await h.run(['--context', 'other', ...apply, '-f', f])).code, 0);
    assert.ok(h.standin.get('v1', 'ConfigMap', 'other-ns', 'ctx'));
    assert.equal(h.standin.get('v1', 'ConfigMap', 'default', 'ctx'), undefined);
  });
});

describe('kube stand-in against recorded kubectl traffic', () => {
  for (const scenario of SCENARIOS) {
    it(`sees the recorded request sequence: ${scenario.name}`, async () => {
      const text = readFileSync(join(fixtures, `${scenario.name}.txt`), 'utf8');
      const recorded = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
      const h = await harness();
      try {
        const manifest = h.file('manifest.yaml', scenario.manifest ?? MANIFEST);
        const args = (a: string[]) => a.map((x) => (x === 'manifest.yaml' ? manifest : x));
        for (const setup of scenario.setup) await h.run(args(setup));
        h.standin.clearLog();
        const r = await h.run([...args(scenario.args), '-v=6']);
        assert.equal(r.code, 0, r.stderr);
        // What kubectl says it sent, and what the stand-in received (minus the dispatcher's /version).
        assert.deepEqual(requestLinesFromKubectlLog(r.stderr), recorded);
        const seen = h.standin.log
          .filter((e) => e.path !== '/version')
          .map((e) => normalizeRequestLine(`${e.method} ${e.path}?${new URLSearchParams(e.query)}`));
        assert.deepEqual(seen, recorded);
      } finally {
        await h.close();
      }
    });
  }

  it('serves legacy discovery when aggregated discovery is off (kubectl then reads each group version)', async () => {
    const h = await harness({ aggregatedDiscovery: false });
    try {
      const r = await h.run([...apply, '-f', h.file('manifest.yaml', MANIFEST)]);
      assert.equal(r.code, 0, r.stderr);
      const paths = h.standin.log.filter((e) => e.method === 'GET').map((e) => e.path);
      assert.ok(paths.includes('/api/v1'), paths.join(' '));
      assert.ok(paths.includes('/apis/apps/v1'), paths.join(' '));
    } finally {
      await h.close();
    }
  });

  it('without OpenAPI v3, kubectl default validation fails', async () => {
    const h = await harness({ openapi: false });
    try {
      const r = await h.run([...apply, '-f', h.file('manifest.yaml', MANIFEST)]);
      assert.notEqual(r.code, 0);
      assert.equal(h.standin.log.filter((e) => e.method === 'PATCH').length, 0);
    } finally {
      await h.close();
    }
  });
});

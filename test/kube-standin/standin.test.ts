/**
 * The stand-in API server, driven by the real kubectl (docs/deployments.md, "Testing against
 * Kubernetes"). kubectl is a dispatcher that picks its build from the server's /version; the
 * stand-in reports 1.32.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  assertFailed,
  assertSucceeded,
  kubectl,
  normalizeRequestLine,
  requestLinesFromKubectlLog,
} from './kubectl.js';
import { MANIFEST, NAMESPACE_MANIFEST, reactToWatch, SCENARIOS } from './scenarios.js';
import { type KubeStandin, type RequestRecord, type StandinOptions, startKubeStandin } from './server.js';

const fixtures = new URL('../../../test/kube-standin/fixtures/', import.meta.url).pathname;

interface Harness {
  standin: KubeStandin;
  dir: string;
  kubeconfig: string;
  cacheDir: string;
  run: (args: string[], input?: string) => ReturnType<typeof kubectl>;
  /** Runs kubectl and asserts it exited 0 (the message carries its stderr). */
  ok: (args: string[], input?: string) => ReturnType<typeof kubectl>;
  /** Runs kubectl and asserts it failed by itself (non-zero exit, not killed at the time limit). */
  fails: (args: string[]) => ReturnType<typeof kubectl>;
  file: (name: string, text: string) => string;
  close: () => Promise<void>;
}

async function harness(options: StandinOptions = {}): Promise<Harness> {
  const standin = await startKubeStandin(options);
  const dir = mkdtempSync(join(tmpdir(), 'kube-standin-test-'));
  const kubeconfig = standin.writeKubeconfig(dir, { contexts: { other: 'other-ns' } });
  const cacheDir = join(dir, 'cache');
  const run = (args: string[], input?: string) =>
    kubectl(args, { kubeconfig, cacheDir, ...(input === undefined ? {} : { input }) });
  return {
    standin,
    dir,
    kubeconfig,
    cacheDir,
    run,
    ok: async (args, input) => assertSucceeded(await run(args, input)),
    fails: async (args) => assertFailed(await run(args)),
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

/** Matches a watch request on a resource (`deployments`, …). */
const watching = (plural: string) => (r: RequestRecord) =>
  r.query.watch === 'true' && r.path.endsWith(`/${plural}`);

describe('kube stand-in with the real kubectl', () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(async () => {
    await h.close();
  });

  it('/version reports 1.32 and the kubectl dispatcher runs 1.32', async () => {
    const r = await h.ok(['version', '-o', 'json']);
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
    const k = assertFailed(
      await kubectl(['get', 'configmaps'], { kubeconfig, cacheDir: join(dir, 'cache') }),
    );
    assert.match(k.stderr, /Unauthorized|must be logged in/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('server-side apply creates (201), updates (200) and bumps resourceVersion and generation', async () => {
    const f = h.file('m1.yaml', MANIFEST.replaceAll('name: a}', 'name: ssa-a}').replaceAll('web', 'ssa-web'));
    await h.ok([...apply, '-f', f]);
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
    await h.ok([...apply, '-f', f]);
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
    await h.ok([...apply, '-f', h.file('m1b.yaml', changed)]);
    const dep2 = h.standin.get('apps/v1', 'Deployment', 'default', 'ssa-web')!;
    assert.equal((dep2.metadata as { generation: number }).generation, 2);
    // (A label value like `y` would be a YAML 1.1 boolean to kubectl, and the apply would fail.)
    const labelled = changed.replace(
      'metadata: {name: ssa-web}',
      'metadata: {name: ssa-web, labels: {tier: front}}',
    );
    await h.ok([...apply, '-f', h.file('m1c.yaml', labelled)]);
    const dep3 = h.standin.get('apps/v1', 'Deployment', 'default', 'ssa-web')!;
    assert.deepEqual((dep3.metadata as { labels: unknown }).labels, { tier: 'front' });
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
    await h.ok([...apply, '-f', v1]);
    // Same value from another manager: shared ownership, no conflict.
    const same = h.file(
      'own2.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owned}\ndata: {a: "1"}\n',
    );
    await h.ok(['apply', '--server-side', '--field-manager=other', '-f', same]);
    // Changed value: 409 with a FieldManagerConflict cause.
    const changed = h.file(
      'own3.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owned}\ndata: {b: "3"}\n',
    );
    h.standin.clearLog();
    const conflict = await h.fails(['apply', '--server-side', '--field-manager=other', '-f', changed]);
    assert.match(conflict.stderr, /conflict with "dm"/);
    const patch = h.standin.log.find((e) => e.method === 'PATCH')!;
    assert.equal(patch.status, 409);
    await h.ok(['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', changed]);
    assert.equal(h.standin.log.at(-1)!.query.force, 'true');
    let cm = h.standin.get('v1', 'ConfigMap', 'default', 'owned')!;
    assert.deepEqual(cm.data, { a: '1', b: '3' });
    // other's forced apply sent only b, so other gave up a (dm still owned it); dm now drops a and b:
    // a goes (nobody owns it), b stays (other took it over).
    const none = h.file(
      'own4.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owned}\ndata: {c: "4"}\n',
    );
    await h.ok([...apply, '-f', none]);
    cm = h.standin.get('v1', 'ConfigMap', 'default', 'owned')!;
    assert.deepEqual(cm.data, { b: '3', c: '4' });
    // other drops everything it owns: b goes, c (dm's) stays.
    const empty = h.file('own5.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owned}\n');
    await h.ok(['apply', '--server-side', '--field-manager=other', '-f', empty]);
    cm = h.standin.get('v1', 'ConfigMap', 'default', 'owned')!;
    assert.deepEqual(cm.data, { c: '4' });
    const managers = (cm.metadata as { managedFields: { manager: string }[] }).managedFields.map(
      (m) => m.manager,
    );
    assert.deepEqual(managers, ['dm']);
  });

  it('dry-run stores nothing', async () => {
    const f = h.file('dry.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry}\ndata: {a: "1"}\n');
    const r = await h.ok([...apply, '--dry-run=server', '-f', f]);
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
    assert.equal(r.code, 1, r.stderr);
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
      const missing = await h2.fails([...apply, '-n', 'nope', '-f', f]);
      assert.match(missing.stderr, /namespaces "nope" not found/);
      await h2.ok([...apply, '-f', h2.file('ns.yaml', NAMESPACE_MANIFEST)]);
      await h2.ok([...apply, '-n', 'team', '-f', f]);
      await h2.ok(['delete', 'namespace', 'team', '--wait=false']);
      // The existing object is updated only if unchanged: a new one is refused.
      await h2.ok([...apply, '-n', 'team', '-f', f]);
      const other = h2.file('cm2.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yy}\n');
      const refused = await h2.fails([...apply, '-n', 'team', '-f', other]);
      assert.match(refused.stderr, /because it is being terminated/);
    } finally {
      await h2.close();
    }
  });

  it('is strict: unknown kinds are not discovered, unknown fields are a 400 strict decoding error, protobuf a 415', async () => {
    const unknownKind = h.file('uk.yaml', 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n');
    const r1 = await h.fails([...apply, '-f', unknownKind]);
    assert.match(r1.stderr, /no matches for kind "Gadget"|could not find the requested resource/);
    const unknownField = h.file(
      'uf.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: uf}\ndatta: {a: "1"}\n',
    );
    const r2 = await h.fails([...apply, '-f', unknownField]);
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
    // The CRD stays unestablished until the test establishes it: no race with kubectl on a busy machine.
    const h = await harness({ crdEstablishDelayMs: null });
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
      await h.ok([...apply, '-f', crd]);
      const early = await h.fails([...apply, '-f', cr]);
      assert.match(early.stderr, /no matches for kind "Widget"/);
      assert.equal(h.standin.get('example.com/v1', 'Widget', 'default', 'w1'), undefined);
      // Established while kubectl waits for it (once it watches), as the API server's controller would.
      const waiting = h.run([
        'wait',
        '--for=condition=Established',
        'crd/widgets.example.com',
        '--timeout=300s',
      ]);
      void h.standin
        .nextRequest(watching('customresourcedefinitions'))
        .then(() => h.standin.establish('widgets.example.com'));
      assertSucceeded(await waiting);
      await h.ok([...apply, '-f', cr]);
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
    await h.ok([...apply, '-f', f]);
    const timeout = await h.fails(['rollout', 'status', 'deployment/slow', '--timeout=1s']);
    assert.match(timeout.stderr, /timed out/);
    // Ready once kubectl watches for it (so it must see the change, not an object that was ready already).
    const waiting = h.run(['wait', '--for=condition=Available', 'deployment/slow', '--timeout=300s']);
    void h.standin
      .nextRequest(watching('deployments'))
      .then(() => h.standin.setReady('Deployment', 'default', 'slow', true));
    assertSucceeded(await waiting);
  });

  it('watch replays every event after the requested resourceVersion and answers 410 once compacted', async () => {
    const list = JSON.parse((await call(h.standin, 'GET', '/api/v1/namespaces/default/configmaps')).body);
    const from = list.metadata.resourceVersion;
    const f = h.file(
      'w.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: watched}\ndata: {a: "1"}\n',
    );
    await h.ok([...apply, '-f', f]);
    await h.ok(['delete', '-f', f]);
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
    await h.ok([
      ...apply,
      '-f',
      h.file('ons.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata: {name: other-ns}\n'),
    ]);
    const f = h.file('ctx.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ctx}\n');
    await h.ok(['--context', 'other', ...apply, '-f', f]);
    assert.ok(h.standin.get('v1', 'ConfigMap', 'other-ns', 'ctx'));
    assert.equal(h.standin.get('v1', 'ConfigMap', 'default', 'ctx'), undefined);
  });
});

describe('kube stand-in against recorded kubectl traffic', () => {
  for (const scenario of SCENARIOS) {
    it(`sees the recorded request sequence: ${scenario.name}`, async () => {
      const text = readFileSync(join(fixtures, `${scenario.name}.txt`), 'utf8');
      const recorded = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
      const h = await harness(scenario.standin);
      try {
        const manifest = h.file('manifest.yaml', scenario.manifest ?? MANIFEST);
        const args = (a: string[]) => a.map((x) => (x === 'manifest.yaml' ? manifest : x));
        for (const setup of scenario.setup) await h.ok(args(setup));
        h.standin.clearLog();
        reactToWatch(scenario, h.standin);
        const r = await h.ok([...args(scenario.args), '-v=6']);
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
      await h.ok([...apply, '-f', h.file('manifest.yaml', MANIFEST)]);
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
      await h.fails([...apply, '-f', h.file('manifest.yaml', MANIFEST)]);
      assert.equal(h.standin.log.filter((e) => e.method === 'PATCH').length, 0);
    } finally {
      await h.close();
    }
  });
});

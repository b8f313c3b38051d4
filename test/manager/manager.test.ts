/**
 * The Deployment Manager service (docs/manager.md) in-process over HTTP requests to the real app,
 * with the real kubectl against the Kubernetes stand-in: create, update with prune, $(ref)
 * ordering, delete, concurrent updates of one deployment, the token matrix, answers validated
 * against the OpenAPI document.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createManagerToken, managerPaths } from '../../server/src/manager/manager-tokens.js';
import { type KubeStandin, startKubeStandin } from '../kube-standin/server.js';
import { ADMIN_TOKEN, DIALECTS, type DialectTestServer, tempDir, testServerOn } from '../server/helpers.js';
import { APP, APP_WITHOUT_EXTRA } from './fixtures.js';

type Json = Record<string, unknown>;

for (const dialect of DIALECTS)
  describe(`Deployment Manager API against the stand-in (${dialect})`, () => {
    let standin: KubeStandin;
    let s: DialectTestServer;
    let dir: string;
    const tokens: Record<string, string> = {};
    let validate: (schema: string, body: unknown) => void;

    before(async () => {
      standin = await startKubeStandin();
      dir = tempDir('dm-manager-test-');
      const kubeconfig = standin.writeKubeconfig(dir, { namespace: 'default' });
      const dbFile = join(dir, 'registry.db');
      s = await testServerOn(dialect, {
        manager: { clusters: { prod: kubeconfig }, ...managerPaths(dbFile) },
      });
      // On SQLite the tokens go through a second connection to the manager's file: after its recovery.
      await s.manager!.ready;
      tokens.admin = ADMIN_TOKEN;
      tokens.read = await createManagerToken(s.store, dbFile, 'read', ['prod/default']);
      tokens.deploy = await createManagerToken(s.store, dbFile, 'deploy', ['prod/default']);
      tokens.otherNamespace = await createManagerToken(s.store, dbFile, 'deploy', ['prod/other']);
      const { OPENAPI } = await import('../../server/src/api/openapi.js');
      const { Ajv } = await import('ajv');
      const ajv = new Ajv({ strict: false });
      ajv.addSchema({ $id: 'api', components: OPENAPI.components });
      validate = (schema, body) => {
        const check = ajv.compile({ $ref: `api#/components/schemas/${schema}` });
        assert.ok(check(body), `${schema}: ${JSON.stringify(check.errors)} in ${JSON.stringify(body)}`);
      };
    });
    after(async () => {
      await s.manager?.idle();
      await s.manager?.close();
      await s.close();
      await standin.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const call = async (method: string, path: string, token?: string, body?: unknown) => {
      const res = await s.app.request(path, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return {
        status: res.status,
        body: (text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text) as Json,
      };
    };
    const create = (name: string, content: string, token = tokens.admin, wait = true) =>
      call('POST', `/api/v1/deployments${wait ? '?wait=true' : ''}`, token, {
        name,
        cluster: 'prod',
        namespace: 'default',
        configuration: { content, imports: [] },
      });

    it('creates a deployment: 202 with an operation, applied in $(ref) order, answers match the OpenAPI schemas', async () => {
      standin.clearLog();
      const r = await create('app', APP, tokens.admin, false);
      assert.equal(r.status, 202, JSON.stringify(r.body));
      validate('Operation', r.body);
      assert.ok(['pending', 'running'].includes(String(r.body.status)));
      // Followed as dm --manager-url follows it: each GET holds until the end or 30 s.
      let op = await call('GET', `/api/v1/operations/${r.body.id}?wait=30`, tokens.admin);
      for (let i = 0; i < 20 && ['pending', 'running'].includes(String(op.body.status)); i++) {
        op = await call('GET', `/api/v1/operations/${r.body.id}?wait=30`, tokens.admin);
      }
      assert.equal(op.status, 200);
      for (const bad of ['0', '31', '1.5', 'soon']) {
        const refused = await call('GET', `/api/v1/operations/${r.body.id}?wait=${bad}`, tokens.admin);
        assert.equal(refused.status, 400, bad);
        assert.match(String((refused.body.error as Json).message), /wait must be a whole number of seconds/);
      }
      validate('Operation', op.body);
      assert.equal(op.body.status, 'done', JSON.stringify(op.body));
      assert.equal(op.body.actor, 'admin');
      assert.ok(op.body.startedAt && op.body.finishedAt);
      const progress = op.body.progress as { level: number; total: number; done: number }[];
      assert.deepEqual(
        progress.map((p) => [p.level, p.total, p.done]),
        [
          [1, 2, 2],
          [2, 1, 1],
        ],
      );
      const patches = standin.log.filter((e) => e.method === 'PATCH' && e.status < 300).map((e) => e.path);
      assert.ok(
        patches.indexOf('/api/v1/namespaces/default/services/db') <
          patches.indexOf('/api/v1/namespaces/default/configmaps/settings'),
        patches.join(' '),
      );
      const svc = standin.get('v1', 'Service', 'default', 'db')!;
      const cm = standin.get('v1', 'ConfigMap', 'default', 'settings')!;
      assert.equal((cm.data as Json).dbHost, (svc.spec as Json).clusterIP);

      const d = await call('GET', '/api/v1/deployments/app', tokens.admin);
      assert.equal(d.status, 200);
      validate('Deployment', d.body);
      assert.equal(d.body.state, 'deployed');
      assert.equal(d.body.latestManifest, 'app-1');
      const list = await call('GET', '/api/v1/deployments', tokens.admin);
      assert.deepEqual(
        (list.body as unknown as Json[]).map((x) => x.name),
        ['app'],
      );
      const m = await call('GET', '/api/v1/deployments/app/manifests/app-1', tokens.admin);
      validate('Manifest', m.body);
      assert.equal((m.body.inputConfig as Json).config, APP);
      assert.equal(((m.body.expandedConfig as Json).resources as unknown[]).length, 3);
      assert.equal((m.body.target as Json).cluster, 'prod');
      assert.ok(!JSON.stringify(m.body).includes(dir), 'no server path in answers');
      const types = await call('GET', '/api/v1/types', tokens.admin);
      for (const t of types.body as unknown as unknown[]) validate('TypeSummary', t);
      assert.deepEqual(types.body, [
        { type: 'ConfigMap', instances: 2 },
        { type: 'Service', instances: 1 },
      ]);
      const all = await call('GET', '/api/v1/types/all/instances', tokens.admin);
      for (const t of all.body as unknown as unknown[]) validate('TypeInstance', t);
      assert.deepEqual(
        (all.body as unknown as Json[]).map((i) => [i.name, i.path]),
        [
          ['db', '$.resources[0]'],
          ['settings', '$.resources[1]'],
          ['extra', '$.resources[2]'],
        ],
      );
    });

    it('refuses a second create of the same name (409) and a bad body (400) before any operation', async () => {
      const again = await create('app', APP);
      assert.equal(again.status, 409);
      assert.equal((again.body.error as Json).code, 'DEPLOYMENT_EXISTS');
      const bad = await call('POST', '/api/v1/deployments', tokens.admin, {
        name: 'Bad_Name',
        cluster: 'prod',
        configuration: { content: '' },
      });
      assert.equal(bad.status, 400);
      const traversal = await call('POST', '/api/v1/deployments', tokens.admin, {
        name: 'x',
        cluster: 'prod',
        configuration: { content: APP, imports: [{ name: '../evil.jinja', content: '' }] },
      });
      assert.equal(traversal.status, 400);
      assert.match((traversal.body.error as Json).message as string, /relative file name/);
      const cluster = await call('POST', '/api/v1/deployments', tokens.admin, {
        name: 'z',
        cluster: 'nowhere',
        configuration: { content: APP },
      });
      assert.equal(cluster.status, 400);
      assert.equal((cluster.body.error as Json).code, 'UNKNOWN_CLUSTER');
      assert.equal(
        (await call('PUT', '/api/v1/deployments/nope', tokens.admin, { configuration: { content: APP } }))
          .status,
        404,
      );
    });

    it('expands a configuration with its imports without deploying it', async () => {
      const r = await call('POST', '/api/v1/expand', tokens.read, {
        configuration: {
          content:
            'imports:\n- path: cm.jinja\nresources:\n- name: one\n  type: cm.jinja\n  properties: {v: 7}\n',
          imports: [
            {
              name: 'cm.jinja',
              content:
                'resources:\n- name: {{ env["name"] }}-cm\n  type: ConfigMap\n  properties:\n    data: {v: "{{ properties["v"] }}"}\n',
            },
          ],
        },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      validate('ExpandResult', r.body);
      assert.deepEqual((r.body.config as Json).resources, [
        { name: 'one-cm', type: 'ConfigMap', properties: { data: { v: '7' } } },
      ]);
    });

    it('POST /api/v1/expand refuses an unknown top-level key as dm expand and dm deploy do: 422 UNKNOWN_CONFIGURATION_KEY naming key and file', async () => {
      const r = await call('POST', '/api/v1/expand', tokens.read, {
        configuration: { content: 'resource:\n- {name: a, type: ConfigMap}\n', imports: [] },
      });
      assert.equal(r.status, 422, JSON.stringify(r.body));
      const error = r.body.error as { code: string; message: string };
      assert.equal(error.code, 'UNKNOWN_CONFIGURATION_KEY');
      assert.equal(
        error.message,
        "configuration.content: unknown top-level key 'resource' (did you mean 'resources'?); a configuration has only imports, resources, outputs",
      );
    });

    it('a template that fails to render is 422 (not 500), its message free of server paths', async () => {
      for (const template of [
        '{{ properties["v"].missing.deeper }}',
        '{% for %}',
        '{{ range(10**12) | list }}',
      ]) {
        const r = await call('POST', '/api/v1/expand', tokens.read, {
          configuration: {
            content: 'imports:\n- path: bad.jinja\nresources:\n- name: one\n  type: bad.jinja\n',
            imports: [{ name: 'bad.jinja', content: `resources: ${template}\n` }],
          },
        });
        const text = JSON.stringify(r.body);
        assert.equal(r.status, 422, `${template}: ${r.status} ${text}`);
        assert.doesNotMatch(text, /dm-manager-|\/tmp\//, `${template}: ${text}`);
        assert.match(text, /bad\.jinja/);
      }
    });

    it('a read-deployments token is 403 on every change, before its body or the deployment is looked at', async () => {
      for (const [method, path, body] of [
        ['POST', '/api/v1/deployments', { name: 'app' }],
        ['POST', '/api/v1/deployments', 'not an object'],
        ['PUT', '/api/v1/deployments/app', {}],
        [
          'PUT',
          '/api/v1/deployments/no-such',
          { configuration: { content: 'resources: []\n', imports: [] } },
        ],
        ['DELETE', '/api/v1/deployments/no-such', undefined],
      ] as const) {
        const r = await call(method, path, tokens.read, body);
        assert.equal(r.status, 403, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      }
    });

    it('updates with prune (PUT): the resource that left the configuration is deleted', async () => {
      assert.ok(standin.get('v1', 'ConfigMap', 'default', 'extra'));
      const r = await call('PUT', '/api/v1/deployments/app?wait=true', tokens.deploy, {
        configuration: { content: APP_WITHOUT_EXTRA, imports: [] },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.status, 'done', JSON.stringify(r.body));
      assert.equal(r.body.manifest, 'app-2');
      assert.ok((r.body.progress as Json[]).some((p) => p.action === 'prune' && p.done === 1));
      assert.equal(standin.get('v1', 'ConfigMap', 'default', 'extra'), undefined);
    });

    it('runs two changes of one deployment one after the other (the second waits its turn)', async () => {
      const body = (v: string) => ({
        configuration: {
          content: APP_WITHOUT_EXTRA.replace('dbHost:', `v: "${v}"\n      dbHost:`),
          imports: [],
        },
      });
      const [a, b] = await Promise.all([
        call('PUT', '/api/v1/deployments/app', tokens.deploy, body('1')),
        call('PUT', '/api/v1/deployments/app', tokens.deploy, body('2')),
      ]);
      assert.equal(a.status, 202);
      assert.equal(b.status, 202);
      await s.manager!.waitFor(String(a.body.id));
      await s.manager!.waitFor(String(b.body.id));
      const [oa, ob] = await Promise.all([
        call('GET', `/api/v1/operations/${a.body.id}`, tokens.read),
        call('GET', `/api/v1/operations/${b.body.id}`, tokens.read),
      ]);
      assert.equal(oa.body.status, 'done');
      assert.equal(ob.body.status, 'done');
      const [first, second] = [oa.body, ob.body].sort((x, y) =>
        String(x.startedAt).localeCompare(String(y.startedAt)),
      );
      assert.ok(String(first!.finishedAt) <= String(second!.startedAt), 'never at once');
      assert.notEqual(first!.manifest, second!.manifest);
      const history = await call('GET', '/api/v1/deployments/app/operations', tokens.read);
      assert.equal((history.body as unknown as Json[]).length, 4);
      for (const o of history.body as unknown as Json[])
        assert.ok(o.actor === 'admin' || String(o.actor).startsWith('token:'));
    });

    it('token matrix: anonymous 401, read token reads but cannot change, another namespace sees nothing, admin all', async () => {
      const anon = await call('GET', '/api/v1/deployments');
      assert.equal(anon.status, 401);
      assert.equal((await call('GET', '/api/v1/deployments/app')).status, 401);
      assert.equal((await call('GET', '/api/v1/types')).status, 401);

      const read = await call('GET', '/api/v1/deployments/app', tokens.read);
      assert.equal(read.status, 200);
      const readPut = await call('PUT', '/api/v1/deployments/app', tokens.read, {
        configuration: { content: APP },
      });
      assert.equal(readPut.status, 403);
      assert.equal((await call('DELETE', '/api/v1/deployments/app', tokens.read)).status, 403);
      assert.equal((await create('r', APP, tokens.read)).status, 403);

      const other = tokens.otherNamespace;
      assert.deepEqual((await call('GET', '/api/v1/deployments', other)).body, []);
      assert.equal((await call('GET', '/api/v1/deployments/app', other)).status, 404);
      assert.equal((await call('GET', '/api/v1/deployments/app/manifests', other)).status, 404);
      assert.equal((await call('DELETE', '/api/v1/deployments/app', other)).status, 404);
      assert.deepEqual((await call('GET', '/api/v1/types', other)).body, []);
      assert.equal((await create('o', APP, other)).status, 403);
      const outside = await call('POST', '/api/v1/deployments?wait=true', tokens.deploy, {
        name: 'esc',
        cluster: 'prod',
        namespace: 'default',
        configuration: { content: 'resources:\n- name: ns\n  type: Namespace\n', imports: [] },
      });
      assert.equal(outside.status, 403, JSON.stringify(outside.body));
      assert.match((outside.body.error as Json).message as string, /cluster-scoped/);

      assert.equal((await call('GET', '/api/v1/deployments', 'not-a-token')).status, 401);
      assert.equal((await call('GET', '/api/v1/deployments', tokens.admin)).status, 200);
    });

    it('serves a page per deployment: resources with live status, layout, manifests, operations', async () => {
      const page = await call('GET', '/deployments/app', tokens.read);
      assert.equal(page.status, 200);
      const html = String(page.body);
      assert.match(html, /<h1>Deployment <code>app<\/code><\/h1>/);
      assert.match(html, /present \(resourceVersion \d+\)/);
      assert.ok(html.includes('app-1') && html.includes('app-4'));
      assert.ok(!html.includes('<script'));
      assert.equal((await call('GET', '/deployments/app')).status, 401);
    });

    it('deletes a deployment: objects gone, deployment 404, manifests still readable', async () => {
      const r = await call('DELETE', '/api/v1/deployments/app?wait=true', tokens.deploy);
      assert.equal(r.status, 200);
      assert.equal(r.body.status, 'done', JSON.stringify(r.body));
      assert.equal(standin.get('v1', 'ConfigMap', 'default', 'settings'), undefined);
      assert.equal(standin.get('v1', 'Service', 'default', 'db'), undefined);
      assert.equal((await call('GET', '/api/v1/deployments/app', tokens.admin)).status, 404);
      const manifests = await call('GET', '/api/v1/deployments/app/manifests', tokens.read);
      assert.equal(manifests.status, 200);
      assert.equal((manifests.body as unknown as Json[]).at(-1)!.action, 'delete');
    });
  });

for (const dialect of DIALECTS)
  describe(`Deployment Manager not configured (${dialect})`, () => {
    it('answers its paths with MANAGER_NOT_CONFIGURED', async () => {
      const s = await testServerOn(dialect);
      try {
        const r = await s.app.request('/api/v1/deployments');
        assert.equal(r.status, 404);
        assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'MANAGER_NOT_CONFIGURED');
      } finally {
        await s.close();
      }
    });
  });

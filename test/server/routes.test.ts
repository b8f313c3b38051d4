/**
 * The seams between the routes the app serves, the routes it tracks and the routes openapi.json
 * describes (issue 10): enumerated from the real app's route table (with the Deployment Manager
 * mounted), so a route added anywhere is checked without a list to keep.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DIALECTS, type DialectTestServer, tempDir, testServerOn } from './helpers.js';

interface Route {
  method: string;
  path: string;
}

/** A Hono route pattern's parts: literal text, `:name` or `:name{regex}` parameters, `*`. */
function partsOf(path: string): ({ literal: string } | { regex: string | undefined } | { rest: true })[] {
  const out: ({ literal: string } | { regex: string | undefined } | { rest: true })[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === '*') {
      out.push({ rest: true });
      i += 1;
    } else if (path[i] === ':') {
      let j = i + 1;
      while (j < path.length && /[A-Za-z0-9_]/.test(path[j]!)) j += 1;
      let regex: string | undefined;
      if (path[j] === '{') {
        let depth = 0;
        let k = j;
        for (; k < path.length; k += 1) {
          if (path[k] === '{') depth += 1;
          else if (path[k] === '}' && --depth === 0) break;
        }
        regex = path.slice(j + 1, k);
        j = k + 1;
      }
      out.push({ regex });
      i = j;
    } else {
      let j = i;
      while (j < path.length && path[j] !== ':' && path[j] !== '*') j += 1;
      out.push({ literal: path.slice(i, j) });
      i = j;
    }
  }
  return out;
}

/** A Hono route pattern as a regular expression over concrete paths. */
function patternOf(path: string): RegExp {
  const body = partsOf(path)
    .map((p) =>
      'literal' in p
        ? p.literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        : 'rest' in p
          ? '.*'
          : p.regex
            ? `(?:${p.regex})`
            : '[^/]+',
    )
    .join('');
  return new RegExp(`^${body}$`);
}

/** A concrete request path for a Hono route pattern. */
function concreteServed(path: string): string {
  return partsOf(path)
    .map((p) => ('literal' in p ? p.literal : 'rest' in p ? 'x/x/x/x' : p.regex ? '1' : 'x'))
    .join('');
}

/** A concrete request path for an OpenAPI path template. */
function concreteDescribed(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    name === 'version' ? 'v1' : name === 'id' ? '1' : name === 'path' ? 'a/b.yaml' : 'x',
  );
}

for (const dialect of DIALECTS) {
  describe(`served, tracked and described routes (${dialect})`, () => {
    let s: DialectTestServer;
    let served: Route[];
    let described: Route[];
    let pages: Set<string>;
    let dir: string;

    before(async () => {
      dir = tempDir('dm-routes-test-');
      // No cluster is contacted: the enumeration needs the manager's routes mounted, not a cluster.
      s = await testServerOn(dialect, {
        manager: {
          clusters: { prod: join(dir, 'no-kubeconfig') },
          stateFile: join(dir, 'manager.db'),
          dataDir: join(dir, 'manager'),
        },
      });
      const seen = new Set<string>();
      served = [];
      for (const { method, path } of s.app.routes) {
        const key = `${method} ${path}`;
        if (!seen.has(key)) served.push({ method, path });
        seen.add(key);
      }
      const { OPENAPI } = await import('../../server/src/api/openapi.js');
      described = Object.entries(OPENAPI.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((k) => ['get', 'put', 'post', 'delete', 'patch'].includes(k))
          .map((method) => ({ method: method.toUpperCase(), path })),
      );
      // The API lives under /api/; the other routes are the web pages (HTML), which the API
      // description leaves out, and the operational endpoints it describes (healthz, readyz, metrics).
      pages = new Set(
        served
          .filter((r) => !r.path.startsWith('/api/'))
          .filter(
            (r) =>
              !described.some(
                (d) => d.method === r.method && patternOf(r.path).test(concreteDescribed(d.path)),
              ),
          )
          .map((r) => `${r.method} ${r.path}`),
      );
    });
    after(async () => {
      await s.manager?.close();
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('the app serves the API, the manager and the pages (the enumeration sees them all)', async () => {
      const keys = served.map((r) => `${r.method} ${r.path}`);
      for (const expected of ['GET /api/v1/resolve', 'POST /api/v1/deployments', 'GET /healthz']) {
        assert.ok(keys.includes(expected), `${expected} not among ${keys.join(', ')}`);
      }
      assert.ok(pages.has('GET /deployments/:name'), "a deployment's page is a page");
      for (const page of ['/', '/search', '/registries']) {
        const res = await s.app.request(page);
        assert.equal(res.status, 200, page);
        assert.match(res.headers.get('content-type') ?? '', /^text\/html/, `${page} is a page`);
        await res.arrayBuffer();
      }
    });

    it('every route the app serves under /api/ is described in openapi.json', () => {
      const undescribed = served
        .filter((r) => !pages.has(`${r.method} ${r.path}`))
        .filter(
          (r) =>
            !described.some(
              (d) => d.method === r.method && patternOf(r.path).test(concreteDescribed(d.path)),
            ),
        )
        .map((r) => `${r.method} ${r.path}`);
      assert.deepEqual(undescribed, [], 'served but not described in server/src/api/openapi.ts');
    });

    it('every path and method openapi.json describes is served', () => {
      const unserved = described
        .filter(
          (d) =>
            !served.some(
              (r) =>
                r.method === d.method &&
                !pages.has(`${r.method} ${r.path}`) &&
                patternOf(r.path).test(concreteDescribed(d.path)),
            ),
        )
        .map((d) => `${d.method} ${d.path}`);
      assert.deepEqual(unserved, [], 'described in openapi.json but not served');
    });

    it('the check tells a served path from another', () => {
      assert.ok(patternOf('/api/v1/registries/:id{.+}/sync').test('/api/v1/registries/1/sync'));
      assert.ok(!patternOf('/api/v1/deployments/:name').test('/api/v1/deployments/a/b'));
      assert.equal(concreteServed('/api/v1/registries/:id{[^/]+}/syncs'), '/api/v1/registries/1/syncs');
      assert.ok(patternOf('/api/v1/registries/:id{[^/]+}/syncs').test('/api/v1/registries/1/syncs'));
      assert.ok(!patternOf('/api/v1/registries/:id{[^/]+}/syncs').test('/api/v1/registries/1/2/syncs'));
      assert.ok(
        patternOf('/api/v1/templates/*').test(
          concreteDescribed('/api/v1/templates/{host}/{owner}/{repo}/{template}'),
        ),
      );
    });

    it('every served route is tracked: a request id, one count in the metrics under its route', async () => {
      for (const r of served) {
        const before = await counted(r.path);
        const res = await s.app.request(concreteServed(r.path), { method: r.method });
        await res.arrayBuffer();
        assert.match(
          res.headers.get('x-request-id') ?? '',
          /^[A-Za-z0-9._-]+$/,
          `${r.method} ${r.path}: no X-Request-Id`,
        );
        assert.equal(
          await counted(r.path),
          before + 1,
          `${r.method} ${r.path}: counted ${(await counted(r.path)) - before} times`,
        );
      }
    });

    it('GET /api/v1/resolve stays one handler (the fast path), every other route has the tracking middleware', () => {
      const handlers = (method: string, path: string) =>
        (s.app.router.match(method, path)[0] as unknown[]).length;
      assert.equal(handlers('GET', '/api/v1/resolve'), 1);
      assert.ok(handlers('POST', '/api/v1/resolve') >= 2);
      assert.ok(handlers('GET', '/api/v1/search') >= 2);
    });

    /** The requests counted under a route label so far, all methods and statuses. */
    async function counted(route: string): Promise<number> {
      const metric = await s.metrics.requests.get();
      return metric.values.filter((v) => v.labels.route === route).reduce((n, v) => n + v.value, 0);
    }
  });
}

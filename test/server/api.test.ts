/**
 * The HTTP API (docs/server.md, "HTTP API") over a real temporary SQLite file and the real app
 * (`app.request()`), with registry-fixtures indexed from disk.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { ADMIN_ACCESS } from '../../server/src/api/access.js';
import { startGitHubStandin } from '../github-standin/standin.js';
import { repoRoot } from '../support/run-cli.js';
import { admin, DIALECTS, type DialectTestServer, FIXTURES, tempDir, testServerOn } from './helpers.js';

const REG = 'github.com/acme/templates';

for (const dialect of DIALECTS) {
  describe(`registry API (${dialect})`, () => {
    let s: DialectTestServer;
    let registryId: number;
    let addedAt: number;

    before(async () => {
      addedAt = Date.now();
      s = await testServerOn(dialect, { defaultRegistry: REG });
      const row = await s.service.add({ source: FIXTURES, name: REG });
      registryId = row.id;
      const outcome = await s.service.sync(row.id, 'manual');
      assert.equal(outcome.status, 'succeeded');
    });
    after(() => s.close());

    const get = (path: string, headers: Record<string, string> = {}) => s.app.request(path, { headers });
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      s.app.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });

    it('GET /api/v1/registries lists the registry with its sync status and counts', async () => {
      const res = await get('/api/v1/registries');
      assert.equal(res.status, 200);
      const body = (await res.json()) as {
        registries: { name: string; sync: { status: string }; counts: { versions: number } }[];
      };
      assert.equal(body.registries[0]?.name, REG);
      assert.equal(body.registries[0]?.sync.status, 'succeeded');
      assert.ok((body.registries[0]?.counts.versions ?? 0) > 10);
      const one = await get(`/api/v1/registries/${registryId}`);
      assert.equal(one.status, 200);
      assert.ok(Array.isArray(((await one.json()) as { findings: unknown[] }).findings));
    });

    it('GET /api/v1/search ranks redis first and counts facets', async () => {
      const res = await get('/api/v1/search?q=redis');
      const body = (await res.json()) as {
        hits: { name: string; reference: string }[];
        facets: { collection: Record<string, number>; registry: Record<string, number> };
        total: number;
      };
      assert.equal(body.hits[0]?.name, 'redis');
      assert.equal(body.hits[0]?.reference, `${REG}/redis`);
      assert.equal(body.facets.registry[REG], body.total);
      const prefix = (await (await get('/api/v1/search?q=red')).json()) as { hits: { name: string }[] };
      assert.ok(
        prefix.hits.some((h) => h.name === 'redis'),
        'prefix search misses redis',
      );
      const filtered = (await (await get('/api/v1/search?q=redis&collection=nothing')).json()) as {
        total: number;
      };
      assert.equal(filtered.total, 0);
      const byRegistry = (await (
        await get(`/api/v1/search?q=redis&registry=${encodeURIComponent(REG)}`)
      ).json()) as {
        total: number;
      };
      assert.equal(byRegistry.total, body.total);
      const otherRegistry = (await (await get('/api/v1/search?q=redis&registry=github.com/x/y')).json()) as {
        total: number;
      };
      assert.equal(otherRegistry.total, 0);
      const listing = (await (await get('/api/v1/search')).json()) as { total: number; hits: unknown[] };
      assert.ok(listing.total > 10 && listing.hits.length === 20);
      const bad = await get('/api/v1/search?q=redis&limit=1000');
      assert.equal(bad.status, 400);
    });

    it('GET /api/v1/search finds templates by schema property names', async () => {
      const schemaProp = (await (await get('/api/v1/search?q=replicas')).json()) as { total: number };
      assert.ok(schemaProp.total > 0);
    });

    it('GET /api/v1/resolve floats to the highest patch and returns files, digest, schema and commit', async () => {
      const res = await get('/api/v1/resolve?ref=redis:v1.0');
      assert.equal(res.status, 200);
      const body = (await res.json()) as {
        reference: string;
        version: string;
        digest: string;
        files: { path: string; sha256: string }[];
        schema: unknown;
        commit: string;
        kind: string;
      };
      assert.equal(body.reference, `${REG}/redis:v1.0`);
      assert.equal(body.version, 'v1.0.3');
      assert.match(body.digest, /^sha256:[0-9a-f]{64}$/);
      assert.equal(body.kind, 'jinja');
      assert.ok(body.files.some((f) => f.path === 'redis.jinja'));
      assert.ok(body.schema && typeof body.schema === 'object');
      // A plain directory has no commit (docs/server.md, "HTTP API"): '' as in the client's own dm.lock.
      assert.equal(body.commit, '');
      const exact = (await (
        await get(`/api/v1/resolve?ref=${encodeURIComponent(`${REG}/redis:=v1.0.1`)}`)
      ).json()) as { version: string };
      assert.equal(exact.version, 'v1.0.1');
    });

    it('GET /api/v1/resolve of a missing version is 404 listing the versions that exist', async () => {
      const res = await get('/api/v1/resolve?ref=redis:v1.0.9');
      assert.equal(res.status, 404);
      const body = (await res.json()) as {
        error: { code: string; details: { sameMinor: string[]; available: string[]; newest: string } };
      };
      assert.equal(body.error.code, 'VERSION_NOT_FOUND');
      assert.ok(body.error.details.sameMinor.includes('v1.0.3'));
      assert.ok(body.error.details.available.includes('v1.1'));
      assert.equal(body.error.details.newest, 'v1.1');
    });

    it('GET /api/v1/resolve errors: bad reference 400, unknown template and registry 404, missing ref 400', async () => {
      assert.equal((await get('/api/v1/resolve?ref=github.com/o/r/a/b/c:v1')).status, 400);
      assert.equal((await get('/api/v1/resolve?ref=nothing:v1')).status, 404);
      assert.equal((await get('/api/v1/resolve?ref=github.com/nobody/none/redis:v1')).status, 404);
      const missing = await get('/api/v1/resolve');
      assert.equal(missing.status, 400);
      const body = (await missing.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'INVALID_PARAMETER');
      assert.ok(!/at .*\.js/.test(body.error.message));
    });

    it('POST /api/v1/resolve resolves many references and reports failures per reference', async () => {
      const res = await post('/api/v1/resolve', { refs: ['redis:v1.0', 'redis:v9', 'not a ref'] });
      assert.equal(res.status, 200);
      const body = (await res.json()) as {
        results: { ref: string; resolution?: { version: string }; error?: { code: string } }[];
      };
      assert.equal(body.results[0]?.resolution?.version, 'v1.0.3');
      assert.equal(body.results[1]?.error?.code, 'VERSION_NOT_FOUND');
      assert.equal(body.results[2]?.error?.code, 'INVALID_REFERENCE');
      assert.equal((await post('/api/v1/resolve', '{nope')).status, 400);
      assert.equal((await post('/api/v1/resolve', { refs: 'redis:v1' })).status, 400);
      const huge = await post('/api/v1/resolve', { refs: ['x'.repeat(2 * 1024 * 1024)] });
      assert.equal(huge.status, 422);
    });

    it('GET /api/v1/templates/... lists a template with all its versions', async () => {
      const res = await get(`/api/v1/templates/${REG}/redis`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as {
        versions: { version: string; firstSeenAt: string | null }[];
        latestVersion: string;
      };
      assert.deepEqual(
        body.versions.map((v) => v.version),
        ['v2.0.0-rc.1', 'v1.1', 'v1.0.3', 'v1.0.1', 'v1'],
      );
      // When each version first appeared: its first-seen record, from the sync that indexed it.
      for (const v of body.versions) {
        assert.match(v.firstSeenAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, v.version);
        const at = Date.parse(v.firstSeenAt!);
        assert.ok(at >= addedAt && at <= Date.now(), `${v.version} first seen at ${v.firstSeenAt}`);
      }
      assert.equal(body.latestVersion, 'v1.1');
      assert.equal((await get(`/api/v1/templates/${REG}/nothing`)).status, 404);
    });

    it('content is immutable: strong ETag = digest, immutable Cache-Control, 304 on If-None-Match', async () => {
      const resolved = (await (await get('/api/v1/resolve?ref=redis:=v1.1')).json()) as {
        files: { path: string; sha256: string }[];
        digest: string;
      };
      const file = resolved.files.find((f) => f.path === 'redis.jinja')!;
      const base = `/api/v1/templates/${REG}/redis/versions/v1.1`;
      const res = await get(`${base}/files/redis.jinja`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('etag'), `"${file.sha256}"`);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.ok((await res.text()).length > 0);
      const again = await get(`${base}/files/redis.jinja`, { 'if-none-match': `"${file.sha256}"` });
      assert.equal(again.status, 304);
      const nested = await get(`${base}/files/helpers/common.jinja`);
      assert.equal(nested.status, 200);

      const schema = await get(`${base}/schema`);
      assert.equal(schema.status, 200);
      assert.ok(((await schema.json()) as { properties?: unknown }).properties);
      const schemaAgain = await get(`${base}/schema`, { 'if-none-match': schema.headers.get('etag')! });
      assert.equal(schemaAgain.status, 304);

      const archive = await get(`${base}/archive.tar.gz`);
      assert.equal(archive.status, 200);
      assert.equal(archive.headers.get('etag'), `"${resolved.digest.replace('sha256:', '')}"`);
      const tar = gunzipSync(Buffer.from(await archive.arrayBuffer())).toString('latin1');
      assert.ok(tar.includes('redis-v1.1/redis.jinja'));
      const archiveAgain = await get(`${base}/archive.tar.gz`, {
        'if-none-match': archive.headers.get('etag')!,
      });
      assert.equal(archiveAgain.status, 304);

      assert.equal((await get(`${base}/files/nothing.txt`)).status, 404);
      const floating = await get(`/api/v1/templates/${REG}/redis/versions/v1.0/files/redis.jinja`);
      assert.equal(floating.status, 404);
      assert.ok(
        ((await floating.json()) as { error: { details: { available: string[] } } }).error.details.available
          .length > 0,
      );
    });

    it('healthz, readyz, metrics and openapi.json answer', async () => {
      assert.equal((await get('/healthz')).status, 200);
      assert.deepEqual(await (await get('/readyz')).json(), { status: 'ready' });
      const metrics = await (await get('/metrics')).text();
      assert.match(metrics, /dm_registry_http_requests_total/);
      // A directory source costs no API request (issue 13).
      assert.match(metrics, /dm_registry_sync_api_requests\{registry="github.com\/acme\/templates"\} 0/);
      const openapi = (await (await get('/api/v1/openapi.json')).json()) as {
        openapi: string;
        paths: Record<string, unknown>;
      };
      assert.equal(openapi.openapi, '3.1.0');
      assert.ok(openapi.paths['/api/v1/resolve']);
    });

    it('unknown endpoints are JSON 404 errors with a request id', async () => {
      const res = await get('/api/v1/nothing', { 'x-request-id': 'abc-123' });
      assert.equal(res.status, 404);
      assert.equal(res.headers.get('x-request-id'), 'abc-123');
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`authorization (${dialect})`, () => {
    let s: DialectTestServer;
    before(async () => {
      s = await testServerOn(dialect);
      const pub = await s.service.add({ source: FIXTURES, name: 'github.com/acme/public' });
      const priv = await s.service.add({
        source: FIXTURES,
        name: 'github.com/acme/private',
        visibility: 'private',
      });
      await s.service.sync(pub.id, 'manual');
      await s.service.sync(priv.id, 'manual');
    });
    after(() => s.close());

    const req = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
      s.app.request(path, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    it('write endpoints reject missing and wrong tokens', async () => {
      for (const [method, path, body] of [
        ['POST', '/api/v1/registries', { source: FIXTURES, name: 'github.com/acme/x' }],
        ['POST', '/api/v1/registries/1/sync', undefined],
        ['DELETE', '/api/v1/registries/1', undefined],
        ['POST', '/api/v1/credentials/gh', { secret: 's' }],
      ] as const) {
        assert.equal((await req(method, path, {}, body)).status, 401, `${method} ${path} without a token`);
        assert.equal(
          (await req(method, path, { authorization: 'Bearer wrong' }, body)).status,
          401,
          `${method} ${path} wrong token`,
        );
      }
      const reader = await s.service.createToken({ admin: false, registry: null });
      assert.equal(
        (await req('POST', '/api/v1/registries/1/sync', { authorization: `Bearer ${reader}` })).status,
        403,
      );
    });

    it('POST /api/v1/registries and /credentials refuse a field they do not know (organization for organisation): 400, nothing added', async () => {
      const list = async () =>
        ((await (await req('GET', '/api/v1/registries', admin)).json()) as { registries: unknown[] })
          .registries.length;
      const before = await list();
      for (const [path, body, says] of [
        [
          '/api/v1/registries',
          { source: FIXTURES, name: 'github.com/acme/typo', organization: 'acme' },
          "unknown field 'organization' (did you mean 'organisation'?)",
        ],
        ['/api/v1/registries', { sourc: FIXTURES }, "unknown field 'sourc' (did you mean 'source'?)"],
        [
          '/api/v1/credentials/gh',
          { secret: 's', knd: 'token' },
          "unknown field 'knd' (did you mean 'kind'?)",
        ],
      ] as const) {
        const r = await req('POST', path, admin, body);
        assert.equal(r.status, 400, `${path} ${JSON.stringify(body)}`);
        const error = ((await r.json()) as { error: { code: string; message: string } }).error;
        assert.equal(error.code, 'UNKNOWN_FIELD');
        assert.ok(error.message.startsWith(says), error.message);
      }
      assert.equal(await list(), before, 'no registry added');
    });

    it('POST /api/v1/registries names a directory by the name: of its registry.yaml, as dm-registry index and dm --registry-dir do', async () => {
      const dir = tempDir('dm-named-dir-');
      cpSync(join(FIXTURES, 'redis'), join(dir, 'redis'), { recursive: true });
      writeFileSync(join(dir, 'registry.yaml'), 'name: github.com/acme/declared\n');
      const created = await req('POST', '/api/v1/registries', admin, { source: dir });
      assert.equal(created.status, 201);
      assert.equal(((await created.json()) as { name: string }).name, 'github.com/acme/declared');
      // The client reads the same directory under the same name.
      const resolved = spawnSync(
        process.execPath,
        [
          join(repoRoot, 'bin', 'dm.js'),
          'resolve',
          'github.com/acme/declared/redis:v1.0',
          '--registry-dir',
          dir,
        ],
        { encoding: 'utf8', env: { ...process.env, HOME: dir, XDG_CACHE_HOME: join(dir, 'cache') } },
      );
      assert.equal(resolved.status, 0, resolved.stderr);
      // dm-registry index, on its own database.
      const indexed = spawnSync(
        process.execPath,
        [join(repoRoot, 'bin', 'dm-registry.js'), 'index', dir, '--db', join(dir, 'index.db')],
        { encoding: 'utf8', cwd: dir },
      );
      assert.equal(indexed.status, 0, indexed.stderr);
      assert.match(indexed.stdout, /^github\.com\/acme\/declared: /);
    });

    it('an admin token can add, sync and delete registries and store credentials that are never returned', async () => {
      const created = await req('POST', '/api/v1/registries', admin, {
        source: FIXTURES,
        name: 'github.com/acme/added',
      });
      assert.equal(created.status, 201);
      const { id } = (await created.json()) as { id: number };
      const dup = await req('POST', '/api/v1/registries', admin, {
        source: FIXTURES,
        name: 'github.com/acme/added',
      });
      assert.equal(dup.status, 409);
      const sync = await req('POST', `/api/v1/registries/${id}/sync`, admin);
      assert.equal(sync.status, 200);
      assert.ok(['succeeded', 'unchanged'].includes(((await sync.json()) as { status: string }).status));
      const cred = await req('POST', '/api/v1/credentials/gh', admin, { secret: 'super-secret-value' });
      assert.equal(cred.status, 204);
      const everything = await Promise.all(
        ['/api/v1/registries', `/api/v1/registries/${id}`, '/api/v1/openapi.json', '/metrics'].map(
          async (p) => (await req('GET', p, admin)).text(),
        ),
      );
      assert.ok(!everything.some((t) => t.includes('super-secret-value')));
      const invalid = await req('POST', '/api/v1/registries', admin, { source: FIXTURES, name: 'bad name' });
      assert.equal(invalid.status, 400);
      assert.equal((await req('DELETE', `/api/v1/registries/${id}`, admin)).status, 204);
      assert.equal((await req('GET', `/api/v1/registries/${id}`, admin)).status, 404);
    });

    it('private registries are invisible without a token allowed to read them', async () => {
      const ref = encodeURIComponent('github.com/acme/private/redis:v1');
      const list = (await (await req('GET', '/api/v1/registries')).json()) as {
        registries: { name: string }[];
      };
      assert.ok(!list.registries.some((r) => r.name === 'github.com/acme/private'));
      assert.equal((await req('GET', `/api/v1/resolve?ref=${ref}`)).status, 404);
      assert.equal((await req('GET', '/api/v1/templates/github.com/acme/private/redis')).status, 404);
      const search = (await (await req('GET', '/api/v1/search?q=redis')).json()) as {
        facets: { registry: Record<string, number> };
      };
      assert.equal(search.facets.registry['github.com/acme/private'], undefined);

      const reader = await s.service.createToken({ admin: false, registry: 'github.com/acme/private' });
      const auth = { authorization: `Bearer ${reader}` };
      assert.equal((await req('GET', `/api/v1/resolve?ref=${ref}`, auth)).status, 200);
      // The answer cached for the reader is not served to anyone else.
      assert.equal((await req('GET', `/api/v1/resolve?ref=${ref}`)).status, 404);
      const other = await s.service.createToken({ admin: false, registry: 'github.com/acme/public' });
      assert.equal(
        (await req('GET', `/api/v1/resolve?ref=${ref}`, { authorization: `Bearer ${other}` })).status,
        404,
      );
      const searched = (await (await req('GET', '/api/v1/search?q=redis', auth)).json()) as {
        facets: { registry: Record<string, number> };
      };
      assert.ok(searched.facets.registry['github.com/acme/private']);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`GitHub push webhook (${dialect})`, () => {
    it('verifies the HMAC-SHA256 signature and syncs the registry of the pushed branch', async () => {
      const standin = await startGitHubStandin({ repos: {} });
      const s = await testServerOn(dialect, { githubApiUrl: standin.url });
      try {
        // A GitHub registry the stand-in does not have: the sync fails, but it is triggered.
        const row = await s.service.add({ source: 'github.com/acme/hooked', webhookSecret: 'hook-secret' });
        const payload = JSON.stringify({
          ref: 'refs/heads/main',
          repository: { full_name: 'acme/hooked', default_branch: 'main' },
        });
        const sign = (secret: string) =>
          `sha256=${createHmac('sha256', secret).update(payload).digest('hex')}`;
        const send = (signature: string, event = 'push') =>
          s.app.request('/api/v1/webhooks/github', {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-github-event': event,
              'x-hub-signature-256': signature,
            },
            body: payload,
          });
        assert.equal((await send(sign('wrong-secret'))).status, 401);
        assert.equal((await send('')).status, 401);
        const ok = await send(sign('hook-secret'));
        assert.equal(ok.status, 202);
        assert.deepEqual(await ok.json(), { syncing: ['github.com/acme/hooked'] });
        await s.service.queue.idle();
        const synced = await s.service.find(row.id, ADMIN_ACCESS);
        assert.notEqual(synced.lastSyncStatus, 'never');
        assert.equal((await send(sign('hook-secret'), 'ping')).status, 200);
      } finally {
        await s.close();
        await standin.close();
      }
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`API description and failures (${dialect})`, () => {
    it('every path in openapi.json is served (no "no endpoint" 404 for a documented path)', async () => {
      const s = await testServerOn(dialect);
      try {
        const { OPENAPI } = await import('../../server/src/api/openapi.js');
        for (const [path, item] of Object.entries(OPENAPI.paths)) {
          const concrete = path.replace(/\{[^}]+\}/g, (m) =>
            m === '{version}' ? 'v1' : m === '{id}' ? '1' : 'x',
          );
          for (const method of Object.keys(item).filter((k) => ['get', 'post', 'delete'].includes(k))) {
            const res = await s.app.request(concrete, { method: method.toUpperCase() });
            const body = res.headers.get('content-type')?.includes('json')
              ? ((await res.json()) as { error?: { message?: string } })
              : {};
            assert.ok(
              !body.error?.message?.startsWith('no endpoint') && res.status !== 405,
              `${method.toUpperCase()} ${path} is documented but not served`,
            );
          }
        }
      } finally {
        await s.close();
      }
    });

    it('resolve and registry answers match the schemas openapi.json publishes', async () => {
      const s = await testServerOn(dialect, { defaultRegistry: REG });
      try {
        const row = await s.service.add({ source: FIXTURES, name: REG });
        await s.service.sync(row.id, 'manual');
        const { OPENAPI } = await import('../../server/src/api/openapi.js');
        const { Ajv } = await import('ajv');
        const ajv = new Ajv({ strict: false });
        ajv.addSchema({ $id: 'api', components: OPENAPI.components });
        const resolution = ajv.compile({ $ref: 'api#/components/schemas/Resolution' });
        const registry = ajv.compile({ $ref: 'api#/components/schemas/Registry' });
        const error = ajv.compile({
          $ref: 'api#/components/responses/Error/content/application~1json/schema',
        });
        const body = await (await s.app.request('/api/v1/resolve?ref=redis:v1.0')).json();
        assert.ok(resolution(body), JSON.stringify(resolution.errors));
        const reg = await (await s.app.request(`/api/v1/registries/${row.id}`)).json();
        assert.ok(registry(reg), JSON.stringify(registry.errors));
        const missing = await (await s.app.request('/api/v1/resolve?ref=redis:v7')).json();
        assert.ok(error(missing), JSON.stringify(error.errors));
        assert.ok(!resolution(missing));
      } finally {
        await s.close();
      }
    });

    it('a database that went away answers 503 without details, and readyz says not ready', async () => {
      const s = await testServerOn(dialect);
      try {
        await s.store.close();
        const res = await s.app.request('/api/v1/registries');
        assert.equal(res.status, 503);
        const body = (await res.json()) as { error: { code: string; message: string } };
        assert.equal(body.error.code, 'DATABASE_UNAVAILABLE');
        assert.equal((await s.app.request('/readyz')).status, 503);
      } finally {
        await s.service.stop();
      }
    });
  });
}

/**
 * Organisations and per-organisation visibility over HTTP (docs/server.md, "Organisations and
 * visibility"): registries of an organisation are private to it, tokens carry the organisations
 * they may read, and whatever a caller may not read is not found (404, never 403) on search,
 * resolve, files, pages and the registry endpoints, with totals and facets counted after the filter.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  admin,
  DIALECTS,
  type DialectTestServer,
  databaseOn,
  FIXTURES,
  tempDir,
  testServerOn,
} from './helpers.js';

const PUBLIC = 'github.com/dm-samples/templates';
const ACME = 'github.com/acme/templates';
const GLOBEX = 'github.com/globex/templates';
const HIDDEN = 'github.com/nobody/hidden';

interface SearchBody {
  total: number;
  hits: { registry: string; name: string }[];
  facets: { registry: Record<string, number>; collection: Record<string, number> };
}

for (const dialect of DIALECTS) {
  describe(`organisations and visibility over HTTP (${dialect})`, () => {
    let s: DialectTestServer;
    let acmeToken: string;
    let globexToken: string;
    let bothToken: string;
    const ids: Record<string, number> = {};

    before(async () => {
      s = await testServerOn(dialect);
      for (const [name, input] of [
        [PUBLIC, {}],
        [ACME, { organisation: 'acme' }],
        [GLOBEX, { organisation: 'Globex' }],
        [HIDDEN, { visibility: 'private' as const }],
      ] as const) {
        const row = await s.service.add({ source: FIXTURES, name, ...input });
        ids[name] = row.id;
        const outcome = await s.service.sync(row.id, 'manual');
        assert.equal(outcome.status, 'succeeded', name);
      }
      acmeToken = await s.service.createToken({ admin: false, registry: null, organisations: ['acme'] });
      globexToken = await s.service.createToken({ admin: false, registry: null, organisations: ['globex'] });
      bothToken = await s.service.createToken({
        admin: false,
        registry: null,
        organisations: ['acme', 'globex'],
      });
    });
    after(() => s?.close());

    const get = (path: string, token?: string) =>
      s.app.request(path, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    const search = async (query: string, token?: string): Promise<SearchBody> => {
      const res = await get(`/api/v1/search?${query}`, token);
      assert.equal(res.status, 200);
      return (await res.json()) as SearchBody;
    };

    it('a registry given an organisation is private to it, and says so', async () => {
      const res = await get(`/api/v1/registries/${encodeURIComponent(ACME)}`, acmeToken);
      assert.equal(res.status, 200);
      const info = (await res.json()) as { visibility: string; organisation: string | null };
      assert.deepEqual([info.visibility, info.organisation], ['private', 'acme']);
      const globex = (await (await get(`/api/v1/registries/${ids[GLOBEX]}`, globexToken)).json()) as {
        organisation: string;
      };
      assert.equal(globex.organisation, 'globex');
    });

    it('search counts, lists and facets only what each caller may read', async () => {
      const anonymous = await search('q=redis&limit=100');
      const acme = await search('q=redis&limit=100', acmeToken);
      const both = await search('q=redis&limit=100', bothToken);
      const all = await search('q=redis&limit=100', 'test-admin-token');
      const perRegistry = all.facets.registry[PUBLIC]!;
      assert.ok(perRegistry > 0);
      assert.deepEqual(anonymous.facets.registry, { [PUBLIC]: perRegistry });
      assert.deepEqual(acme.facets.registry, { [PUBLIC]: perRegistry, [ACME]: perRegistry });
      assert.deepEqual(both.facets.registry, {
        [PUBLIC]: perRegistry,
        [ACME]: perRegistry,
        [GLOBEX]: perRegistry,
      });
      assert.equal(Object.keys(all.facets.registry).length, 4);
      for (const [body, readable] of [
        [anonymous, 1],
        [acme, 2],
        [both, 3],
        [all, 4],
      ] as const) {
        assert.equal(body.total, perRegistry * readable);
        assert.equal(body.hits.length, body.total);
        for (const count of Object.values(body.facets.collection)) assert.ok(count <= body.total);
      }
      // Naming a registry the caller may not read finds nothing, like a registry that does not exist.
      for (const name of [ACME, HIDDEN, 'github.com/no/such']) {
        const named = await search(`q=redis&registry=${encodeURIComponent(name)}`);
        assert.deepEqual([named.total, named.hits, named.facets.registry], [0, [], {}], name);
      }
      const named = await search(`q=redis&registry=${encodeURIComponent(ACME)}`, acmeToken);
      assert.equal(named.total, perRegistry);
    });

    it('resolve, template info, files and pages answer 404 to whoever may not read', async () => {
      const ref = (name: string) => `/api/v1/resolve?ref=${encodeURIComponent(`${name}/redis:v1.0`)}`;
      const file = (name: string) => `/api/v1/templates/${name}/redis/versions/v1.0.3/files/redis.jinja`;
      const paths = (name: string) => [
        ref(name),
        `/api/v1/templates/${name}/redis`,
        file(name),
        `/api/v1/templates/${name}/redis/versions/v1.0.3/schema`,
        `/api/v1/registries/${encodeURIComponent(name)}`,
        `/api/v1/registries/${ids[name]}`,
        `/templates/${name}/redis`,
      ];
      for (const path of paths(ACME)) {
        assert.equal((await get(path, acmeToken)).status, 200, path);
        assert.equal((await get(path, bothToken)).status, 200, path);
        for (const token of [undefined, globexToken]) {
          const res = await get(path, token);
          assert.equal(res.status, 404, `${path} ${token ? 'globex' : 'anonymous'}`);
          const body = await res.text();
          if (path.startsWith('/api/')) {
            const code = (JSON.parse(body) as { error: { code: string } }).error.code;
            assert.equal(code, 'REGISTRY_NOT_FOUND', path);
          }
        }
      }
      // The same answers, byte for byte, as for a registry that does not exist.
      const missing = await (await get(ref('github.com/no/such'))).json();
      const hidden = await (await get(ref(ACME), globexToken)).json();
      assert.deepEqual(
        JSON.stringify(hidden).replaceAll(ACME, 'X'),
        JSON.stringify(missing).replaceAll('github.com/no/such', 'X'),
      );
      for (const path of paths(HIDDEN)) assert.equal((await get(path, bothToken)).status, 404, path);
    });

    it('the registry list, not-found pages and sync history hold only readable registries', async () => {
      const names = async (token?: string) =>
        (
          (await (await get('/api/v1/registries', token)).json()) as { registries: { name: string }[] }
        ).registries
          .map((r) => r.name)
          .sort();
      assert.deepEqual(await names(), [PUBLIC]);
      assert.deepEqual(await names(acmeToken), [ACME, PUBLIC].sort());
      // A not-found page lists what exists: only readable registries.
      const page = await (await get('/templates/github.com/no/such/redis')).text();
      assert.ok(page.includes(PUBLIC));
      for (const name of [ACME, GLOBEX, HIDDEN]) assert.ok(!page.includes(name), name);
      const history = `/api/v1/registries/${ids[ACME]}/syncs`;
      assert.equal((await get(history, acmeToken)).status, 200);
      assert.equal((await get(history, globexToken)).status, 404);
    });

    it('POST /registries takes an organisation, checked', async () => {
      const post = (body: unknown) =>
        s.app.request('/api/v1/registries', {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const bad = await post({ source: FIXTURES, name: 'github.com/x/bad', organisation: 'not an org!' });
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as { error: { code: string } }).error.code, 'INVALID_ORGANISATION');
      const wrongType = await post({ source: FIXTURES, name: 'github.com/x/bad', organisation: 7 });
      assert.equal(wrongType.status, 400);
      const open = await post({
        source: FIXTURES,
        name: 'github.com/acme/open',
        organisation: 'acme',
        visibility: 'public',
      });
      assert.equal(open.status, 201);
      const info = (await open.json()) as { visibility: string; organisation: string };
      assert.deepEqual([info.visibility, info.organisation], ['public', 'acme']);
      await s.service.queue.idle();
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`dm-registry token create --org (${dialect})`, () => {
    it('creates organisation tokens, lists them, and refuses bad names and mixed flags (exit 2)', async () => {
      const dir = tempDir();
      const bin = join(process.cwd(), 'bin', 'dm-registry.js');
      const db = await databaseOn(dialect, dir);
      const run = (...args: string[]) =>
        spawnSync(process.execPath, [bin, ...args, '--db', db], { encoding: 'utf8', cwd: dir });
      try {
        const created = run('token', 'create', '--org', 'Acme, labs,acme');
        assert.equal(created.status, 0, created.stderr);
        assert.match(created.stdout, /^dmr_[A-Za-z0-9_-]{43}\n$/);
        const list = run('token', 'list');
        assert.equal(list.status, 0, list.stderr);
        assert.match(list.stdout, /^1\tread\torg:acme,labs\tcreated /);
        for (const args of [
          ['--org', 'bad org'],
          ['--org', 'a,,b'],
          ['--org', '-acme'],
          ['--org', 'acme', '--admin'],
          ['--org', 'acme', '--read', '*'],
        ]) {
          const refused = run('token', 'create', ...args);
          assert.equal(refused.status, 2, `${args.join(' ')}: ${refused.stderr}`);
          assert.match(refused.stderr, /^dm-registry: /);
          assert.ok(!refused.stderr.includes('    at '), refused.stderr);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

/**
 * Per-organisation visibility against an oracle (docs/server.md, "Organisations and visibility"):
 * fast-check draws worlds of organisations, registries (public, private, of an organisation),
 * templates, tokens (admin, `*`, one registry, organisations) and queries; every search answers
 * exactly the ids, total and facets the oracle computes from the visible registries, through the
 * HTTP API with real tokens; resolve (and OCI's /v2/ tag list) answers 200 exactly where the oracle
 * says the caller may read.
 * Then 10,000 anonymous queries over a world whose private registries hold words found nowhere
 * else return no private name, hit or count. One suite per database of DIALECTS (SQLite, and
 * PostgreSQL where it is installed: a database of the test process's one cluster, helpers.ts).
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { BuiltIndex, IndexedTemplate } from '../../server/src/indexer/build-index.js';
import type { SearchPage } from '../../server/src/store/contract.js';
import { isPostgres } from '../../server/src/store/open-store.js';
import { swapIndexPg } from '../../server/src/store/postgres/swap-index.js';
import { swapIndex } from '../../server/src/store/sqlite/swap-index.js';
import { ADMIN_TOKEN, DIALECTS, type DialectTestServer, testServerOn } from './helpers.js';

/** No word is a prefix of another, so a prefix query matches the same words on both dialects. */
const WORDS = ['amber', 'birch', 'coral', 'dune', 'ember', 'fjord', 'glade', 'heron', 'iris', 'jade'];
const ORGANISATIONS = ['acme', 'globex', 'initech'];
/** Random worlds per database: the file (both databases, 10,000 queries each) stays near a minute. */
const RUNS_PER_DATABASE = 20;

interface TemplateSpec {
  collection: string;
  name: string;
  title: string;
  description: string;
  properties: string[];
}

interface RegistrySpec {
  id: number;
  name: string;
  visibility: 'public' | 'private';
  organisation: string | null;
  templates: TemplateSpec[];
}

type Grant = { kind: 'all' } | { kind: 'registry'; index: number } | { kind: 'orgs'; orgs: string[] };

/** A token is one row: one grant (a registry, organisations, or `*`). */
interface UserSpec {
  kind: 'anonymous' | 'admin' | 'token';
  grants: Grant[];
}

interface SearchSpec {
  q: string;
  collection?: string | undefined;
  registry?: number | 'missing' | undefined;
}

interface World {
  registries: RegistrySpec[];
  users: UserSpec[];
  searches: SearchSpec[];
}

const word = fc.constantFrom(...WORDS);
const words = (min: number, max: number) => fc.array(word, { minLength: min, maxLength: max });

const templateSpec: fc.Arbitrary<TemplateSpec> = fc.record({
  collection: fc.oneof(fc.constant(''), word),
  name: words(1, 3).map((w) => w.join('-')),
  title: words(0, 2).map((w) => w.join(' ')),
  description: words(0, 3).map((w) => w.join(' ')),
  properties: words(0, 2),
});

const registrySpecs = fc.array(
  fc.record({
    visibility: fc.constantFrom('public' as const, 'private' as const),
    organisation: fc.option(fc.constantFrom(...ORGANISATIONS), { nil: null }),
    templates: fc.uniqueArray(templateSpec, {
      maxLength: 10,
      selector: (t) => `${t.collection}/${t.name}`,
    }),
  }),
  { minLength: 1, maxLength: 5 },
);

const grant = (registries: number): fc.Arbitrary<Grant> =>
  fc.oneof(
    fc.constant<Grant>({ kind: 'all' }),
    fc.nat(registries - 1).map<Grant>((index) => ({ kind: 'registry', index })),
    fc
      .uniqueArray(fc.constantFrom(...ORGANISATIONS), { minLength: 1, maxLength: 2 })
      .map<Grant>((orgs) => ({ kind: 'orgs', orgs })),
  );

const query = fc.oneof(
  fc.constant(''),
  word,
  word.chain((w) => fc.integer({ min: 1, max: w.length }).map((n) => w.slice(0, n))),
  words(2, 2).map((w) => w.join(' ')),
  words(1, 2).map((w) => w.join('-')),
  fc.constantFrom('zzz', 'acme', 'templates', 'r1'),
);

const world: fc.Arbitrary<World> = registrySpecs.chain((specs) =>
  fc.record({
    registries: fc.constant(
      specs.map((r, i): RegistrySpec => ({ ...r, id: i + 1, name: `github.com/r${i + 1}/templates` })),
    ),
    users: fc.array(
      fc.oneof(
        { weight: 1, arbitrary: fc.constant<UserSpec>({ kind: 'anonymous', grants: [] }) },
        { weight: 1, arbitrary: fc.constant<UserSpec>({ kind: 'admin', grants: [] }) },
        {
          weight: 4,
          arbitrary: grant(specs.length).map<UserSpec>((g) => ({ kind: 'token', grants: [g] })),
        },
      ),
      { minLength: 1, maxLength: 5 },
    ),
    searches: fc.array(
      fc.record({
        q: query,
        collection: fc.option(fc.oneof(fc.constant(''), word), { nil: undefined }),
        registry: fc.option(
          fc.oneof(
            fc.nat(specs.length - 1).map((i) => i + 1),
            fc.constant('missing' as const),
          ),
          {
            nil: undefined,
          },
        ),
      }),
      { minLength: 1, maxLength: 6 },
    ),
  }),
);

// ---- The oracle: written from the rule in docs/server.md, independently of the server's code.

function oracleVisible(user: UserSpec, r: RegistrySpec): boolean {
  if (user.kind === 'admin' || r.visibility === 'public') return true;
  return user.grants.some(
    (g) =>
      g.kind === 'all' ||
      (g.kind === 'registry' && g.index + 1 === r.id) ||
      (g.kind === 'orgs' && r.organisation !== null && g.orgs.includes(r.organisation)),
  );
}

function tokensOf(t: TemplateSpec): string[] {
  return [t.name, t.collection, t.title, t.description, ...t.properties]
    .join(' ')
    .split(/[^a-z0-9]+/)
    .filter((x) => x !== '');
}

function oracleMatches(q: string, t: TemplateSpec): boolean {
  const queryWords = q.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const tokens = tokensOf(t);
  return (
    queryWords.every((w) => tokens.some((token) => token.startsWith(w))) ||
    t.name.toLowerCase() === q.trim().toLowerCase()
  );
}

interface Expected {
  keys: string[];
  total: number;
  facets: SearchPage['facets'];
}

function oracleSearch(w: World, user: UserSpec, s: SearchSpec): Expected {
  const keys: string[] = [];
  const facets: SearchPage['facets'] = { collection: {}, registry: {} };
  for (const r of w.registries) {
    if (!oracleVisible(user, r)) continue;
    if (s.registry !== undefined && s.registry !== r.id) continue;
    for (const t of r.templates) {
      if (s.collection !== undefined && s.collection !== t.collection) continue;
      if (!oracleMatches(s.q, t)) continue;
      keys.push(`${r.name}|${t.collection}|${t.name}`);
      facets.collection[t.collection] = (facets.collection[t.collection] ?? 0) + 1;
      facets.registry[r.name] = (facets.registry[r.name] ?? 0) + 1;
    }
  }
  return { keys: keys.sort(), total: keys.length, facets };
}

// ---- Putting a world into the databases.

function builtIndex(r: RegistrySpec): BuiltIndex {
  const templates: IndexedTemplate[] = r.templates.map((t) => {
    // The same content for the same name in every world: the first-seen record outlives a
    // world's registries (docs/integrity-store.md), and a changed digest would be quarantined.
    const sha = createHash('sha256').update(`${r.name}/${t.collection}/${t.name}`).digest('hex');
    const dir = `${t.collection ? `${t.collection}/` : ''}${t.name}/v1`;
    return {
      collection: t.collection,
      name: t.name,
      latestVersion: 'v1',
      title: t.title || null,
      description: t.description || null,
      properties: t.properties,
      versions: [
        {
          version: 'v1',
          kind: 'jinja',
          dir,
          templateFile: `${t.name}.jinja`,
          schemaFile: null,
          hasExample: false,
          digest: `sha256:${sha}`,
          schema: null,
          files: [
            {
              path: `${t.name}.jinja`,
              sha256: sha,
              gitSha: sha.slice(0, 40),
              size: 1,
              content: Buffer.from('x'),
            },
          ],
        },
      ],
    };
  });
  return { templates, findings: [], registryYaml: null };
}

/** Worlds loaded so far: each starts its registries' generations past every earlier one's. */
let worldsLoaded = 0;

/**
 * Replaces the server's registries and tokens with the world's, each registry's index swapped in
 * as a sync would (swapIndex, swapIndexPg). The ids are reused from world to world (the server
 * never reuses one), so the generations must not repeat, as they never do on a server: the
 * catalog's and the search's held rows are keyed by them.
 */
async function loadWorld(s: DialectTestServer, w: World): Promise<void> {
  const generation = ++worldsLoaded * 1000;
  const { store } = s;
  if (isPostgres(store)) {
    // TRUNCATE locks every table it empties; a background read of the server's (a search warming
    // its rows, a token's last use) that holds some of them and waits for another is a deadlock,
    // which PostgreSQL ends by failing one side (40P01): this test's side is tried again.
    for (let attempt = 1; ; attempt++) {
      try {
        await store.pool.query('TRUNCATE tokens, registries, files CASCADE');
        break;
      } catch (error) {
        if ((error as { code?: string }).code !== '40P01' || attempt === 5) throw error;
      }
    }
    for (const r of w.registries) {
      await store.pool.query(
        `INSERT INTO registries (id, name, source_type, source, visibility, organisation, created_at, generation)
         VALUES ($1, $2, 'directory', '/x', $3, $4, 0, $5)`,
        [r.id, r.name, r.visibility, r.organisation, generation],
      );
      await swapIndexPg(store, builtIndex(r), { registryId: r.id, commit: `c${r.id}`, etag: null, now: 0 });
    }
  } else {
    store.sqlite.exec('DELETE FROM tokens; DELETE FROM registries;');
    const insert = store.sqlite.prepare(
      `INSERT INTO registries (id, name, source_type, source, visibility, organisation, created_at, generation)
       VALUES (?, ?, 'directory', '/x', ?, ?, 0, ?)`,
    );
    for (const r of w.registries) {
      insert.run(r.id, r.name, r.visibility, r.organisation, generation);
      swapIndex(store, builtIndex(r), { registryId: r.id, commit: `c${r.id}`, etag: null, now: 0 });
    }
  }
  s.service.catalog.invalidate();
}

/** A real token per user (created through the service, as `token create` does); undefined: anonymous. */
async function tokenFor(s: DialectTestServer, w: World, user: UserSpec): Promise<string | undefined> {
  if (user.kind === 'anonymous') return undefined;
  if (user.kind === 'admin') return ADMIN_TOKEN;
  return await s.service.createToken(grantOptions(w, user.grants[0]!));
}

function grantOptions(w: World, g: Grant) {
  if (g.kind === 'all') return { admin: false as const, registry: null };
  if (g.kind === 'registry') return { admin: false as const, registry: w.registries[g.index]!.name };
  return { admin: false as const, registry: null, organisations: g.orgs };
}

function searchParams(w: World, s: SearchSpec): string {
  const params = new URLSearchParams({ q: s.q, limit: '100' });
  if (s.collection !== undefined) params.set('collection', s.collection);
  if (s.registry !== undefined) {
    params.set(
      'registry',
      s.registry === 'missing' ? 'github.com/no/such' : w.registries[s.registry - 1]!.name,
    );
  }
  return params.toString();
}

interface HttpSearch {
  total: number;
  totalIsLowerBound: boolean;
  hits: { registry: string; collection: string; name: string }[];
  facets: SearchPage['facets'];
}

const keysOf = (hits: readonly { registry: string; collection: string; name: string }[]) =>
  hits.map((h) => `${h.registry}|${h.collection}|${h.name}`).sort();

function assertAnswer(actual: HttpSearch | SearchPage, expected: Expected, label: string): void {
  const hits = 'hits' in actual ? actual.hits : actual.matches;
  assert.equal(actual.totalIsLowerBound, false, label);
  assert.deepEqual(keysOf(hits), expected.keys, label);
  assert.equal(actual.total, expected.total, label);
  assert.deepEqual(actual.facets, expected.facets, label);
}

/** A query nothing matches falls back to similar names (both databases): those must be visible ones. */
function assertOnlyVisible(actual: HttpSearch | SearchPage, w: World, user: UserSpec, label: string): void {
  const visible = new Set(w.registries.filter((r) => oracleVisible(user, r)).map((r) => r.name));
  const hits = 'hits' in actual ? actual.hits : actual.matches;
  for (const m of hits) assert.ok(visible.has(m.registry), `${label}: ${m.registry}`);
  assert.equal(actual.total, hits.length, label);
  for (const name of Object.keys(actual.facets.registry))
    assert.ok(visible.has(name), `${label}: facet ${name}`);
}

/** Runs `check` over `items`, `width` at a time (PostgreSQL's round trips overlap, up to its pool of 8). */
async function inBatches<T>(items: readonly T[], width: number, check: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(check));
}

for (const dialect of DIALECTS)
  describe(`per-organisation visibility against an oracle (${dialect})`, () => {
    let s: DialectTestServer;

    before(async () => {
      s = await testServerOn(dialect);
    });
    after(async () => {
      await s?.close();
    });

    const get = (path: string, token?: string) =>
      s.app.request(path, token ? { headers: { authorization: `Bearer ${token}` } } : {});

    it('search ids, totals and facets, and resolve, match the oracle for random worlds', async () => {
      let searches = 0;
      let hidden = 0;
      await fc.assert(
        fc.asyncProperty(world, async (w) => {
          await loadWorld(s, w);
          for (const user of w.users) {
            const token = await tokenFor(s, w, user);
            for (const search of w.searches) {
              const expected = oracleSearch(w, user, search);
              const label = `${dialect} ${JSON.stringify(user)} ${JSON.stringify(search)}`;
              const res = await get(`/api/v1/search?${searchParams(w, search)}`, token);
              assert.equal(res.status, 200, label);
              const answer = (await res.json()) as HttpSearch;
              if (expected.total === 0 && search.q.trim().length >= 3) {
                assertOnlyVisible(answer, w, user, label);
              } else {
                assertAnswer(answer, expected, label);
              }
              searches++;
            }
            for (const r of w.registries) {
              const t = r.templates[0];
              if (!t) continue;
              const ref = `${r.name}/${t.collection ? `${t.collection}/` : ''}${t.name}:v1`;
              const res = await get(`/api/v1/resolve?ref=${encodeURIComponent(ref)}`, token);
              const visible = oracleVisible(user, r);
              if (!visible) hidden++;
              assert.equal(res.status, visible ? 200 : 404, `${dialect} ${JSON.stringify(user)} ${ref}`);
              // The same rule over OCI's /v2/ (docs/oci.md): readable, or the NAME_UNKNOWN of a missing one.
              const name = `dm/${r.name}/${t.collection ? `${t.collection}/` : ''}${t.name}`;
              const oci = await get(`/v2/${name}/tags/list`, token);
              assert.equal(oci.status, visible ? 200 : 404, `${dialect} ${JSON.stringify(user)} /v2/${name}`);
            }
          }
        }),
        { numRuns: RUNS_PER_DATABASE },
      );
      // The worlds drawn exercised both sides of the rule.
      assert.ok(searches > 50, `only ${searches} searches`);
      assert.ok(hidden > 5, `only ${hidden} hidden resolves`);
    });

    it('10,000 anonymous queries return no private registry, template name, hit or count', async () => {
      // Private registries (of organisations, or of none) hold words that appear nowhere public.
      const secret = ['quasar', 'nebula', 'pulsar', 'zenith', 'vortex'];
      const w: World = {
        registries: [
          { visibility: 'public', organisation: null },
          { visibility: 'public', organisation: 'acme' },
          { visibility: 'private', organisation: 'acme' },
          { visibility: 'private', organisation: 'globex' },
          { visibility: 'private', organisation: null },
        ].map((r, i) => {
          const pool = r.visibility === 'public' ? WORDS : secret;
          return {
            ...r,
            id: i + 1,
            name: `github.com/${r.visibility === 'public' ? 'open' : 'closed'}${i + 1}/templates`,
            visibility: r.visibility as 'public' | 'private',
            templates: Array.from({ length: 30 }, (_, j) => ({
              collection: j % 3 === 0 ? '' : pool[j % pool.length]!,
              name: `${pool[j % pool.length]}-${pool[(j * 7 + 3) % pool.length]}-${j}`,
              title: `${pool[(j + 1) % pool.length]} ${pool[(j + 2) % pool.length]}`,
              description: `${pool[(j + 3) % pool.length]}`,
              properties: [pool[(j + 4) % pool.length]!],
            })),
          };
        }),
        users: [],
        searches: [],
      };
      await loadWorld(s, w);
      const anonymous: UserSpec = { kind: 'anonymous', grants: [] };
      const privateRegistries = w.registries.filter((r) => r.visibility === 'private');
      const forbidden = [
        ...privateRegistries.map((r) => r.name),
        ...privateRegistries.flatMap((r) => r.templates.map((t) => t.name)),
        ...secret,
      ];
      const anyWord = fc.constantFrom(...WORDS, ...secret);
      const queries = fc.sample(
        fc.record({
          q: fc.oneof(
            anyWord,
            anyWord.chain((x) => fc.integer({ min: 1, max: x.length }).map((n) => x.slice(0, n))),
            fc.array(anyWord, { minLength: 1, maxLength: 3 }).map((x) => x.join(' ')),
            fc.constantFrom(...forbidden),
            fc.string({ maxLength: 12 }),
          ),
          collection: fc.option(fc.oneof(fc.constant(''), anyWord), { nil: undefined }),
          registry: fc.option(fc.integer({ min: 1, max: w.registries.length }), { nil: undefined }),
        }),
        { numRuns: 10_000, seed: 14 },
      );
      assert.equal(queries.length, 10_000);
      let withHits = 0;
      // FTS5 and PostgreSQL read '_' inside a word differently from the oracle: leaks are checked, counts not.
      const comparable = (search: SearchSpec) => !search.q.includes('_');
      const started = performance.now();
      await inBatches(queries, 8, async (search) => {
        const expected = oracleSearch(w, anonymous, search);
        const label = `${dialect} ${JSON.stringify(search)}`;
        const res = await get(`/api/v1/search?${searchParams(w, search)}`);
        assert.equal(res.status, 200, label);
        const body = (await res.json()) as HttpSearch;
        // Everything but the query echoed back.
        const shown = JSON.stringify({ ...body, query: undefined });
        for (const name of forbidden) assert.ok(!shown.includes(name), `${label} shows ${name}`);
        // A query no word matches falls back to similar names (visible ones: the leak check above).
        const similarNames = expected.total === 0 && search.q.trim().length >= 3;
        if (comparable(search) && !similarNames) assert.equal(body.total, expected.total, label);
        if (body.total > 0) withHits++;
      });
      process.stdout.write(
        `# 10,000 anonymous queries over HTTP on ${dialect}: ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
      );
      assert.ok(withHits > 1000, `only ${withHits} of the queries found anything`);
    });
  });

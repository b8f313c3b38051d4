/**
 * One suite, two databases (docs/server.md, "Store"): the same registries are indexed into SQLite
 * (the service's sync) and into PostgreSQL (the same index built from the same sources, swapped in
 * with swapIndexPg), and every read query must answer the same on both; the search's golden set
 * (every template's exact name) ranks that template first on both, and what a caller may not see
 * is never counted. The PostgreSQL half is registered where PostgreSQL is installed (always in CI).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ReadStore } from '../../server/src/store/contract.js';
import { openPostgresStore, type PostgresStore } from '../../server/src/store/postgres/open.js';
import { PostgresReads } from '../../server/src/store/postgres/reads.js';
import { readsOf } from '../../server/src/store/sqlite/reads.js';
import { EVERY_REGISTRY, PUBLIC_READER } from '../../server/src/store/visibility.js';
import { pagesServer } from '../pages/fixture.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';
import type { TestServer } from './helpers.js';
import { indexDirectoryPg } from './pg-index.js';

const withoutIds = <T extends { id?: number }>(rows: T[]) => rows.map(({ id: _, ...rest }) => rest);
/** Version rows without ids; the first-seen time only as "recorded" (each side is indexed at its own clock). */
const comparableVersions = <T extends { id?: number; firstSeenAt: number | null }>(rows: T[]) =>
  withoutIds(rows).map(({ firstSeenAt, ...rest }) => ({
    ...rest,
    firstSeenRecorded: typeof firstSeenAt === 'number',
  }));

/** Queries whose matches both dialects must count alike (words as a user types them). */
const QUERIES = [
  '',
  'redis',
  'red',
  'redis sentinel',
  'cache',
  'ingress',
  'network policy',
  'cron',
  'replicas',
  'caching',
];

/** Misspelt queries: both dialects answer with the same similar names, in the same order. */
const TYPOS = ['redsi', 'rediss', 'ngnix-ingres', 'postgress', 'namespase', 'cronjob', 'xyzzy', 'sentinal'];

if (postgresBinaries()) {
  describe('the store on SQLite and PostgreSQL', () => {
    let cluster: PostgresCluster;
    let s: TestServer;
    let pgStore: PostgresStore;
    let sqlite: ReadStore;
    let postgres: ReadStore;
    let registries: { id: number; name: string; visibility: string; versionCount: number }[];

    before(async () => {
      cluster = await startPostgres();
      s = await pagesServer('sqlite');
      pgStore = await openPostgresStore(await cluster.createDatabase('dialects'), { max: 4 });
      registries = (await s.service.all()).map((r) => ({
        id: r.id,
        name: r.name,
        visibility: r.visibility,
        versionCount: r.versionCount,
      }));
      for (const r of await s.service.all()) {
        await pgStore.pool.query(
          `INSERT INTO registries (id, name, source_type, source, visibility, created_at)
           VALUES ($1, $2, $3, $4, $5, 0)`,
          [r.id, r.name, r.sourceType, r.source, r.visibility],
        );
        const swapped = await indexDirectoryPg(pgStore, r.id, r.source);
        assert.equal(swapped.versionCount, r.versionCount, r.name);
        assert.equal(swapped.templateCount, r.templateCount, r.name);
      }
      sqlite = readsOf(s.store);
      postgres = new PostgresReads(pgStore);
    });
    after(async () => {
      await pgStore?.close();
      await s?.close();
      cluster?.stop();
    });

    it('answers every template, version, file, schema and finding query the same', async () => {
      let versionsSeen = 0;
      for (const r of registries) {
        const templates = await sqlite.templates(r.id);
        assert.deepEqual(await postgres.templates(r.id), templates, r.name);
        assert.deepEqual(await postgres.findingsUnder(r.id, ''), await sqlite.findingsUnder(r.id, ''));
        const listed = await sqlite.versionList(r.id);
        assert.equal(listed.length, r.versionCount, r.name);
        assert.deepEqual(await postgres.versionList(r.id), listed, r.name);
        for (const t of templates) {
          assert.deepEqual(
            await postgres.template(r.id, t.collection, t.name),
            await sqlite.template(r.id, t.collection, t.name),
          );
          const a = await sqlite.versions(r.id, t.collection, t.name);
          const b = await postgres.versions(r.id, t.collection, t.name);
          assert.deepEqual(comparableVersions(b), comparableVersions(a), `${r.name} ${t.name}`);
          for (const [i, va] of a.entries()) {
            const vb = b[i]!;
            versionsSeen++;
            assert.deepEqual(await postgres.schemaJson(vb.id), await sqlite.schemaJson(va.id));
            const filesA = await sqlite.versionContents(va.id);
            const filesB = await postgres.versionContents(vb.id);
            assert.deepEqual(filesB, filesA);
            for (const f of filesA) {
              assert.equal(await postgres.fileSha256(vb.id, f.path), await sqlite.fileSha256(va.id, f.path));
              assert.deepEqual(await postgres.fileContent(vb.id, f.path), f.content);
              assert.equal(await postgres.inlineText(vb.id, f.path), await sqlite.inlineText(va.id, f.path));
            }
            assert.equal(await postgres.fileSha256(vb.id, 'no/such/file'), undefined);
            assert.deepEqual(
              await postgres.findingsUnder(r.id, va.dir),
              await sqlite.findingsUnder(r.id, va.dir),
            );
          }
        }
      }
      assert.ok(versionsSeen > 20, `only ${versionsSeen} versions compared`);
    });

    it('answers the sync history the same', async () => {
      for (const r of registries) {
        const rows = await sqlite.syncs(r.id);
        assert.ok(rows.length > 0);
        for (const x of [...rows].reverse()) {
          await pgStore.pool.query(
            `INSERT INTO syncs (id, registry_id, "trigger", status, started_at, finished_at, replica, api_requests, error)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
            [x.id, r.id, x.trigger, x.status, x.startedAt, x.finishedAt, x.replica, x.apiRequests, x.error],
          );
        }
        assert.deepEqual(await postgres.syncs(r.id), rows);
      }
    });

    it('ranks the exactly named template first for every name (golden set), on both', async () => {
      const reader = EVERY_REGISTRY;
      const names = new Set<string>();
      for (const r of registries) for (const t of await sqlite.templates(r.id)) names.add(t.name);
      assert.ok(names.size > 10);
      for (const [dialect, reads] of [
        ['sqlite', sqlite],
        ['postgres', postgres],
      ] as const) {
        for (const name of names) {
          const page = await reads.search({ q: name, page: 1, limit: 5, reader });
          assert.equal(
            page.matches[0]?.name,
            name,
            `${dialect}: '${name}' → ${page.matches.map((m) => m.name).join(', ')}`,
          );
        }
      }
    });

    it('counts the same matches, totals and facets on both', async () => {
      const reader = EVERY_REGISTRY;
      for (const q of QUERIES) {
        const a = await sqlite.search({ q, page: 1, limit: 100, reader });
        const b = await postgres.search({ q, page: 1, limit: 100, reader });
        assert.equal(b.total, a.total, q);
        assert.deepEqual(b.facets, a.facets, q);
        const key = (m: { registry: string; collection: string; name: string }) =>
          `${m.registry}/${m.collection}/${m.name}`;
        assert.deepEqual(b.matches.map(key).sort(), a.matches.map(key).sort(), q);
        // Both rank by the same rule (search.ts: exact name, name prefix, by-field score, name), so
        // under the candidate bound the order is the same, and each match's fields too.
        assert.deepEqual(b.matches, a.matches, q);
      }
    });

    it('never shows, counts or facets a registry the caller may not see, on both', async () => {
      const hidden = registries.filter((r) => r.visibility !== 'public').map((r) => r.name);
      assert.ok(hidden.length > 0);
      for (const reads of [sqlite, postgres]) {
        for (const q of [...QUERIES, 'hidden', 'hidden-redis', 'hidden redis']) {
          const page = await reads.search({ q, page: 1, limit: 100, reader: PUBLIC_READER });
          for (const m of page.matches) assert.ok(!hidden.includes(m.registry), `${q}: ${m.registry}`);
          for (const name of hidden) assert.equal(page.facets.registry[name], undefined, q);
        }
        const none = await reads.search({ q: 'hidden', page: 1, limit: 10, reader: PUBLIC_READER });
        assert.equal(none.total, 0);
      }
    });

    it('finds names with a typo alike on both (pg_trgm; similar-names.ts on SQLite), with did-you-mean', async () => {
      const reader = EVERY_REGISTRY;
      for (const reads of [sqlite, postgres]) {
        const page = await reads.search({ q: 'rediss', page: 1, limit: 5, reader });
        assert.equal(page.matches[0]?.name, 'redis');
        assert.equal(page.didYouMean, 'redis');
      }
      const key = (m: { registry: string; collection: string; name: string }) =>
        `${m.registry}/${m.collection}/${m.name}`;
      for (const q of TYPOS) {
        for (const collection of [undefined, 'caching']) {
          const a = await sqlite.search({ q, collection, page: 1, limit: 100, reader });
          const b = await postgres.search({ q, collection, page: 1, limit: 100, reader });
          assert.deepEqual(a.matches.map(key), b.matches.map(key), q);
          assert.equal(a.total, b.total, q);
          assert.deepEqual(a.facets, b.facets, q);
          assert.equal(a.didYouMean, b.didYouMean, q);
        }
      }
      const exact = await sqlite.search({ q: 'redis', page: 1, limit: 5, reader });
      assert.equal(exact.didYouMean, null, 'no did-you-mean when the words match');
    });

    it('searches a registry re-indexed or removed on PostgreSQL as it now is (held words follow the generation)', async () => {
      const reader = EVERY_REGISTRY;
      const [first, second] = registries;
      assert.ok(first && second);
      const namesIn = async (registry: string, q: string) =>
        (await postgres.search({ q, registry, page: 1, limit: 100, reader })).matches
          .map((m) => m.name)
          .sort();
      const before = await sqlite.templates(first.id);
      const other = await sqlite.templates(second.id);
      const gone = before.find((t) => !other.some((o) => o.name === t.name))!;
      const added = other.find((t) => !before.some((b) => b.name === t.name))!;
      assert.ok(gone && added, 'the first two registries differ by a template each way');
      assert.deepEqual(await namesIn(first.name, gone.name), [gone.name]);
      // The first registry is re-indexed from the second one's source: its generation changes.
      const source = (await s.service.all()).find((r) => r.id === second.id)!.source;
      await indexDirectoryPg(pgStore, first.id, source);
      assert.ok(!(await namesIn(first.name, gone.name)).includes(gone.name));
      assert.ok((await namesIn(first.name, added.name)).includes(added.name));
      await pgStore.pool.query('DELETE FROM registries WHERE id = $1', [second.id]);
      const page = await postgres.search({ q: added.name, page: 1, limit: 100, reader });
      assert.ok(page.matches.length > 0);
      for (const m of page.matches) assert.notEqual(m.registry, second.name);
      assert.equal(page.facets.registry[second.name], undefined);
    });
  });
} else {
  process.stdout.write('# PostgreSQL is not installed here: the store is tested on SQLite only\n');
}

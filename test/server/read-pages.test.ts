/**
 * Paged reads (docs/server.md "Reads, written once"; docs/pages.md "Files"): a registry page reads
 * one page of templates, in byte order on both databases (the PostgreSQL cluster has the
 * operators' en_US.UTF-8 locale, which orders `ab` before `B`), and a template page one page of
 * versions read whole, newest first in semver order; a not-found page the first templates and the
 * search's answer, not the registry. The rows each read returns are counted by a runner that
 * passes every statement to the real one and counts its rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nearestVersions } from '../../client/src/reference/index.js';
import { nearestStored, VERSION_NAMES_STEP } from '../../server/src/resolve/nearest-versions.js';
import type {
  ReadStore,
  RegistryGeneration,
  SearchCounters,
  SearchOptions,
  SearchPage,
} from '../../server/src/store/contract.js';
import type { PostgresStore } from '../../server/src/store/postgres/open.js';
import { postgresRunner } from '../../server/src/store/postgres/runner.js';
import { SqlReads } from '../../server/src/store/read-queries.js';
import type { SqlRunner } from '../../server/src/store/sql.js';
import type { Store } from '../../server/src/store/sqlite/open.js';
import { sqliteRunner } from '../../server/src/store/sqlite/runner.js';
import { DIALECTS, type DialectTestServer, testServerOn } from './helpers.js';
import { listedRegistry } from './listed-registry.js';

/** Names whose byte order differs from en_US.UTF-8's (case and punctuation). */
const ORDER_NAMES = ['ab', 'B', 'a_b', 'Z', 'a-c', 'a.d'];
/** Enough that a not-found page's list (100) is cut. */
const FILLER = 120;
/** Versions of `many`: v1.0.10 sorts before v1.0.2 as bytes, after it as versions. */
const VERSIONS = 23;

function registryDir(): string {
  const filler = Array.from({ length: FILLER }, (_, i) => `t${i}`);
  return listedRegistry(
    [...ORDER_NAMES, ...filler],
    Array.from({ length: VERSIONS }, (_, i) => `v1.0.${i}`),
  );
}

/**
 * Versions of `many` in a registry of its own: more than a step of version strings
 * (nearest-versions.ts VERSION_NAMES_STEP), where reading every row whole was the 404's cost;
 * `v1.9.x` sorts after `v1.10.x` as bytes, before it as versions.
 */
const LONG = Array.from({ length: 2500 }, (_, i) => `v1.${Math.floor(i / 100)}.${i % 100}`);

/** The byte order of (collection, name), as both databases must give it. */
const byteOrder = (a: { collection: string; name: string }, b: { collection: string; name: string }) =>
  Buffer.compare(Buffer.from(`${a.collection}\0${a.name}`), Buffer.from(`${b.collection}\0${b.name}`));

/** The rows each statement returned, by statement, for the reads made through it. */
interface Counted {
  runner: SqlRunner;
  log: { sql: string; rows: number }[];
}

function counting(runner: SqlRunner): Counted {
  const log: Counted['log'] = [];
  return {
    log,
    runner: {
      ...runner,
      async all<T>(sql: string, params?: readonly unknown[]) {
        const rows = await runner.all<T>(sql, params);
        log.push({ sql, rows: rows.length });
        return rows;
      },
    },
  };
}

/** The shared reads over a counting runner (the search is not read here). */
class CountedReads extends SqlReads {
  search(_: SearchOptions): Promise<SearchPage> {
    throw new Error('not read in this test');
  }
  warm(_: readonly RegistryGeneration[]): Promise<void> {
    throw new Error('not read in this test');
  }
  searchCounters(): SearchCounters {
    throw new Error('not read in this test');
  }
}

for (const dialect of DIALECTS)
  describe(`paged reads (${dialect})`, () => {
    let s: DialectTestServer;
    let reads: ReadStore;
    let registryId: number;
    let counted: Counted;
    let countedReads: ReadStore;

    before(async () => {
      s = await testServerOn(dialect);
      const row = await s.service.add({
        source: registryDir(),
        name: 'github.com/acme/paged',
        visibility: 'public',
      });
      const outcome = await s.service.sync(row.id, 'manual');
      assert.equal(outcome.status, 'succeeded', outcome.error?.message ?? '');
      registryId = row.id;
      reads = s.service.data.reads;
      counted = counting(
        dialect === 'sqlite'
          ? sqliteRunner(s.store as Store, () => Promise.resolve())
          : postgresRunner(s.store as PostgresStore),
      );
      countedReads = new CountedReads(counted.runner);
      const long = await s.service.add({
        source: listedRegistry([], LONG),
        name: 'github.com/acme/long',
        visibility: 'public',
      });
      const synced = await s.service.sync(long.id, 'manual');
      assert.equal(synced.status, 'succeeded', synced.error?.message ?? '');
      longId = long.id;
    });
    let longId: number;

    after(() => s?.close());

    it("pages a registry's templates in byte order, the pages together the whole list", async () => {
      const all = await reads.templates(registryId);
      assert.equal(all.length, ORDER_NAMES.length + FILLER + 1);
      assert.deepEqual(
        all.map((t) => t.name),
        [...all].sort(byteOrder).map((t) => t.name),
      );
      // The locale would put `ab` first; bytes put upper case first.
      assert.deepEqual(
        all.map((t) => t.name).filter((n) => ORDER_NAMES.includes(n)),
        ['B', 'Z', 'a-c', 'a.d', 'a_b', 'ab'],
      );
      const size = 10;
      const joined = [];
      for (let page = 1; ; page++) {
        const got = await reads.templatesPage(registryId, page, size);
        assert.equal(got.total, all.length);
        if (got.rows.length === 0) {
          assert.equal(page, Math.ceil(all.length / size) + 1);
          break;
        }
        assert.ok(got.rows.length <= size);
        joined.push(...got.rows);
      }
      assert.deepEqual(joined, all);
    });

    it("pages a template's versions newest first (semver), the pages together the whole list", async () => {
      const all = await reads.versions(registryId, '', 'many');
      assert.equal(all.length, VERSIONS);
      assert.equal(all[0]!.version, `v1.0.${VERSIONS - 1}`);
      assert.equal(all[VERSIONS - 1]!.version, 'v1.0.0');
      const size = 5;
      const joined = [];
      for (let page = 1; page <= Math.ceil(VERSIONS / size); page++) {
        const got = await reads.versionsPage(registryId, '', 'many', page, size);
        assert.equal(got.total, VERSIONS);
        joined.push(...got.rows);
      }
      assert.deepEqual(joined, all);
      assert.deepEqual(await reads.versionsPage(registryId, '', 'many', 99, size), {
        rows: [],
        total: VERSIONS,
      });
      assert.deepEqual(await reads.versionsPage(registryId, '', 'nothing', 1, size), { rows: [], total: 0 });
      assert.deepEqual(
        await reads.version(registryId, '', 'many', 'v1.0.10'),
        all.find((v) => v.version === 'v1.0.10'),
      );
      assert.equal(await reads.version(registryId, '', 'many', 'v1.0.99'), undefined);
    });

    it('reads one page of rows, not the whole list', async () => {
      const rowsOf = async (read: () => Promise<unknown>, whole?: (sql: string) => boolean) => {
        counted.log.length = 0;
        await read();
        return counted.log.filter((l) => !whole || whole(l.sql)).reduce((n, l) => n + l.rows, 0);
      };
      const total = ORDER_NAMES.length + FILLER + 1;
      // The whole list reads every template; a page reads its rows and one count.
      assert.equal(await rowsOf(() => countedReads.templates(registryId)), total);
      assert.equal(await rowsOf(() => countedReads.templatesPage(registryId, 2, 10)), 10 + 1);
      // Versions: every version string to order them, but only the page's rows whole.
      const whole = (sql: string) => sql.includes('"firstSeenAt"');
      assert.equal(await rowsOf(() => countedReads.versions(registryId, '', 'many'), whole), VERSIONS);
      assert.equal(await rowsOf(() => countedReads.versionsPage(registryId, '', 'many', 2, 5), whole), 5);
      assert.equal(await rowsOf(() => countedReads.version(registryId, '', 'many', 'v1.0.3'), whole), 1);
    });

    it("a not-found template's page lists the first 100 of its collection and counts the rest", async () => {
      const total = ORDER_NAMES.length + FILLER + 1;
      const first = await countedReads.templatesIn(registryId, '', 10);
      assert.equal(first.total, total);
      assert.deepEqual(first.rows, (await reads.templates(registryId)).slice(0, 10));
      assert.equal((await countedReads.templatesIn(registryId, 'nothing', 10)).total, 0);
      counted.log.length = 0;
      await countedReads.templatesIn(registryId, '', 10);
      assert.equal(
        counted.log.reduce((n, l) => n + l.rows, 0),
        10 + 1,
        'ten rows and a count, not the collection',
      );
      // The page's reads never ask for the whole list (the service's own reads, watched, not replaced).
      const served = s.service.data.reads;
      const wholeList = served.templates.bind(served);
      let wholeListReads = 0;
      served.templates = (id: number) => {
        wholeListReads++;
        return wholeList(id);
      };
      let res: Response;
      try {
        res = await s.app.request('/templates/github.com/acme/paged/t10x');
      } finally {
        served.templates = wholeList;
      }
      assert.equal(wholeListReads, 0, 'the not-found page read the whole list of templates');
      assert.equal(res.status, 404);
      const text = await res.text();
      assert.equal([...text.matchAll(/<li><a href="\/templates\/github\.com\/acme\/paged\//g)].length, 100);
      assert.match(text, new RegExp(`and ${total - 100} more`));
      assert.match(text, /Templates in the root collection/);
      // The nearest name comes from the search, wherever it is in the list.
      assert.match(
        text,
        /<p id="did-you-mean">Did you mean <a href="\/templates\/github\.com\/acme\/paged\/t10">/,
      );
    });
    it("a missing version's 404 names the nearest ten and the count from the version strings alone", async () => {
      // The served reads watched (not replaced): whole version rows must not be read.
      const served = s.service.data.reads;
      const whole = served.versions.bind(served);
      let wholeReads = 0;
      served.versions = (...args) => {
        wholeReads++;
        return whole(...args);
      };
      const asked = ['v1.12.150', 'v1.24.1000', 'v0.1', 'v9.0.0', 'v1.9.5-rc.1'];
      try {
        for (const version of asked) {
          const expected = nearestVersions(LONG, version);
          const api = await s.app.request(`/api/v1/templates/github.com/acme/long/many/versions/${version}`);
          assert.equal(api.status, 404, version);
          const body = (await api.json()) as {
            error: { code: string; details: { available: string[]; versionCount: number; closest?: string } };
          };
          assert.equal(body.error.code, 'VERSION_NOT_FOUND');
          assert.deepEqual(body.error.details.available, expected.versions, version);
          assert.equal(body.error.details.available.length, 10);
          assert.equal(body.error.details.versionCount, LONG.length);
          assert.equal(body.error.details.closest, expected.closest, version);
          const page = await s.app.request(`/templates/github.com/acme/long/many/versions/${version}`);
          assert.equal(page.status, 404, version);
          const text = await page.text();
          for (const v of expected.versions)
            assert.ok(
              text.includes(`href="/templates/github.com/acme/long/many/versions/${v}"`),
              `${version}: ${v}`,
            );
          assert.match(text, new RegExp(`${LONG.length - 10} more|${LONG.length}`), version);
        }
      } finally {
        served.versions = whole;
      }
      assert.equal(wholeReads, 0, "a missing version's 404 read every version row whole");
      // What the store read for it: version strings, a step at a time, no row whole.
      counted.log.length = 0;
      const nearest = await nearestStored(
        countedReads,
        { registryId: longId, collection: '', name: 'many' },
        'v1.12.150',
      );
      assert.deepEqual(nearest, nearestVersions(LONG, 'v1.12.150'));
      assert.equal(counted.log.filter((l) => l.sql.includes('"firstSeenAt"')).length, 0);
      assert.ok(counted.log.every((l) => l.rows <= VERSION_NAMES_STEP));
      assert.equal(
        counted.log.reduce((n, l) => n + l.rows, 0),
        LONG.length,
      );
    });
  });

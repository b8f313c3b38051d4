/**
 * PostgreSQL next to SQLite, in the same run (docs/server.md, "Several replicas"): the index swap of
 * a 10,000-version registry, search p50/p99 over 100,000 templates (target p99 ≤ 10 ms, as on
 * SQLite; both match and rank over rows held in memory, store/search.ts and store/postgres/search.ts), and cross-replica invalidation latency (swap COMMIT on one pool → generation watch on
 * another, p50/p99), and the first search after a swap on both, before (rows read on the request)
 * and now (loaded by the swap path; docs/server.md "Store", "Search after an index swap").
 * PostgreSQL is a private cluster started here (test/support/postgres.ts).
 * Usage: node dist/bench/server-postgres.js [templates, default 100000] [swap versions, default 10000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GenerationWatch } from '../server/src/store/generation-watch.js';
import { serviceStoreOf } from '../server/src/store/open-store.js';
import { openPostgresStore, type PostgresStore } from '../server/src/store/postgres/open.js';
import { PostgresReads } from '../server/src/store/postgres/reads.js';
import { swapIndexPg } from '../server/src/store/postgres/swap-index.js';
import { openStore } from '../server/src/store/sqlite/open.js';
import { ReadQueries, readsOf } from '../server/src/store/sqlite/reads.js';
import { swapIndex } from '../server/src/store/sqlite/swap-index.js';
import { PUBLIC_READER } from '../server/src/store/visibility.js';
import { postgresBinaries, startPostgres } from '../test/support/postgres.js';
import { generatedIndex, measure, percentile, SEARCH_QUERIES } from './generated-index.js';

const QUERIES: [string, string][] = [
  ...SEARCH_QUERIES,
  ['exact name', 'redis-cache-7'],
  ['empty query (the home page)', ''],
];

async function addRegistry(pg: PostgresStore, name: string): Promise<number> {
  const r = await pg.pool.query<{ id: number }>(
    "INSERT INTO registries (name, source_type, source, created_at) VALUES ($1, 'directory', '/x', 0) RETURNING id",
    [name],
  );
  return r.rows[0]!.id;
}

async function main(): Promise<void> {
  if (!postgresBinaries()) {
    console.log('server-postgres bench: PostgreSQL (initdb, pg_ctl) is not installed; nothing measured');
    return;
  }
  const count = Number(process.argv[2] ?? 100_000);
  const swapVersions = Number(process.argv[3] ?? 10_000);
  const cluster = await startPostgres();
  const dir = mkdtempSync(join(tmpdir(), 'bench-pg-'));
  try {
    const url = await cluster.createDatabase('bench');
    const pg = await openPostgresStore(url, { max: 4 });
    const other = await openPostgresStore(url, { max: 2 });
    const sqlite = openStore(join(dir, 'registry.db'));
    const insertSqlite = sqlite.sqlite.prepare(
      "INSERT INTO registries (name, source_type, source, created_at) VALUES (?, 'directory', '/x', 0)",
    );

    // Index swap of a registry of `swapVersions` versions, twice each (cold, then replacing).
    const small = generatedIndex(swapVersions);
    const pgSwapId = await addRegistry(pg, 'github.com/acme/swap');
    const sqliteSwapId = Number(insertSqlite.run('github.com/acme/swap').lastInsertRowid);
    const swapTimes = { pg: [] as number[], sqlite: [] as number[] };
    for (let round = 0; round < 2; round++) {
      let t = performance.now();
      await swapIndexPg(pg, small, { registryId: pgSwapId, commit: `c${round}`, etag: null, now: 0 });
      swapTimes.pg.push((performance.now() - t) / 1000);
      t = performance.now();
      swapIndex(sqlite, small, { registryId: sqliteSwapId, commit: `c${round}`, etag: null, now: 0 });
      swapTimes.sqlite.push((performance.now() - t) / 1000);
    }
    console.log(`index swap, ${swapVersions} versions (cold / replacing), s`);
    console.log(`  postgresql ${swapTimes.pg.map((s) => s.toFixed(2)).join(' / ')}`);
    console.log(`  sqlite     ${swapTimes.sqlite.map((s) => s.toFixed(2)).join(' / ')}`);
    console.log(`  ratio pg/sqlite (replacing) ${(swapTimes.pg[1]! / swapTimes.sqlite[1]!).toFixed(2)}`);

    // Cross-replica invalidation: swap on `pg`, watched from `other`.
    const latencies: number[] = [];
    let committedAt = 0;
    let notify: (() => void) | undefined;
    const watch = new GenerationWatch(
      serviceStoreOf(other).registries.generations,
      (ids) => {
        if (ids.includes(pgSwapId)) {
          latencies.push(performance.now() - committedAt);
          notify?.();
        }
      },
      200,
    );
    await watch.start();
    const tiny = generatedIndex(10);
    for (let i = 0; i < 30; i++) {
      const seen = new Promise<void>((resolve) => {
        notify = resolve;
      });
      await swapIndexPg(pg, tiny, { registryId: pgSwapId, commit: `t${i}`, etag: null, now: 0 });
      committedAt = performance.now();
      await seen;
    }
    watch.stop();
    latencies.sort((a, b) => a - b);
    console.log(
      `cross-replica invalidation (200 ms poll), 30 swaps: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms (target ≤ 1000 ms)`,
    );

    // Search over `count` templates.
    const big = generatedIndex(count);
    const pgBig = await addRegistry(pg, 'github.com/acme/big');
    const sqliteBig = Number(insertSqlite.run('github.com/acme/big').lastInsertRowid);
    let t = performance.now();
    await swapIndexPg(pg, big, { registryId: pgBig, commit: 'c', etag: null, now: 0 });
    const pgIndexed = (performance.now() - t) / 1000;
    await pg.pool.query('ANALYZE');
    t = performance.now();
    swapIndex(sqlite, big, { registryId: sqliteBig, commit: 'c', etag: null, now: 0 });
    const sqliteIndexed = (performance.now() - t) / 1000;
    const pgReads = new PostgresReads(pg);
    const sqliteReads = readsOf(sqlite);
    // The first search reads the registries' templates and lexemes into memory (store/postgres/search.ts).
    t = performance.now();
    await pgReads.search({ q: 'redis', page: 1, limit: 20, reader: PUBLIC_READER });
    const pgHeld = performance.now() - t;
    t = performance.now();
    sqliteReads.search({ q: 'redis', page: 1, limit: 20, reader: PUBLIC_READER });
    console.log(
      `first search (rows read into memory): ${pgHeld.toFixed(0)} ms on PostgreSQL, ${(performance.now() - t).toFixed(0)} ms on SQLite`,
    );
    console.log(
      `search: ${count} templates (indexed in ${pgIndexed.toFixed(1)} s on PostgreSQL, ${sqliteIndexed.toFixed(1)} s on SQLite), 200 queries each, ms`,
    );
    console.log(
      `${'query'.padEnd(30)} ${'postgresql p50/p99'.padStart(20)} ${'sqlite p50/p99'.padStart(18)}   pg hits`,
    );
    let worst = 0;
    for (const [label, q] of QUERIES) {
      let total = 0;
      const a = await measure(async () => {
        total = (await pgReads.search({ q, page: 1, limit: 20, reader: PUBLIC_READER })).total;
      }, 200);
      const b = await measure(
        () => sqliteReads.search({ q, page: 1, limit: 20, reader: PUBLIC_READER }),
        200,
      );
      worst = Math.max(worst, a.p99);
      console.log(
        `${label.padEnd(30)} ${`${a.p50.toFixed(2)} / ${a.p99.toFixed(2)}`.padStart(20)} ${`${b.p50.toFixed(2)} / ${b.p99.toFixed(2)}`.padStart(18)}   ${total}`,
      );
    }
    console.log(`worst PostgreSQL p99: ${worst.toFixed(2)} ms (target ≤ 10 ms)`);

    // The first search after a swap (docs/server.md, "Store"). Before: it read the registry's rows
    // into memory on the request, as the first search of a fresh read store still does (timed here).
    // Now: the swap path loads them (a sync awaits `warm`; the generation watch starts it for
    // other processes' swaps), so the first search is answered from the held rows; one that comes
    // during the load is answered from the database.
    console.log(`first search after a swap, ${count} templates, ms`);
    const sides = [
      {
        name: 'postgresql',
        reads: pgReads,
        fresh: () => new PostgresReads(pg),
        generations: serviceStoreOf(pg).registries.generations,
        swap: (commit: string) =>
          swapIndexPg(pg, big, { registryId: pgBig, commit, etag: null, now: 0 }).then(() => {}),
      },
      {
        name: 'sqlite',
        reads: sqliteReads,
        fresh: () => new ReadQueries(sqlite),
        generations: serviceStoreOf(sqlite).registries.generations,
        swap: async (commit: string) => {
          swapIndex(sqlite, big, { registryId: sqliteBig, commit, etag: null, now: 0 });
        },
      },
    ];
    const redis = { q: 'redis', page: 1, limit: 20, reader: PUBLIC_READER };
    for (const side of sides) {
      await side.swap('before');
      const fresh = side.fresh();
      t = performance.now();
      await fresh.search(redis);
      const before = performance.now() - t;
      await side.swap('during');
      t = performance.now();
      await side.reads.search(redis);
      const during = performance.now() - t;
      await side.reads.warm(await side.generations());
      await side.swap('after');
      await side.reads.warm(await side.generations());
      const counted = side.reads.searchCounters();
      t = performance.now();
      await side.reads.search(redis);
      const after = performance.now() - t;
      const held = side.reads.searchCounters().held === counted.held + 1 ? 'held rows' : 'NOT the held rows';
      console.log(
        `  ${side.name.padEnd(10)} before ${before.toFixed(0)} (rows read on the request), now ${after.toFixed(1)} (${held}), during the load ${during.toFixed(1)} (database); before/now ${(before / after).toFixed(0)}×`,
      );
    }
    console.log('resolve on a PostgreSQL-backed replica next to SQLite: node dist/bench/server-resolve.js');
    await pg.close();
    await other.close();
    sqlite.close();
  } finally {
    cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

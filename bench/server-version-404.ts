/**
 * A missing version's 404 on a template of many versions (docs/server.md "HTTP API", "Content"):
 * the nearest ten and the count named from the version strings alone, read a step at a time
 * (`nearestStored`, resolve/nearest-versions.ts), against the path before, in the same run,
 * alternating: every version row read whole (`versions`) and `nearestVersions` over all of them.
 * On SQLite, and on PostgreSQL when it is installed (a private cluster; the database's own CPU is
 * not in this process's figure, so wall time is printed too). Figures per 404, median of the
 * rounds: this process's CPU and wall ms, and the longest the event loop went without a turn.
 * Usage: node dist/bench/server-version-404.js [versions, default 100000]
 * The target lines start `TARGET LINE` (target: new / old < 1 in CPU and in the longest stall; the
 * load average is printed with them).
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { nearestVersions } from '../client/src/reference/index.js';
import type { BuiltIndex } from '../server/src/indexer/build-index.js';
import { nearestStored } from '../server/src/resolve/nearest-versions.js';
import type { ReadStore } from '../server/src/store/contract.js';
import { openPostgresStore } from '../server/src/store/postgres/open.js';
import { PostgresReads } from '../server/src/store/postgres/reads.js';
import { swapIndexPg } from '../server/src/store/postgres/swap-index.js';
import { openStore } from '../server/src/store/sqlite/open.js';
import { ReadQueries } from '../server/src/store/sqlite/reads.js';
import { swapIndex } from '../server/src/store/sqlite/swap-index.js';
import { tempDir } from '../test/server/helpers.js';
import { postgresBinaries, startPostgres } from '../test/support/postgres.js';
import { stalls } from './generated-index.js';

const VERSIONS = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 100_000);
const ROUNDS = 5;
/** Asked for: absent, between others, newer than all. */
const ASKED = ['v1.500.150', 'v9.0.0'];

/** One template, `many`, of VERSIONS versions sharing one file. */
function index(): BuiltIndex {
  const sha = '0'.repeat(64);
  const versions = Array.from({ length: VERSIONS }, (_, i) => {
    const version = `v1.${Math.floor(i / 100)}.${i % 100}`;
    return {
      version,
      kind: 'jinja' as const,
      dir: `many/${version}`,
      templateFile: 'many.jinja',
      schemaFile: null,
      hasExample: false,
      digest: `sha256:${i.toString(16).padStart(64, '0')}`,
      schema: null,
      files: [
        { path: 'many.jinja', sha256: sha, gitSha: sha.slice(0, 40), size: 1, content: Buffer.from('x') },
      ],
    };
  });
  return {
    templates: [
      {
        collection: '',
        name: 'many',
        latestVersion: versions.at(-1)!.version,
        title: null,
        description: null,
        properties: [],
        versions,
      },
    ],
    findings: [],
    registryYaml: null,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** CPU and wall ms of one call of `run`, and (a call of its own) the longest stall. */
async function once(run: () => Promise<unknown>): Promise<{ cpu: number; wall: number; stall: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - start;
  const { stall } = await stalls(run);
  return { cpu: (used.user + used.system) / 1000, wall, stall };
}

async function compare(label: string, reads: ReadStore, registryId: number): Promise<void> {
  for (const asked of ASKED) {
    const before = async () =>
      nearestVersions(
        (await reads.versions(registryId, '', 'many')).map((r) => r.version),
        asked,
      );
    const after = () => nearestStored(reads, { registryId, collection: '', name: 'many' }, asked);
    const same = JSON.stringify(await before()) === JSON.stringify(await after());
    const old: Awaited<ReturnType<typeof once>>[] = [];
    const ours: Awaited<ReturnType<typeof once>>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        old.push(await once(before));
        ours.push(await once(after));
      } else {
        ours.push(await once(after));
        old.push(await once(before));
      }
    }
    const m = (xs: typeof old, k: 'cpu' | 'wall' | 'stall') => median(xs.map((x) => x[k]));
    console.log(
      `TARGET LINE ${label} 404 of ${asked} among ${VERSIONS} versions: version strings in steps ${m(ours, 'cpu').toFixed(1)} ms CPU / ${m(ours, 'wall').toFixed(1)} ms wall, longest stall ${m(ours, 'stall').toFixed(1)} ms; ` +
        `every row whole (before) ${m(old, 'cpu').toFixed(1)} ms CPU / ${m(old, 'wall').toFixed(1)} ms wall, longest stall ${m(old, 'stall').toFixed(1)} ms; ` +
        `ratio CPU ${(m(ours, 'cpu') / m(old, 'cpu')).toFixed(3)}, stall ${(m(ours, 'stall') / m(old, 'stall')).toFixed(3)} (target < 1); same answer: ${same}; load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
    );
  }
}

async function main(): Promise<void> {
  const built = index();
  const store = openStore(join(tempDir('dm-bench-404-'), 'registry.db'));
  try {
    store.sqlite
      .prepare(
        "INSERT INTO registries (name, source_type, source, created_at) VALUES ('github.com/acme/big', 'directory', '/x', 0)",
      )
      .run();
    swapIndex(store, built, { registryId: 1, commit: 'c', etag: null, now: 0 });
    await compare('SQLite', new ReadQueries(store), 1);
  } finally {
    store.close();
  }
  if (!postgresBinaries()) {
    console.log('PostgreSQL is not installed: not measured');
    return;
  }
  const cluster = await startPostgres();
  try {
    const pg = await openPostgresStore(await cluster.createDatabase('bench_404'), { max: 4 });
    const { rows } = await pg.pool.query<{ id: number }>(
      "INSERT INTO registries (name, source_type, source, created_at) VALUES ('github.com/acme/big', 'directory', '/x', 0) RETURNING id",
    );
    await swapIndexPg(pg, built, { registryId: rows[0]!.id, commit: 'c', etag: null, now: 0 });
    await pg.pool.query('ANALYZE');
    await compare('PostgreSQL', new PostgresReads(pg), rows[0]!.id);
    await pg.close();
  } finally {
    cluster.stop();
  }
}

await main();

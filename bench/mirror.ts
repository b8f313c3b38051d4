/**
 * Mirroring as users meet it (docs/mirroring.md), with real processes: an origin dm-registry
 * (registry-fixtures), the fault-injecting proxy, and a mirror started with `--upstream`.
 *   1. Resolve throughput of mirrored content with the upstream up vs down (50 connections,
 *      alternating rounds): cached content must not pay for the outage (target ratio ≥ 0.95).
 *   2. Latency of requests for unseen versions while the breaker is open (target p99 ≤ 50 ms), next to
 *      a hit's latency measured the same way.
 *   3. Pull-through of every exact version of registry-fixtures (up to 50): upstream requests per
 *      version (target ≤ 2) and wall time.
 *   4. Bundle export and import of registry-fixtures through the CLI: seconds and bytes.
 *   5. Bundles of registry-fixtures and of a generated 10,000-version registry (about 100 MB of
 *      distinct content), in-process: export seconds and bytes; content MB/s of verification alone
 *      (target ≥ 100) and of the whole import (verify + one transaction) into a fresh SQLite
 *      database and a fresh PostgreSQL one (a private cluster, where installed), and of a second
 *      import that changes nothing; each next to the floor of any verifier of that file measured in
 *      the same run, alternating with verification (gunzip of the file in one call, 1 MiB chunks,
 *      and sha256 of every blob already in memory). Medians of several rounds, with the load.
 * Usage: node dist/bench/mirror.js [seconds per load run, default 3] [rounds, default 2] [versions, default 10000]
 *        node dist/bench/mirror.js bundles [versions, default 10000] [verification rounds, default 5]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { sha256Hex } from '../client/src/registry/digest.js';
import { exportBundle, importBundle } from '../server/src/mirror/bundle.js';
import { readBundle } from '../server/src/mirror/bundle-format.js';
import type { StoreHandle } from '../server/src/store/open-store.js';
import { openPostgresStore } from '../server/src/store/postgres/open.js';
import { addVersions } from '../server/src/store/sqlite/add-versions.js';
import { openStore } from '../server/src/store/sqlite/open.js';
import { startFaultProxy } from '../test/support/fault-proxy.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../test/support/postgres.js';
import { startRegistry } from '../test/support/registry-server.js';
import { repoRoot } from '../test/support/run-cli.js';
import { percentile } from './generated-index.js';
import { generatedVersions } from './generated-versions.js';

const REGISTRY = 'github.com/dm-samples/templates';

async function rps(
  url: string,
  seconds: number,
  paths: string[],
): Promise<{ rps: number; p99: number; bad: number }> {
  const r = await autocannon({
    url,
    connections: 50,
    duration: seconds,
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
  return { rps: r.requests.average, p99: r.latency.p99, bad: r.errors + r.non2xx };
}

async function exactPins(origin: string): Promise<string[]> {
  const search = (await (await fetch(`${origin}/api/v1/search?q=&limit=100`)).json()) as {
    hits: { registry: string; collection: string; name: string }[];
  };
  const pins: string[] = [];
  for (const hit of search.hits) {
    const path = [hit.registry, hit.collection, hit.name].filter(Boolean).join('/');
    const t = (await (await fetch(`${origin}/api/v1/templates/${path}`)).json()) as {
      versions?: { version: string }[];
    };
    for (const v of t.versions ?? []) pins.push(`${path}:=${v.version}`);
  }
  return pins;
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const load = () => `load ${loadavg()[0]!.toFixed(2)}`;

/** A fresh database to import into: SQLite always, PostgreSQL where a cluster runs. */
interface Target {
  name: string;
  open(): Promise<{ store: StoreHandle; close(): Promise<void> }>;
}

function targets(dir: string, cluster: PostgresCluster | undefined): Target[] {
  let n = 0;
  const list: Target[] = [
    {
      name: 'sqlite',
      async open() {
        const store = openStore(join(dir, `import-${++n}.db`));
        return { store, close: async () => store.close() };
      },
    },
  ];
  if (cluster) {
    list.push({
      name: 'postgresql',
      async open() {
        const store = await openPostgresStore(await cluster.createDatabase(`import${++n}`), { max: 4 });
        return { store, close: () => store.close() };
      },
    });
  }
  return list;
}

/**
 * Exports `source` in-process, then measures verification against its floor (alternating,
 * `rounds` each) and a first and a second import into each target.
 */
async function bundleFigures(
  label: string,
  source: StoreHandle,
  file: string,
  into: Target[],
  rounds: number,
): Promise<void> {
  let t = performance.now();
  const exported = await exportBundle(source, { out: file });
  const exportMs = performance.now() - t;
  const verify: number[] = [];
  const floor: number[] = [];
  let content = 0;
  for (let i = 0; i < rounds; i++) {
    t = performance.now();
    const verified = await readBundle(file);
    verify.push(performance.now() - t);
    content = verified.contentBytes;
    // The floor of any verifier of this file: gunzip it whole (one call) and sha256 every blob.
    const blobs = [...verified.blobs.values()];
    t = performance.now();
    gunzipSync(readFileSync(file), { chunkSize: 1024 * 1024 });
    for (const bytes of blobs) sha256Hex(bytes);
    floor.push(performance.now() - t);
  }
  const mbps = (ms: number) => content / 1e6 / (ms / 1000);
  const floorMbps = mbps(median(floor));
  const time = (ms: number) => (ms < 1000 ? `${ms.toFixed(1)} ms` : `${(ms / 1000).toFixed(2)} s`);
  const figure = (ms: number) =>
    `${time(ms)}, ${mbps(ms).toFixed(1)} MB/s (${(mbps(ms) / floorMbps).toFixed(2)} of the floor)`;
  console.log(
    `bundle of ${label}: ${exported.versions} versions, ${(content / 1e6).toFixed(1)} MB of content in ${exported.blobs} blobs, bundle ${exported.bytes} bytes; export ${time(exportMs)} (${load()})`,
  );
  console.log(
    `  verification (gunzip, every blob's sha256 and size, every version digest, manifest digest), median of ${rounds}: ${figure(median(verify))}, target ≥ 100 MB/s; floor (gunzip in one call + sha256 of the blobs in memory) ${time(median(floor))}, ${floorMbps.toFixed(1)} MB/s (${load()})`,
  );
  for (const target of into) {
    const { store, close } = await target.open();
    try {
      t = performance.now();
      const first = await importBundle(store, file);
      const firstMs = performance.now() - t;
      if (first.added !== exported.versions) {
        throw new Error(`${target.name}: imported ${first.added} of ${exported.versions} versions`);
      }
      t = performance.now();
      const again = await importBundle(store, file);
      const againMs = performance.now() - t;
      if (again.added !== 0) throw new Error(`${target.name}: a second import added ${again.added}`);
      console.log(
        `  import into ${target.name} (verify + one transaction): ${figure(firstMs)}; again, changing nothing: ${figure(againMs)} (${load()})`,
      );
    } finally {
      await close();
    }
  }
}

/**
 * 5. A generated registry of `count` versions (100 templates, each version a ~9 KB template and a
 * ~1 KB schema, all distinct), stored with addVersions, then bundleFigures.
 */
async function generatedBundles(dir: string, count: number, into: Target[], rounds: number): Promise<void> {
  const { versions, content } = generatedVersions(count);
  const source = openStore(join(dir, 'gen-a.db'));
  try {
    addVersions(
      source,
      {
        name: 'bench.example/generated/templates',
        sourceType: 'bundle',
        source: 'bench',
        visibility: 'public',
        commit: null,
      },
      versions,
      (sha) => content.get(sha),
    );
    await bundleFigures(`${count} generated versions`, source, join(dir, 'gen.tgz'), into, rounds);
  } finally {
    source.close();
  }
}

/** 5. registry-fixtures, indexed by the CLI, then bundleFigures. */
async function fixtureBundles(dir: string, into: Target[], rounds: number): Promise<void> {
  const db = join(dir, 'fixtures.db');
  const r = spawnSync(
    process.execPath,
    [join(repoRoot, 'bin', 'dm-registry.js'), 'index', join(repoRoot, 'registry-fixtures'), '--db', db],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`dm-registry index: ${r.stderr}`);
  const source = openStore(db);
  try {
    await bundleFigures('registry-fixtures', source, join(dir, 'fixtures.tgz'), into, rounds);
  } finally {
    source.close();
  }
}

/** Both bundles of section 5, into SQLite and (where installed) PostgreSQL. */
async function bundles(dir: string, count: number, rounds: number): Promise<void> {
  const cluster = postgresBinaries() ? await startPostgres() : undefined;
  if (!cluster) console.log('(PostgreSQL is not installed: imports into SQLite only)');
  try {
    const into = targets(dir, cluster);
    await fixtureBundles(dir, into, rounds);
    await generatedBundles(dir, count, into, rounds);
  } finally {
    cluster?.stop();
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === 'bundles') {
    // Only the bundle figures of section 5: `node dist/bench/mirror.js bundles [versions] [rounds]`.
    const dir = mkdtempSync(join(tmpdir(), 'bench-mirror-'));
    try {
      await bundles(dir, Number(process.argv[3] ?? 10_000), Number(process.argv[4] ?? 5));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  const seconds = Number(process.argv[2] ?? 3);
  const rounds = Number(process.argv[3] ?? 2);
  const dir = mkdtempSync(join(tmpdir(), 'bench-mirror-'));
  const origin = await startRegistry(['registry-fixtures']);
  const proxy = await startFaultProxy(origin.url);
  const mirror = await startRegistry([], {}, ['--upstream', proxy.url]);
  try {
    // 3. Pull-through of unseen versions.
    const pins = (await exactPins(origin.url)).slice(0, 50);
    proxy.reset();
    const started = performance.now();
    for (const pin of pins) {
      const res = await fetch(`${mirror.url}/api/v1/resolve?ref=${encodeURIComponent(pin)}`);
      if (res.status !== 200) throw new Error(`${pin}: ${res.status} ${await res.text()}`);
    }
    const pullMs = performance.now() - started;
    const perVersion = proxy.forwarded.length / pins.length;

    // 1. Throughput with the upstream up vs down, on content the mirror holds.
    const paths = pins.slice(0, 6).map((p) => `/api/v1/resolve?ref=${encodeURIComponent(p)}`);
    await rps(mirror.url, 1, paths); // warm-up
    const up: number[] = [];
    const down: number[] = [];
    let bad = 0;
    for (let i = 0; i < rounds; i++) {
      proxy.set({ mode: 'pass' });
      const a = await rps(mirror.url, seconds, paths);
      proxy.set({ mode: 'refuse' });
      const b = await rps(mirror.url, seconds, paths);
      up.push(a.rps);
      down.push(b.rps);
      bad += a.bad + b.bad;
    }

    // 2. Unseen versions while the breaker is open (the first request opens it).
    proxy.set({ mode: 'refuse' });
    await fetch(`${mirror.url}/api/v1/resolve?ref=${encodeURIComponent(`${REGISTRY}/nosuch-0:v1`)}`);
    const unseen: number[] = [];
    const hits: number[] = [];
    for (let i = 1; i <= 300; i++) {
      let t = performance.now();
      const miss = await fetch(
        `${mirror.url}/api/v1/resolve?ref=${encodeURIComponent(`${REGISTRY}/nosuch-${i}:v1`)}`,
      );
      await miss.arrayBuffer();
      unseen.push(performance.now() - t);
      if (miss.status !== 502) throw new Error(`unseen version answered ${miss.status}`);
      t = performance.now();
      await (await fetch(`${mirror.url}${paths[0]}`)).arrayBuffer();
      hits.push(performance.now() - t);
    }
    unseen.sort((x, y) => x - y);
    hits.sort((x, y) => x - y);
    proxy.set({ mode: 'pass' });

    // 4. Bundles of registry-fixtures between two databases, through the CLI.
    const bin = join(repoRoot, 'bin', 'dm-registry.js');
    const run = (args: string[]) => {
      const t = performance.now();
      const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`dm-registry ${args.join(' ')}: ${r.stderr}`);
      return { ms: performance.now() - t, out: r.stdout };
    };
    run(['index', join(repoRoot, 'registry-fixtures'), '--db', join(dir, 'a.db')]);
    const exp = run(['bundle', 'export', '--out', join(dir, 'b.tgz'), '--db', join(dir, 'a.db')]);
    const imp = run(['bundle', 'import', join(dir, 'b.tgz'), '--db', join(dir, 'b.db')]);
    const bytes = Number(/, (\d+) bytes,/.exec(exp.out)?.[1] ?? 0);
    const baseline = run(['--version']);

    console.log(
      `mirror bench: origin and mirror are real dm-registry processes; the proxy between them injects faults`,
    );
    console.log(
      `pull-through: ${pins.length} unseen exact versions in ${pullMs.toFixed(0)} ms (${(pullMs / pins.length).toFixed(1)} ms each), ${perVersion.toFixed(2)} upstream requests per version (target ≤ 2)`,
    );
    console.log(
      `resolve of mirrored content, 50 connections, ${rounds}×${seconds} s: upstream up ${median(up).toFixed(0)} req/s, down ${median(down).toFixed(0)} req/s, ratio ${(median(down) / median(up)).toFixed(2)} (target ≥ 0.95); errors ${bad}`,
    );
    console.log(
      `unseen version while the breaker is open: p50 ${percentile(unseen, 50).toFixed(2)} ms, p99 ${percentile(unseen, 99).toFixed(2)} ms (target ≤ 50 ms); a stored version the same way: p50 ${percentile(hits, 50).toFixed(2)} ms, p99 ${percentile(hits, 99).toFixed(2)} ms`,
    );
    console.log(
      `bundle of registry-fixtures: ${bytes} bytes; export ${exp.ms.toFixed(0)} ms, import (verify + write) ${imp.ms.toFixed(0)} ms; the CLI's own start-up (dm-registry --version) ${baseline.ms.toFixed(0)} ms`,
    );
    // 5. Bundles of registry-fixtures and of a generated 10,000-version registry, in this process.
    await mirror.stop();
    await bundles(dir, Number(process.argv[4] ?? 10_000), 5);
  } finally {
    await mirror.stop();
    await proxy.close();
    await origin.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

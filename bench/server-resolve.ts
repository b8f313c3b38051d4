/**
 * Resolve throughput and latency (docs/server.md "Tests and measurements"; target: ≥ 100% of bare Hono in the median of the rounds' ratios, p99 ≤ 10 ms)
 * measured side by side in one run: each server runs in its own child process (one core), the
 * load generator (autocannon, 50 connections) in this one.
 *   1. bare Hono returning a fixed JSON of the same size as a resolution;
 *   2. `GET /api/v1/resolve?ref=…` on the real app over a real SQLite file with registry-fixtures
 *      indexed, served as `dm-registry start` serves it (its listener, `serveApp`), with its
 *      request ids, metrics and JSON access log (written to /dev/null);
 *   3. the same on a PostgreSQL-backed replica (a private cluster, test/support/postgres.ts), when
 *      PostgreSQL is installed: both answer from memory, so the target is PostgreSQL / SQLite ≥ 0.95.
 * The machine is shared, so the servers are measured in back-to-back pairs, each pair's order
 * alternating, and the median of the pairs' ratios is the figure, printed with its spread (lowest,
 * quartiles, highest). Each server's CPU time per request (its process.cpuUsage over the measured
 * run) is printed too, and the ratio of those: descheduling by other work on the machine does not
 * inflate it; so is the load generator's (this process's) CPU time per request: at 50 connections
 * on two cores it, not the server, can set the pace, and what it pays per response (bytes, header
 * lines) then shows in the throughput.
 * Every server listens on a port the system picks (other benches may run at the same time). With
 * --busy one other process keeps a core busy for the whole run (a CI machine's load).
 * Usage: node dist/bench/server-resolve.js [seconds per run, default 5] [rounds, default 9] [--busy]
 * The target line starts `TARGET LINE`.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import autocannon from 'autocannon';
import { Hono } from 'hono';
import { postgresBinaries, startPostgres } from '../test/support/postgres.js';

const REFS = ['redis:v1.0', 'redis:v1.1', 'redis:v1', 'postgres:v1', 'web-app:v1.1', 'redis:=v1.0.1'];

/** Answers the parent's `cpu` messages with this process's CPU time so far (µs). */
function reportCpu(): void {
  process.on('message', (m) => {
    if (m === 'cpu') {
      const u = process.cpuUsage();
      process.send?.({ cpu: u.user + u.system });
    }
  });
}

/** Serves `fetch` on a port the system picks and tells the parent which. */
function listen(fetch: (request: Request) => Response | Promise<Response>): void {
  serve({ fetch, port: 0 }, (info: AddressInfo) => process.send?.({ port: info.port }));
}

async function serveResolve(dir: string, postgresUrl?: string): Promise<void> {
  const { openStore } = await import('../server/src/store/sqlite/open.js');
  const { openPostgresStore } = await import('../server/src/store/postgres/open.js');
  const { createApp } = await import('../server/src/api/app.js');
  const { defaultSourceFactory } = await import('../server/src/service.js');
  const { createLogger } = await import('../server/src/log.js');
  const store = postgresUrl ? await openPostgresStore(postgresUrl) : openStore(join(dir, 'registry.db'));
  const devNull = openSync('/dev/null', 'w');
  const { serveApp } = await import('../server/src/api/listener.js');
  const registry = createApp({
    store,
    sources: defaultSourceFactory({ gitCacheDir: join(dir, 'git') }),
    secretKey: randomBytes(32),
    defaultRegistry: 'github.com/acme/templates',
    logger: createLogger({ write: (t) => writeSync(devNull, t) }),
  });
  const { service } = registry;
  const row = await service.add({
    source: join(process.cwd(), 'registry-fixtures'),
    name: 'github.com/acme/templates',
  });
  await service.sync(row.id, 'cli');
  reportCpu();
  // Served as `dm-registry start` serves it (its listener: server/src/api/listener.ts).
  serveApp(registry, { port: 0 }, (info) => process.send?.({ port: info.port }));
}

async function serveBare(size: number): Promise<void> {
  const body = { data: 'x'.repeat(Math.max(0, size - 11)) };
  const app = new Hono();
  app.get('/api/v1/resolve', (c) => c.json(body));
  reportCpu();
  listen(app.fetch);
}

/** Starts a server child (`args` after this file); resolves when it listens. */
function start(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = fork(fileURLToPath(import.meta.url), args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, ...(process.env.DM_BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean)],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ url: `http://127.0.0.1:${(m as { port: number }).port}`, child }));
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

interface Figures {
  rps: number;
  /** The load generator's (this process's) CPU time per request, µs. */
  client: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** The server's CPU time per request, µs. */
  cpu: number;
}

/** The child's CPU time so far, µs. */
function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      if (typeof m === 'object' && m !== null && 'cpu' in m) {
        child.off('message', on);
        resolve((m as { cpu: number }).cpu);
      }
    };
    child.on('message', on);
    child.send('cpu');
  });
}

/** Warms a server up (JIT, caches) before the first measured run. */
async function warm({ url }: { url: string }, paths: string[]): Promise<void> {
  await autocannon({
    url,
    connections: 50,
    duration: 2,
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
}

async function load(
  { url, child }: { url: string; child: ChildProcess },
  seconds: number,
  paths: string[],
): Promise<Figures> {
  const cpuBefore = await cpuOf(child);
  const clientBefore = process.cpuUsage();
  const r = await autocannon({
    url,
    connections: 50,
    duration: seconds,
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
  const client = process.cpuUsage(clientBefore);
  const cpu = (await cpuOf(child)) - cpuBefore;
  return {
    client: (client.user + client.system) / Math.max(1, r.requests.total),
    cpu: cpu / Math.max(1, r.requests.total),
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
  };
}

async function main(): Promise<void> {
  const [mode, first, second] = process.argv.slice(2);
  process.on('SIGINT', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
  if (mode === '--serve-resolve') return serveResolve(first!);
  if (mode === '--serve-resolve-pg') return serveResolve(first!, second!);
  if (mode === '--serve-bare') return serveBare(Number(first));

  const numbers = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const seconds = Number(numbers[0] ?? 5);
  const rounds = Number(numbers[1] ?? 9);
  // --busy: a process spinning on one core while everything is measured (stopped at the end).
  const busy = process.argv.includes('--busy')
    ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' })
    : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'bench-resolve-'));
  // The machine's load (uptime's load average) goes with every figure.
  const loadAtStart = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const paths = REFS.map((r) => `/api/v1/resolve?ref=${encodeURIComponent(r)}`);
  const servers: ChildProcess[] = [];
  const cluster = postgresBinaries() ? await startPostgres() : undefined;
  try {
    const onSqlite = await start(['--serve-resolve', dir]);
    servers.push(onSqlite.child);
    let pgServer: { url: string; child: ChildProcess } | undefined;
    if (cluster) {
      pgServer = await start(['--serve-resolve-pg', dir, await cluster.createDatabase('bench_resolve')]);
      servers.push(pgServer.child);
    }
    const sample = await (await fetch(`${onSqlite.url}${paths[0]}`)).text();
    const bareServer = await start(['--serve-bare', String(sample.length)]);
    servers.push(bareServer.child);
    const bare: Figures[] = [];
    const resolve: Figures[] = [];
    const onPostgres: Figures[] = [];
    for (const server of [bareServer, onSqlite, pgServer]) if (server) await warm(server, paths);
    // Back-to-back pairs, each pair's order alternating (bare first, then resolve first): the
    // machine's load drifts over a run, and a server measured always first or always second would
    // carry the drift into every ratio. PostgreSQL is paired with SQLite the same way.
    for (let i = 0; i < rounds; i++) {
      if (i % 2 === 0) {
        bare.push(await load(bareServer, seconds, paths));
        resolve.push(await load(onSqlite, seconds, paths));
        if (pgServer) onPostgres.push(await load(pgServer, seconds, paths));
      } else {
        if (pgServer) onPostgres.push(await load(pgServer, seconds, paths));
        resolve.push(await load(onSqlite, seconds, paths));
        bare.push(await load(bareServer, seconds, paths));
      }
    }
    const median = (xs: Figures[], key: keyof Figures) =>
      [...xs.map((x) => x[key])].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const row = (name: string, f: Figures[]) =>
      `${name.padEnd(34)} ${median(f, 'rps').toFixed(0).padStart(7)} req/s  p50 ${String(median(f, 'p50')).padStart(3)} ms  p99 ${String(median(f, 'p99')).padStart(3)} ms  CPU ${median(f, 'cpu').toFixed(1).padStart(5)} µs/req  load generator ${median(f, 'client').toFixed(1).padStart(5)} µs/req  errors ${f.reduce((n, x) => n + x.errors + x.non2xx, 0)}   rounds: ${f.map((x) => x.rps.toFixed(0)).join(' ')}`;
    const loadAtEnd = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    console.log(
      `resolve bench: 50 connections, ${rounds} rounds of back-to-back pairs (order alternating) of ${seconds} s, response ≈ ${sample.length} bytes (medians)${busy ? ', one core kept busy' : ''}; load average (uptime) at start ${loadAtStart}, at end ${loadAtEnd}`,
    );
    console.log(row('bare Hono, fixed JSON', bare));
    console.log(row('dm-registry GET /api/v1/resolve', resolve));
    if (cluster) console.log(row('the same on PostgreSQL', onPostgres));
    /** Median and spread (lowest, quartiles, highest) of per-pair ratios. */
    const spread = (ratios: number[]) => {
      const sorted = [...ratios].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
      return {
        median: at(0.5),
        text: `min ${sorted[0]!.toFixed(2)}, quartiles ${at(0.25).toFixed(2)}-${at(0.75).toFixed(2)}, max ${sorted[sorted.length - 1]!.toFixed(2)}; pairs: ${ratios.map((r) => r.toFixed(2)).join(' ')}`,
      };
    };
    const byRate = spread(bare.map((b, i) => resolve[i]!.rps / b.rps));
    console.log(
      `TARGET LINE ratio resolve / bare Hono (median of pairs): ${(byRate.median * 100).toFixed(1)}% (target ≥ 100%, issue 24); ${byRate.text}; resolve p99 ${median(resolve, 'p99')} ms (target ≤ 10 ms)`,
    );
    const byCpu = spread(bare.map((b, i) => b.cpu / resolve[i]!.cpu));
    console.log(
      `by server CPU time per request (bare / resolve): ${(byCpu.median * 100).toFixed(1)}%; ${byCpu.text}`,
    );
    const byClient = spread(bare.map((b, i) => b.client / resolve[i]!.client));
    console.log(
      `by load generator CPU time per request (bare / resolve): ${(byClient.median * 100).toFixed(1)}%; ${byClient.text}`,
    );
    if (cluster) {
      const onPg = spread(resolve.map((r, i) => onPostgres[i]!.rps / r.rps));
      const pgCpu = spread(resolve.map((r, i) => r.cpu / onPostgres[i]!.cpu));
      console.log(
        `ratio resolve on PostgreSQL / on SQLite (median of pairs): ${onPg.median.toFixed(2)} (target ≥ 0.95); ${onPg.text}; by CPU time per request ${pgCpu.median.toFixed(2)}`,
      );
    } else {
      console.log('PostgreSQL is not installed: the PostgreSQL-backed replica was not measured');
    }
  } finally {
    for (const s of servers) s.kill();
    busy?.kill();
    cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

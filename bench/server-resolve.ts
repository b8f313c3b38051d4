/**
 * Resolve throughput and latency (docs/server.md "Tests and measurements", issue target: ≥ 70% of bare Hono, p99 ≤ 10 ms)
 * measured side by side in one run: each server runs in its own child process (one core), the
 * load generator (autocannon, 50 connections) in this one.
 *   1. bare Hono returning a fixed JSON of the same size as a resolution;
 *   2. `GET /api/v1/resolve?ref=…` on the real app over a real SQLite file with registry-fixtures
 *      indexed, with its middleware (request ids, metrics, JSON access log written to /dev/null);
 *   3. the same on a PostgreSQL-backed replica (a private cluster, test/support/postgres.ts), when
 *      PostgreSQL is installed: both answer from memory, so the target is PostgreSQL / SQLite ≥ 0.95.
 * The machine is shared, so the two are measured in alternating rounds and the medians compared;
 * each server's CPU time per request (its process.cpuUsage over the measured run) is printed too,
 * and the ratio of those: descheduling by other work on the machine does not inflate it.
 * Usage: node dist/bench/server-resolve.js [seconds per run, default 5] [rounds, default 3]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
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

async function serveResolve(port: number, dir: string, postgresUrl?: string): Promise<void> {
  const { openStore } = await import('../server/src/store/sqlite/open.js');
  const { openPostgresStore } = await import('../server/src/store/postgres/open.js');
  const { createApp } = await import('../server/src/api/app.js');
  const { defaultSourceFactory } = await import('../server/src/service.js');
  const { createLogger } = await import('../server/src/log.js');
  const store = postgresUrl ? await openPostgresStore(postgresUrl) : openStore(join(dir, 'registry.db'));
  const devNull = openSync('/dev/null', 'w');
  const { app, service } = createApp({
    store,
    sources: defaultSourceFactory({ gitCacheDir: join(dir, 'git') }),
    secretKey: randomBytes(32),
    defaultRegistry: 'github.com/acme/templates',
    logger: createLogger({ write: (t) => writeSync(devNull, t) }),
  });
  const row = await service.add({
    source: join(process.cwd(), 'registry-fixtures'),
    name: 'github.com/acme/templates',
  });
  await service.sync(row.id, 'cli');
  reportCpu();
  serve({ fetch: app.fetch, port }, () => process.send?.('ready'));
}

async function serveBare(port: number, size: number): Promise<void> {
  const body = { data: 'x'.repeat(Math.max(0, size - 11)) };
  const app = new Hono();
  app.get('/api/v1/resolve', (c) => c.json(body));
  reportCpu();
  serve({ fetch: app.fetch, port }, () => process.send?.('ready'));
}

function start(args: string[]): Promise<ChildProcess> {
  const child = fork(fileURLToPath(import.meta.url), args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

interface Figures {
  rps: number;
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

async function load(
  { url, child }: { url: string; child: ChildProcess },
  seconds: number,
  paths: string[],
): Promise<Figures> {
  // Warm-up (JIT, caches), then the measured run.
  await autocannon({
    url,
    connections: 50,
    duration: 2,
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
  const cpuBefore = await cpuOf(child);
  const r = await autocannon({
    url,
    connections: 50,
    duration: seconds,
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
  const cpu = (await cpuOf(child)) - cpuBefore;
  return {
    cpu: cpu / Math.max(1, r.requests.total),
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
  };
}

async function main(): Promise<void> {
  const [mode, portText, extra] = process.argv.slice(2);
  process.on('SIGINT', () => process.exit(0));
  if (mode === '--serve-resolve') return serveResolve(Number(portText), extra!);
  if (mode === '--serve-resolve-pg') return serveResolve(Number(portText), extra!, process.argv[5]!);
  if (mode === '--serve-bare') return serveBare(Number(portText), Number(extra));

  const seconds = Number(mode ?? 5);
  const rounds = Number(portText ?? 3);
  const dir = mkdtempSync(join(tmpdir(), 'bench-resolve-'));
  // The machine's load (uptime's load average) goes with every figure.
  const loadAtStart = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const paths = REFS.map((r) => `/api/v1/resolve?ref=${encodeURIComponent(r)}`);
  const servers: ChildProcess[] = [];
  const cluster = postgresBinaries() ? await startPostgres() : undefined;
  try {
    const onSqlite = { url: 'http://127.0.0.1:18471', child: await start(['--serve-resolve', '18471', dir]) };
    servers.push(onSqlite.child);
    let pgServer: { url: string; child: ChildProcess } | undefined;
    if (cluster) {
      const url = await cluster.createDatabase('bench_resolve');
      pgServer = {
        url: 'http://127.0.0.1:18473',
        child: await start(['--serve-resolve-pg', '18473', dir, url]),
      };
      servers.push(pgServer.child);
    }
    const sample = await (await fetch(`http://127.0.0.1:18471${paths[0]}`)).text();
    const bareServer = {
      url: 'http://127.0.0.1:18472',
      child: await start(['--serve-bare', '18472', String(sample.length)]),
    };
    servers.push(bareServer.child);
    const bare: Figures[] = [];
    const resolve: Figures[] = [];
    const onPostgres: Figures[] = [];
    for (let i = 0; i < rounds; i++) {
      bare.push(await load(bareServer, seconds, paths));
      // SQLite and PostgreSQL take turns going first, so neither always follows the same neighbour.
      if (pgServer && i % 2 === 1) onPostgres.push(await load(pgServer, seconds, paths));
      resolve.push(await load(onSqlite, seconds, paths));
      if (pgServer && i % 2 === 0) onPostgres.push(await load(pgServer, seconds, paths));
    }
    const median = (xs: Figures[], key: keyof Figures) =>
      [...xs.map((x) => x[key])].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const row = (name: string, f: Figures[]) =>
      `${name.padEnd(34)} ${median(f, 'rps').toFixed(0).padStart(7)} req/s  p50 ${String(median(f, 'p50')).padStart(3)} ms  p99 ${String(median(f, 'p99')).padStart(3)} ms  CPU ${median(f, 'cpu').toFixed(1).padStart(5)} µs/req  errors ${f.reduce((n, x) => n + x.errors + x.non2xx, 0)}   rounds: ${f.map((x) => x.rps.toFixed(0)).join(' ')}`;
    const loadAtEnd = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    console.log(
      `resolve bench: 50 connections, ${rounds} alternating rounds of ${seconds} s, response ≈ ${sample.length} bytes (medians); load average (uptime) at start ${loadAtStart}, at end ${loadAtEnd}`,
    );
    console.log(row('bare Hono, fixed JSON', bare));
    console.log(row('dm-registry GET /api/v1/resolve', resolve));
    if (cluster) console.log(row('the same on PostgreSQL', onPostgres));
    const ratios = bare.map((b, i) => resolve[i]!.rps / b.rps).sort((a, b) => a - b);
    const ratio = ratios[Math.floor(ratios.length / 2)]!;
    console.log(
      `ratio resolve / bare Hono (median of rounds): ${(ratio * 100).toFixed(1)}% (target ≥ 70%); resolve p99 ${median(resolve, 'p99')} ms (target ≤ 10 ms)`,
    );
    const cpuRatio = (fast: Figures[], slow: Figures[]) => median(fast, 'cpu') / median(slow, 'cpu');
    console.log(
      `by CPU time per request (bare / resolve, medians): ${(cpuRatio(bare, resolve) * 100).toFixed(1)}%`,
    );
    if (cluster) {
      const pgRatios = resolve.map((r, i) => onPostgres[i]!.rps / r.rps).sort((a, b) => a - b);
      console.log(
        `ratio resolve on PostgreSQL / on SQLite (median of rounds): ${pgRatios[Math.floor(pgRatios.length / 2)]!.toFixed(2)} (target ≥ 0.95); by CPU time per request ${cpuRatio(resolve, onPostgres).toFixed(2)}`,
      );
    } else {
      console.log('PostgreSQL is not installed: the PostgreSQL-backed replica was not measured');
    }
  } finally {
    for (const s of servers) s.kill();
    cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

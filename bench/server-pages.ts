/**
 * The search web page against the JSON search endpoint it shares its code with (docs/pages.md
 * §4: pages "fast without client-side JavaScript"), measured side by side in one run: the real app
 * over a real SQLite file with registry-fixtures indexed runs in a child process (one core), the
 * load generator (autocannon, 50 connections) in this one; the two paths alternate in rounds and
 * the medians are compared. Anonymous pages are remembered until the next index swap; requests
 * with a token are rendered every time (the cost of a cold page: the same search plus hono/jsx).
 * Usage: node dist/bench/server-pages.js [seconds per run, default 5] [rounds, default 3]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import autocannon from 'autocannon';

const QUERIES = ['redis', 'red', 'postgres', 'web app', 'ingress', 'cron'];
const PORT = 18481;
const TOKEN = 'bench-admin-token';

async function serveApp(port: number, dir: string): Promise<void> {
  const { openStore } = await import('../server/src/store/sqlite/open.js');
  const { createApp } = await import('../server/src/api/app.js');
  const { defaultSourceFactory } = await import('../server/src/service.js');
  const { createLogger } = await import('../server/src/log.js');
  const store = openStore(join(dir, 'registry.db'));
  const devNull = openSync('/dev/null', 'w');
  const { app, service } = createApp({
    store,
    sources: defaultSourceFactory({ gitCacheDir: join(dir, 'git') }),
    secretKey: randomBytes(32),
    adminTokens: [TOKEN],
    defaultRegistry: 'github.com/acme/templates',
    logger: createLogger({ write: (t) => writeSync(devNull, t) }),
  });
  const row = await service.add({
    source: join(process.cwd(), 'registry-fixtures'),
    name: 'github.com/acme/templates',
  });
  await service.sync(row.id, 'cli');
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
}

async function load(
  url: string,
  seconds: number,
  paths: string[],
  headers: Record<string, string> = {},
): Promise<Figures> {
  const requests = paths.map((path) => ({ method: 'GET' as const, path }));
  await autocannon({ url, connections: 50, duration: 2, requests, headers });
  const r = await autocannon({ url, connections: 50, duration: seconds, requests, headers });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

async function main(): Promise<void> {
  const [mode, portText, extra] = process.argv.slice(2);
  process.on('SIGINT', () => process.exit(0));
  if (mode === '--serve') return serveApp(Number(portText), extra!);

  const seconds = Number(mode ?? 5);
  const rounds = Number(portText ?? 3);
  const dir = mkdtempSync(join(tmpdir(), 'bench-pages-'));
  const q = (text: string) => `q=${encodeURIComponent(text)}`;
  const json = QUERIES.map((text) => `/api/v1/search?${q(text)}`);
  const html = QUERIES.map((text) => `/search?${q(text)}`);
  let server: ChildProcess | undefined;
  try {
    server = await start(['--serve', String(PORT), dir]);
    const url = `http://127.0.0.1:${PORT}`;
    const sizes = [
      (await (await fetch(`${url}${json[0]}`)).text()).length,
      (await (await fetch(`${url}${html[0]}`)).text()).length,
    ];
    const api: Figures[] = [];
    const page: Figures[] = [];
    const rendered: Figures[] = [];
    const token = { authorization: `Bearer ${TOKEN}` };
    for (let i = 0; i < rounds; i++) {
      api.push(await load(url, seconds, json));
      page.push(await load(url, seconds, html));
      rendered.push(await load(url, seconds, html, token));
    }
    const median = (xs: Figures[], key: keyof Figures) =>
      [...xs.map((x) => x[key])].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const row = (name: string, f: Figures[]) =>
      `${name.padEnd(34)} ${median(f, 'rps').toFixed(0).padStart(7)} req/s  p50 ${String(median(f, 'p50')).padStart(3)} ms  p99 ${String(median(f, 'p99')).padStart(3)} ms  errors ${f.reduce((n, x) => n + x.errors, 0)}   rounds: ${f.map((x) => x.rps.toFixed(0)).join(' ')}`;
    console.log(
      `pages bench: 50 connections, ${rounds} alternating rounds of ${seconds} s, ${QUERIES.length} queries; JSON ≈ ${sizes[0]} bytes, HTML ≈ ${sizes[1]} bytes (medians)`,
    );
    console.log(row('GET /api/v1/search (JSON)', api));
    console.log(row('GET /search (HTML, anonymous)', page));
    console.log(row('GET /search (HTML, token: rendered)', rendered));
    const ratio = (xs: Figures[]) => {
      const r = api.map((a, i) => xs[i]!.rps / a.rps).sort((a, b) => a - b);
      return `${(r[Math.floor(r.length / 2)]! * 100).toFixed(1)}%`;
    };
    console.log(
      `ratio to JSON (median of rounds): anonymous page ${ratio(page)} (remembered until the next index swap), rendered page ${ratio(rendered)}`,
    );
  } finally {
    server?.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

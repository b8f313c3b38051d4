/**
 * Issue 15 figures, measured in one run (the machine is shared: compare within the run only).
 *   1. resolve p50/p99 under 50 connections (autocannon), idle vs while a 10,000-version registry
 *      syncs in the same server process (a child process: one event loop, as in production; the
 *      index is built and swapped in worker threads, so the max latency stays near idle too);
 *   2. heap and answer-cache size after 100,000 distinct unknown references;
 *   3. the archive of a 100 MB version, cold (built) vs cached.
 * Usage: node --expose-gc dist/bench/server-hostile.js [seconds of the idle load run, default 5] [resolve]
 * (`resolve`: only the first figure).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import autocannon from 'autocannon';

const FIXTURES = join(process.cwd(), 'registry-fixtures');

function generate(dir: string, templates: number, versions: number, salt: string): void {
  for (let t = 0; t < templates; t++) {
    const name = `t${String(t).padStart(4, '0')}`;
    for (let v = 0; v < versions; v++) {
      const vdir = join(dir, name, `v1.${v}`);
      mkdirSync(vdir, { recursive: true });
      writeFileSync(
        join(vdir, `${name}.jinja`),
        `resources:\n- name: {{ env["name"] }}-${name}-${v}-${salt}\n  type: t\n`,
      );
      writeFileSync(join(vdir, 'example.yaml'), `resources:\n- name: ${name}\n  type: ${name}.jinja\n`);
    }
  }
}

async function openApp(dir: string) {
  const { openStore } = await import('../server/src/store/db.js');
  const { createApp } = await import('../server/src/api/app.js');
  const { defaultSourceFactory } = await import('../server/src/service.js');
  const { createLogger } = await import('../server/src/log.js');
  const store = openStore(join(dir, 'registry.db'));
  const devNull = openSync('/dev/null', 'w');
  return createApp({
    store,
    sources: defaultSourceFactory({ gitCacheDir: join(dir, 'git') }),
    secretKey: randomBytes(32),
    defaultRegistry: 'github.com/acme/templates',
    logger: createLogger({ write: (t) => writeSync(devNull, t) }),
  });
}

/** The child: serves resolve; on 'sync' re-indexes the big registry and answers 'synced'. */
async function child(port: number, dir: string): Promise<void> {
  const { app, service } = await openApp(dir);
  const small = await service.add({ source: FIXTURES, name: 'github.com/acme/templates' });
  await service.sync(small.id, 'cli');
  const bigDir = join(dir, 'big');
  generate(bigDir, 2000, 5, 'a');
  const big = await service.add({ source: bigDir, name: 'local.dm/local/big' });
  await service.sync(big.id, 'cli');
  process.on('message', async (m) => {
    if (m === 'prepare') {
      // New content for every version, written before the load starts (writing 20,000 files is
      // the bench's own work, not the server's).
      generate(bigDir, 2000, 5, randomBytes(4).toString('hex'));
      process.send?.('prepared');
      return;
    }
    if (m !== 'sync') return;
    const started = performance.now();
    const outcome = await service.sync(big.id, 'manual');
    process.send?.({
      synced: outcome.status,
      versions: outcome.versionCount,
      ms: performance.now() - started,
    });
  });
  serve({ fetch: app.fetch, port }, () => process.send?.('ready'));
}

/** Resolve load for `seconds`, or (with `until`) from now until `until` settles. */
async function load(url: string, seconds: number, until?: Promise<unknown>) {
  const r = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: 50,
        duration: until ? 24 * 3600 : seconds,
        requests: ['redis:v1.0', 'redis:v1.1', 'postgres:v1', 'web-app:v1.1'].map((ref) => ({
          method: 'GET',
          path: `/api/v1/resolve?ref=${ref}`,
        })),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    void until?.finally(() => instance.stop());
  });
  return {
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    rps: r.requests.average,
    errors: r.errors + r.non2xx,
  };
}

async function resolveUnderSync(seconds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dm-bench-hostile-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const proc: ChildProcess = fork(fileURLToPath(import.meta.url), ['child', String(port), dir], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      proc.once('message', () => resolve());
      proc.once('exit', (code) => reject(new Error(`server exited ${code}`)));
    });
    const url = `http://127.0.0.1:${port}`;
    await load(url, 1);
    const idle = await load(url, seconds);
    const prepared = new Promise<void>((resolve) => proc.once('message', () => resolve()));
    proc.send('prepare');
    await prepared;
    const synced = new Promise<{ synced: string; versions: number; ms: number }>((resolve) =>
      proc.once('message', (m) => resolve(m as { synced: string; versions: number; ms: number })),
    );
    proc.send('sync');
    // The load runs for the whole sync: reading the directory, building the index, the swap.
    const busy = await load(url, seconds, synced);
    const sync = await synced;
    console.log(
      `resolve, 50 connections   idle: p50 ${idle.p50} ms, p99 ${idle.p99} ms, max ${idle.max} ms, ${Math.round(idle.rps)} req/s`,
    );
    console.log(
      `  during a whole 10,000-version sync (${sync.synced}, ${sync.versions} versions, ${(sync.ms / 1000).toFixed(1)} s): p50 ${busy.p50} ms, p99 ${busy.p99} ms, max ${busy.max} ms, ${Math.round(busy.rps)} req/s`,
    );
    console.log(
      `  p99 ratio busy/idle: ${(busy.p99 / Math.max(idle.p99, 1)).toFixed(2)} (target ≤ 2); errors ${idle.errors + busy.errors}`,
    );
    // The swap runs in a worker (docs/server.md, "Indexing"): the slowest request during the sync is
    // the one a request-thread swap would hold for its whole transaction.
    console.log(
      `  max ratio busy/idle: ${(busy.max / Math.max(idle.max, 1)).toFixed(2)} (a swap on the request thread shows here); load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

async function memoryAndArchive(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dm-bench-hostile-'));
  try {
    const { app, service } = await openApp(dir);
    const row = await service.add({ source: FIXTURES, name: 'github.com/acme/templates' });
    await service.sync(row.id, 'cli');
    const anyone = { canRead: (r: { visibility: string }) => r.visibility !== 'private' };
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 100_000; i++) {
      await service.catalog.resolveAnswer(
        `github.com/acme/templates/t${randomBytes(30).toString('hex')}:v1`,
        anyone,
      );
    }
    gc?.();
    const after = process.memoryUsage().heapUsed;
    console.log(
      `100,000 distinct unknown references: heap +${((after - before) / 1048576).toFixed(1)} MB, answer cache ${(service.catalog.cachedBytes / 1048576).toFixed(1)} MB (bound 32 MiB)${gc ? '' : ' [run with --expose-gc for a settled heap]'}`,
    );

    // A 100 MB version: 4 files of 25 MB of mixed text.
    const bigDir = join(dir, 'big');
    const vdir = join(bigDir, 'huge', 'v1.0.0');
    mkdirSync(vdir, { recursive: true });
    writeFileSync(join(vdir, 'huge.jinja'), 'resources: []\n');
    for (let i = 0; i < 4; i++) {
      const chunk = Buffer.from(`${randomBytes(48).toString('base64')}\n`.repeat(1024));
      writeFileSync(
        join(vdir, `data${i}.txt`),
        Buffer.concat(Array.from({ length: Math.ceil((25 * 1048576) / chunk.length) }, () => chunk)),
      );
    }
    const big = await service.add({ source: bigDir, name: 'local.dm/local/huge' });
    const outcome = await service.sync(big.id, 'cli');
    const path = '/api/v1/templates/local.dm/local/huge/huge/versions/v1.0.0/archive.tar.gz';
    let t = performance.now();
    const cold = await app.request(path);
    const coldBytes = (await cold.arrayBuffer()).byteLength;
    const coldMs = performance.now() - t;
    t = performance.now();
    const warm = await app.request(path);
    await warm.arrayBuffer();
    const warmMs = performance.now() - t;
    console.log(
      `archive of a 100 MB version [sync ${outcome.status}; ${cold.status}, ${(coldBytes / 1048576).toFixed(1)} MB gz]: cold ${coldMs.toFixed(0)} ms, cached ${warmMs.toFixed(1)} ms (${(coldMs / Math.max(warmMs, 0.1)).toFixed(0)}× faster)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'child') {
  await child(Number(process.argv[3]), process.argv[4]!);
} else {
  const seconds = Number(process.argv[2] ?? 5);
  if (process.argv[3] !== 'resolve') await memoryAndArchive();
  await resolveUnderSync(seconds);
}

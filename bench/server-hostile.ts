/**
 * Issue 15 figures, measured in one run (the machine is shared: compare within the run only).
 *   1. resolve p50/p99 under 50 connections (autocannon), idle vs while a 10,000-version registry
 *      syncs in the same server process (a child process: one event loop, as in production; the
 *      index is built and swapped in worker threads, so the max latency stays near idle too);
 *   2. heap and answer-cache size after 100,000 distinct unknown references;
 *   3. the archive of a 100 MB version: the longest event-loop stall, time and CPU of building it the
 *      way it was built before (every file read at once, one gzip: the baseline), cold (a file at a
 *      time, streamed gzip) and cached.
 *   4. issue 25: an unrelated resolve (p50/p99/max, 10 connections) and the server's peak RSS while
 *      each attack runs against one server process: (a) 8 parallel 24 MiB webhook deliveries with
 *      wrong signatures, 31 GitHub registries holding secrets (sent from a process of their own); (b) 8 parallel clients each asking
 *      for a version at the files bound (1,000 files) its resolve, its archive and its file list,
 *      then its page with a token (never cached); (c) four anonymous clients posting batches of 1,000
 *      distinct references; (d) two clients posting batches of 1,000 references to that version
 *      (130 MB answers); (e) a 7 MB manager configuration of 24,000 resources (`POST /expand`);
 *      (f) six parallel expansions whose schema has a catastrophic regular expression. Baseline: the
 *      same resolve load with no attack, in the same run.
 * Usage: node --expose-gc dist/bench/server-hostile.js [seconds of the idle load run, default 5]
 *   [resolve | archive | attacks] (`resolve`: only the first figure; `archive`: the second and
 *   third; `attacks`: only the fourth).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { serveApp } from '../server/src/api/listener.js';

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

async function openApp(dir: string, adminTokens: string[] = [], withManager = false) {
  const { openStore } = await import('../server/src/store/sqlite/open.js');
  const { createApp } = await import('../server/src/api/app.js');
  const { defaultSourceFactory } = await import('../server/src/service.js');
  const { createLogger } = await import('../server/src/log.js');
  const { managerPaths } = await import('../server/src/manager/manager-tokens.js');
  const store = openStore(join(dir, 'registry.db'));
  const devNull = openSync('/dev/null', 'w');
  // The manager's expansions need a cluster configured, never reached by `POST /expand`.
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:9"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: t}\n',
  );
  return createApp({
    ...(withManager
      ? { manager: { clusters: { prod: kubeconfig }, ...managerPaths(join(dir, 'registry.db')) } }
      : {}),
    store,
    sources: defaultSourceFactory({ gitCacheDir: join(dir, 'git') }),
    secretKey: randomBytes(32),
    defaultRegistry: 'github.com/acme/templates',
    adminTokens,
    logger: createLogger({ write: (t) => writeSync(devNull, t) }),
  });
}

/** The child: serves resolve; on 'sync' re-indexes the big registry and answers 'synced'. */
async function child(port: number, dir: string): Promise<void> {
  const registry = await openApp(dir);
  const { service } = registry;
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
  serveApp(registry, { port }, () => process.send?.('ready'));
}

/** Resolve load for `seconds`, or (with `until`) from now until `until` settles. */
async function load(url: string, seconds: number, until?: Promise<unknown>, connections = 50) {
  const r = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
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
    // The longest the event loop went without a turn (what every other request waits), and the
    // process's CPU time, while `work` runs.
    const stalls = async (work: () => Promise<unknown>) => {
      let longest = 0;
      let last = performance.now();
      let running = true;
      const turn = () => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
        if (running) setImmediate(turn);
      };
      setImmediate(turn);
      const cpu = process.cpuUsage();
      const t = performance.now();
      await work();
      running = false;
      const used = process.cpuUsage(cpu);
      return { ms: performance.now() - t, stall: longest, cpu: (used.user + used.system) / 1000 };
    };
    // Baseline, the way the archive was built before (every file read at once, one tar, one gzip).
    const { versionTarGz } = await import('../client/src/registry/index.js');
    const resolution = await service.catalog.resolve('local.dm/local/huge/huge:v1.0.0', anyone);
    const versionId = (await service.data.reads.versions(big.id, '', 'huge')).find(
      (v) => v.version === 'v1.0.0',
    )!.id;
    const whole = await stalls(async () =>
      versionTarGz(await service.data.reads.versionContents(versionId), 'huge-v1.0.0'),
    );
    let coldBytes = 0;
    let status = 0;
    const cold = await stalls(async () => {
      const res = await app.request(path);
      status = res.status;
      coldBytes = (await res.arrayBuffer()).byteLength;
    });
    const warm = await stalls(async () => (await app.request(path)).arrayBuffer());
    const f = (r: { ms: number; stall: number; cpu: number }) =>
      `${r.ms.toFixed(0)} ms, longest event-loop stall ${r.stall.toFixed(1)} ms, CPU ${r.cpu.toFixed(0)} ms`;
    console.log(
      `archive of a 100 MB version [sync ${outcome.status}; ${status}, ${(coldBytes / 1048576).toFixed(1)} MB gz, ${resolution.files.length} files; load ${loadavg()[0]!.toFixed(2)}]\n  all files read at once, one gzip (before): ${f(whole)}\n  cold (a file at a time, streamed gzip): ${f(cold)} (stall ratio ${(cold.stall / Math.max(whole.stall, 0.1)).toFixed(2)})\n  second request: ${f(warm)}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const BENCH_ADMIN = 'bench-admin-token';
/** Files in the many-files version of the attack server: the files bound (issue 25 item 2 had 100,000). */
const MANY_FILES = 1_000;

/** The attack child: fixtures, 31 GitHub registries with secrets, a version of many small files. */
async function attackChild(port: number, dir: string): Promise<void> {
  const registry = await openApp(dir, [BENCH_ADMIN], true);
  const { service } = registry;
  const small = await service.add({ source: FIXTURES, name: 'github.com/acme/templates' });
  await service.sync(small.id, 'cli');
  for (let i = 0; i < 31; i++) {
    await service.add({ source: `github.com/acme/r${i}`, webhookSecret: `secret-${i}` });
  }
  const vdir = join(dir, 'many', 'many', 'v1.0.0');
  mkdirSync(join(vdir, 'data'), { recursive: true });
  writeFileSync(join(vdir, 'many.jinja'), 'resources: []\n');
  writeFileSync(join(vdir, 'example.yaml'), 'resources:\n- name: m\n  type: many.jinja\n');
  for (let i = 0; i < MANY_FILES - 2; i++) {
    writeFileSync(join(vdir, 'data', `file-with-a-rather-long-name-${i}.txt`), `${i}\n`);
  }
  const many = await service.add({ source: join(dir, 'many'), name: 'local.dm/local/many' });
  const outcome = await service.sync(many.id, 'cli');
  let peak = 0;
  let loop = performance.eventLoopUtilization();
  setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20).unref();
  process.on('message', (m) => {
    if (m === 'peak') {
      // The request thread's busy time since the last ask (event-loop utilisation: its own work,
      // not the worker threads'), what every other request competes with.
      const now = performance.eventLoopUtilization();
      process.send?.({ peak, busyMs: performance.eventLoopUtilization(now, loop).active });
      loop = now;
      peak = process.memoryUsage().rss;
    }
  });
  serveApp(registry, { port }, () => process.send?.({ ready: true, manyVersions: outcome.versionCount }));
}

async function attacks(seconds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dm-bench-attacks-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const proc: ChildProcess = fork(fileURLToPath(import.meta.url), ['attack-child', String(port), dir], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = <T>(m: string) =>
    new Promise<T>((resolve) => {
      proc.once('message', (answer) => resolve(answer as T));
      if (m) proc.send(m);
    });
  try {
    const ready = await Promise.race([
      ask<{ manyVersions: number }>(''),
      new Promise<never>((_, reject) =>
        proc.once('exit', (code) => reject(new Error(`server exited ${code}`))),
      ),
    ]);
    const url = `http://127.0.0.1:${port}`;
    const statuses = new Map<number | string, number>();
    const tally = (key: number | string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
    /** Counts an answer's status, or the failure of a request that got none (reset, refused). */
    const count = async (answer: Promise<Response>) => {
      try {
        const res = await answer;
        // Read and dropped as it comes: 130 MB answers are not held by the bench process either.
        if (res.body) for await (const _ of res.body);
        tally(res.status);
      } catch (error) {
        tally((error as { cause?: { code?: string } }).cause?.code ?? 'failed');
      }
    };
    const repeat = async (rounds: number, parallel: number, one: () => Promise<void>) => {
      for (let r = 0; r < rounds; r++) await Promise.all(Array.from({ length: parallel }, one));
    };
    const many = '/templates/local.dm/local/many/many/versions/v1.0.0';
    const token = { authorization: `Bearer ${BENCH_ADMIN}` };
    const expand = (content: string, imports: { name: string; content: string }[] = []) =>
      count(
        fetch(`${url}/api/v1/expand`, {
          method: 'POST',
          headers: { ...token, 'content-type': 'application/json' },
          body: JSON.stringify({ configuration: { content, imports } }),
        }),
      );
    const bigConfiguration = `resources:\n${Array.from(
      { length: 24_000 },
      (_, i) => `- name: r${i}\n  type: ConfigMap\n  properties:\n    data: {k: "${'v'.repeat(250)}"}\n`,
    ).join('')}`;
    const evil = {
      content: `imports:\n- path: evil.jinja\n- path: evil.jinja.schema\nresources:\n- name: e\n  type: evil.jinja\n  properties: {x: "${'a'.repeat(40)}!"}\n`,
      imports: [
        { name: 'evil.jinja', content: 'resources: []\n' },
        {
          name: 'evil.jinja.schema',
          content: "properties:\n  x:\n    type: string\n    pattern: '^(a+)+$'\n",
        },
      ],
    };
    const list: [string, () => Promise<void>][] = [
      [
        'webhook: 8 parallel 24 MiB deliveries, wrong signature, 31 GitHub registries',
        // Sent from a process of their own: 192 MB of uploads from the process that measures the
        // resolves would measure the bench's own sending as the server's latency.
        async () => {
          const sender = fork(fileURLToPath(import.meta.url), ['webhook-sender', url], {
            stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
          });
          const answers = await new Promise<(number | string)[]>((resolve, reject) => {
            sender.once('message', (m) => resolve(m as (number | string)[]));
            sender.once('exit', (code) => reject(new Error(`the webhook sender exited ${code}`)));
          });
          for (const a of answers) tally(a);
        },
      ],
      [
        `${MANY_FILES.toLocaleString('en')} files: 8 parallel clients × 2 × (resolve, archive, file list), with a token`,
        () =>
          repeat(2, 8, async () => {
            await count(fetch(`${url}/api/v1/resolve?ref=local.dm/local/many/many:v1`, { headers: token }));
            await count(fetch(`${url}/api/v1${many}/archive.tar.gz`, { headers: token }));
            await count(fetch(`${url}/api/v1${many}/files?limit=1000`, { headers: token }));
          }),
      ],
      [
        `${MANY_FILES.toLocaleString('en')} files: 8 parallel clients × 2 pages with a token (never cached)`,
        () => repeat(2, 8, () => count(fetch(`${url}${many}`, { headers: token }))),
      ],
      [
        'batch: 4 anonymous clients, 1,000 distinct references each (3 rounds)',
        () =>
          repeat(3, 4, async () =>
            count(
              fetch(`${url}/api/v1/resolve`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({
                  refs: Array.from(
                    { length: 1000 },
                    () => `github.com/acme/templates/t${randomBytes(12).toString('hex')}:v1`,
                  ),
                }),
              }),
            ),
          ),
      ],
      [
        `batch: 2 clients, 1,000 references each to the ${MANY_FILES.toLocaleString('en')}-file version (~130 MB answers)`,
        () =>
          repeat(1, 2, async () =>
            count(
              fetch(`${url}/api/v1/resolve`, {
                method: 'POST',
                headers: { ...token, 'content-type': 'application/json' },
                body: JSON.stringify({
                  refs: Array.from({ length: 1000 }, () => 'local.dm/local/many/many:v1'),
                }),
              }),
            ),
          ),
      ],
      [
        `manager: a 7 MB configuration of 24,000 resources (${(bigConfiguration.length / 1048576).toFixed(1)} MiB), POST /expand`,
        () => expand(bigConfiguration),
      ],
      [
        'manager: six parallel expansions with a catastrophic-regex schema',
        () => repeat(1, 6, () => expand(evil.content, evil.imports)),
      ],
    ];
    const only = process.env.DM_BENCH_ATTACKS;
    if (only) {
      const keep = only.split(',').map(Number);
      for (let i = list.length - 1; i >= 0; i--) if (!keep.includes(i)) list.splice(i, 1);
    }
    // 10 connections: the latency one unrelated client sees, not the machine's throughput.
    await load(url, 1, undefined, 10);
    await ask('peak');
    const idle = await load(url, seconds, undefined, 10);
    const idleAsk = await ask<{ peak: number; busyMs: number }>('peak');
    const idlePeak = idleAsk.peak;
    const mb = (b: number) => `${(b / 1048576).toFixed(0)} MB`;
    console.log(
      `attacks (issue 25; ${MANY_FILES} files version: ${ready.manyVersions} version(s) indexed; load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(
          ' ',
        )})\n  no attack: resolve p50 ${idle.p50} ms, p99 ${idle.p99} ms, max ${idle.max} ms; peak RSS ${mb(idlePeak)}; request thread busy ${(idleAsk.busyMs / 1000).toFixed(1)} s of ${seconds} s`,
    );
    for (const [name, attack] of list) {
      statuses.clear();
      const started = performance.now();
      const running = attack();
      const busy = await load(url, seconds, running, 10);
      await running;
      const ms = performance.now() - started;
      const { peak, busyMs } = await ask<{ peak: number; busyMs: number }>('peak');
      console.log(
        `  ${name}: ${(ms / 1000).toFixed(1)} s, answers ${[...statuses].map(([k, v]) => `${v}×${k}`).join(' ')}\n    resolve (10 connections) p50 ${busy.p50} ms, p99 ${busy.p99} ms (ratio ${(busy.p99 / Math.max(idle.p99, 1)).toFixed(1)}; target ≤ 50 ms), max ${busy.max} ms, errors ${busy.errors}; peak RSS ${mb(peak)}; request thread busy ${(busyMs / 1000).toFixed(1)} s of ${(ms / 1000).toFixed(1)} s; load ${loadavg()[0]!.toFixed(2)}`,
      );
    }
  } finally {
    proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The webhook sender: 8 parallel 24 MiB deliveries with a wrong signature; sends their statuses. */
async function webhookSender(url: string): Promise<void> {
  const pad = Buffer.from(
    JSON.stringify({
      ref: 'refs/heads/main',
      repository: { full_name: 'acme/r7' },
      pad: 'x'.repeat(24 * 1048576),
    }),
  );
  const answers = await Promise.all(
    Array.from({ length: 8 }, async () => {
      try {
        const res = await fetch(`${url}/api/v1/webhooks/github`, {
          method: 'POST',
          headers: { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` },
          body: pad,
        });
        await res.arrayBuffer();
        return res.status;
      } catch (error) {
        return (error as { cause?: { code?: string } }).cause?.code ?? 'failed';
      }
    }),
  );
  process.send?.(answers, () => process.exit(0));
}

if (process.argv[2] === 'child') {
  await child(Number(process.argv[3]), process.argv[4]!);
} else if (process.argv[2] === 'webhook-sender') {
  await webhookSender(process.argv[3]!);
} else if (process.argv[2] === 'attack-child') {
  await attackChild(Number(process.argv[3]), process.argv[4]!);
} else {
  const seconds = Number(process.argv[2] ?? 5);
  if (process.argv[3] === 'attacks') await attacks(seconds);
  else {
    if (process.argv[3] !== 'resolve') await memoryAndArchive();
    if (process.argv[3] !== 'archive') await resolveUnderSync(seconds);
  }
}

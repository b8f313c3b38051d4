/**
 * The Deployment Manager service against `dm deploy` locally (docs/manager.md), same stand-in,
 * same run, real kubectl (through a counting wrapper): a 200-resource configuration deployed by
 * `dm --manager-url … deploy` (the dm CLI sending it to a dm-registry app in its own process, as in
 * production, which expands and applies it) against `dm deploy` (the CLI applying it itself), in
 * alternating rounds (the machine is shared: the median of the per-round ratios is the figure);
 * then 20 deployments of 20 resources each sent at once to the API. Where PostgreSQL is installed,
 * the same with a second server whose store (and so the manager's state and deployment leases) is
 * on a private PostgreSQL cluster (docs/manager.md, "Several replicas"), in the same rounds. Prints
 * wall times, the added ratio (target ≤ 1.10), and kubectl processes.
 * Run: node dist/bench/manager.js [rounds, default 5]
 */
import { fork, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { createApp } from '../server/src/api/app.js';
import { createLogger } from '../server/src/log.js';
import { managerPaths } from '../server/src/manager/manager-tokens.js';
import { defaultSourceFactory } from '../server/src/service.js';
import { openPostgresStore } from '../server/src/store/postgres/open.js';
import { openStore } from '../server/src/store/sqlite/open.js';
import { startKubeStandin } from '../test/kube-standin/server.js';
import { postgresBinaries, startPostgres } from '../test/support/postgres.js';

/** A configuration in the deployment's namespace: Services, ConfigMaps filled from them by $(ref), Deployments. */
function configuration(prefix: string, services: number, maps: number, apps: number): string {
  const lines = ['resources:'];
  for (let i = 0; i < services; i++) {
    lines.push(
      `- name: ${prefix}-svc-${i}`,
      '  type: Service',
      `  properties: {spec: {ports: [{port: ${80 + i}}]}}`,
    );
  }
  for (let i = 0; i < maps; i++) {
    lines.push(
      `- name: ${prefix}-cfg-${i}`,
      '  type: ConfigMap',
      `  properties: {data: {endpoint: $(ref.${prefix}-svc-${i % services}.spec.clusterIP)}}`,
    );
  }
  for (let i = 0; i < apps; i++) {
    lines.push(
      `- name: ${prefix}-app-${i}`,
      '  type: apps/v1/Deployment',
      `  properties: {spec: {selector: {matchLabels: {app: ${prefix}-${i}}}, template: {metadata: {labels: {app: ${prefix}-${i}}}, spec: {containers: [{name: c, image: nginx}]}}}}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The dm-registry side, in a child process: the app with the manager on one cluster (SQLite, or PostgreSQL at `dbUrl`). */
async function serveManager(dir: string, kubeconfig: string, kubectl: string, dbUrl?: string): Promise<void> {
  const dbFile = join(dir, dbUrl ? 'data-pg' : 'data', 'registry.db');
  const store = dbUrl ? await openPostgresStore(dbUrl) : openStore(dbFile);
  const server = createApp({
    store,
    sources: defaultSourceFactory({ gitCacheDir: join(dir, 'git') }),
    secretKey: Buffer.alloc(32, 7),
    adminTokens: ['bench-admin'],
    logger: createLogger({ write: () => {} }),
    accessLog: false,
    manager: { clusters: { bench: kubeconfig }, ...managerPaths(dbFile), kubectlBinary: kubectl },
  });
  const http = serve({ fetch: server.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => http.once('listening', r));
  process.send?.((http.address() as { port: number }).port);
  process.on('disconnect', () => {
    void server.manager?.idle().then(() => {
      http.close();
      void Promise.all([server.manager?.close(), store.close()]).then(() => process.exit(0));
    });
  });
}

function startServer(
  dir: string,
  kubeconfig: string,
  kubectl: string,
  dbUrl?: string,
): Promise<{ url: string; stop(): void }> {
  const child = fork(
    fileURLToPath(import.meta.url),
    ['serve', dir, kubeconfig, kubectl, ...(dbUrl ? [dbUrl] : [])],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  return new Promise((resolve, reject) => {
    child.once('message', (port) =>
      resolve({ url: `http://127.0.0.1:${String(port)}`, stop: () => child.disconnect() }),
    );
    child.once('exit', (code) => reject(new Error(`the server exited ${code}`)));
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function bench(rounds: number): Promise<void> {
  const root = new URL('../../', import.meta.url).pathname;
  const DM_BIN = join(root, 'bin', 'dm.js');
  const standin = await startKubeStandin();
  const dir = mkdtempSync(join(tmpdir(), 'dm-bench-manager-'));
  const kubeconfig = standin.writeKubeconfig(dir, { namespace: 'default' });
  const callLog = join(dir, 'kubectl-calls');
  const wrapper = join(dir, 'kubectl-counting.sh');
  writeFileSync(wrapper, `#!/bin/sh\necho x >> ${JSON.stringify(callLog)}\nexec kubectl "$@"\n`);
  chmodSync(wrapper, 0o755);
  writeFileSync(callLog, '');
  const kubectlCount = () => readFileSync(callLog, 'utf8').length / 2;
  const server = await startServer(dir, kubeconfig, wrapper);
  const pgCluster = postgresBinaries() ? await startPostgres() : undefined;
  const pgServer = pgCluster
    ? await startServer(dir, kubeconfig, wrapper, await pgCluster.createDatabase('bench_manager'))
    : undefined;

  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_CONFIG_HOME: join(dir, 'cfg'),
    DM_KUBECTL: wrapper,
    DM_MANAGER_TOKEN: 'bench-admin',
  };
  const dm = (args: string[]) =>
    new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      const child = spawn(process.execPath, [DM_BIN, ...args], {
        cwd: dir,
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      child.on('close', (code) =>
        code === 0
          ? resolve(performance.now() - t0)
          : reject(new Error(`dm ${args.join(' ')}: ${code} ${stderr}`)),
      );
    });
  const local = (file: string) => dm(['--kubeconfig', kubeconfig, '-n', 'default', 'deploy', file]);
  const remoteOn = (url: string) => (file: string) =>
    dm(['--manager-url', url, 'deploy', file, '--cluster', 'bench', '-n', 'default']);
  const sides = [
    { name: 'dm deploy (local)', run: local, ms: [] as number[], kubectl: 0, url: '' },
    { name: 'service on SQLite', run: remoteOn(server.url), ms: [] as number[], kubectl: 0, url: server.url },
    ...(pgServer
      ? [
          {
            name: 'service on PostgreSQL',
            run: remoteOn(pgServer.url),
            ms: [] as number[],
            kubectl: 0,
            url: pgServer.url,
          },
        ]
      : []),
  ];

  try {
    // Warm every path (kubectl discovery caches, the server's first expansion) with a small deploy.
    for (const [i, side] of sides.entries()) {
      writeFileSync(join(dir, `warm-${i}.yaml`), configuration(`warm-${i}`, 2, 2, 1));
      await side.run(`warm-${i}.yaml`);
    }
    for (let round = 0; round < rounds; round++) {
      // A new 200-resource deployment each time, on each side; which goes first rotates.
      for (let k = 0; k < sides.length; k++) {
        const i = (k + round) % sides.length;
        const side = sides[i]!;
        writeFileSync(join(dir, `r${round}-${i}.yaml`), configuration(`r${round}-${i}`, 60, 60, 80));
        const before = kubectlCount();
        side.ms[round] = await side.run(`r${round}-${i}.yaml`);
        side.kubectl = kubectlCount() - before;
      }
    }
    const s = (ms: number[]) => ms.map((m) => (m / 1000).toFixed(2)).join(' ');
    console.log(`200 resources against the stand-in (real kubectl, dm CLI process each), ${rounds} rounds:`);
    for (const side of sides) {
      console.log(`  ${`${side.name}:`.padEnd(34)}${s(side.ms)} s, ${side.kubectl} kubectl processes each`);
    }
    const localMs = sides[0]!.ms;
    for (const side of sides.slice(1)) {
      const ratios = side.ms.map((m, round) => m / localMs[round]!);
      console.log(
        `  ${side.name} / local:`.padEnd(36) +
          `${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(2)}x (target ≤ 1.10)`,
      );
    }

    // 20 deployments of 20 resources each, sent at once, to each server.
    for (const [j, side] of sides.slice(1).entries()) {
      const before = kubectlCount();
      const t0 = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const res = await fetch(`${side.url}/api/v1/deployments?wait=true`, {
            method: 'POST',
            headers: { authorization: 'Bearer bench-admin', 'content-type': 'application/json' },
            body: JSON.stringify({
              name: `many-${j}-${i}`,
              cluster: 'bench',
              namespace: 'default',
              configuration: {
                content: configuration(`many-${j}-${i}`, 7, 7, 6),
                imports: [],
              },
            }),
          });
          return (await res.json()) as { status?: string; error?: unknown };
        }),
      );
      const manyMs = performance.now() - t0;
      const failed = answers.filter((a) => a.status !== 'done');
      console.log(`20 concurrent deployments of 20 resources through the API (${side.name}):`);
      console.log(
        `  ${(manyMs / 1000).toFixed(2)} s, ${kubectlCount() - before} kubectl processes, ${failed.length} not done${failed.length ? `: ${JSON.stringify(failed[0])}` : ''}`,
      );
      if (failed.length > 0) process.exitCode = 1;
    }
  } finally {
    server.stop();
    pgServer?.stop();
    await standin.close();
    await pgCluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'serve') {
  await serveManager(process.argv[3]!, process.argv[4]!, process.argv[5]!, process.argv[6]);
} else {
  await bench(Math.max(1, Number(process.argv[2] ?? 5) || 5));
}

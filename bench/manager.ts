/**
 * The Deployment Manager service against `dm deploy` locally (docs/manager.md), same stand-in,
 * same run, real kubectl (through a counting wrapper): a 200-resource configuration deployed by
 * `dm --manager-url … deploy` (the dm CLI sending it to a dm-registry app in its own process, as in
 * production, which expands and applies it) against `dm deploy` (the CLI applying it itself), in
 * alternating rounds (the machine is shared: the median of the per-round ratios is the figure);
 * then 20 deployments of 20 resources each sent at once to the API. Prints wall times, the added
 * ratio (target ≤ 1.10), and kubectl processes. Run: node dist/bench/manager.js [rounds, default 5]
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
import { openStore } from '../server/src/store/db.js';
import { startKubeStandin } from '../test/kube-standin/server.js';

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

/** The dm-registry side, in a child process: the app with the manager on one cluster. */
async function serveManager(dir: string, kubeconfig: string, kubectl: string): Promise<void> {
  const dbFile = join(dir, 'data', 'registry.db');
  const store = openStore(dbFile);
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
      server.manager?.close();
      store.close();
      process.exit(0);
    });
  });
}

function startServer(
  dir: string,
  kubeconfig: string,
  kubectl: string,
): Promise<{ url: string; stop(): void }> {
  const child = fork(fileURLToPath(import.meta.url), ['serve', dir, kubeconfig, kubectl], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
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
  const url = server.url;

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
  const remote = (file: string) =>
    dm(['--manager-url', url, 'deploy', file, '--cluster', 'bench', '-n', 'default']);

  try {
    // Warm both paths (kubectl discovery caches, the server's first expansion) with a small deploy.
    writeFileSync(join(dir, 'warm-local.yaml'), configuration('warm-local', 2, 2, 1));
    writeFileSync(join(dir, 'warm-remote.yaml'), configuration('warm-remote', 2, 2, 1));
    await local('warm-local.yaml');
    await remote('warm-remote.yaml');

    const localMs: number[] = [];
    const remoteMs: number[] = [];
    const ratios: number[] = [];
    let localKubectl = 0;
    let remoteKubectl = 0;
    for (let round = 0; round < rounds; round++) {
      // A new 200-resource deployment each time, on each side; which goes first alternates.
      writeFileSync(join(dir, `local-${round}.yaml`), configuration(`local-${round}`, 60, 60, 80));
      writeFileSync(join(dir, `remote-${round}.yaml`), configuration(`remote-${round}`, 60, 60, 80));
      const runLocal = async () => {
        const before = kubectlCount();
        localMs.push(await local(`local-${round}.yaml`));
        localKubectl = kubectlCount() - before;
      };
      const runRemote = async () => {
        const before = kubectlCount();
        remoteMs.push(await remote(`remote-${round}.yaml`));
        remoteKubectl = kubectlCount() - before;
      };
      if (round % 2 === 0) {
        await runLocal();
        await runRemote();
      } else {
        await runRemote();
        await runLocal();
      }
      ratios.push(remoteMs[round]! / localMs[round]!);
    }
    const s = (ms: number[]) => ms.map((m) => (m / 1000).toFixed(2)).join(' ');
    console.log(`200 resources against the stand-in (real kubectl, dm CLI process each), ${rounds} rounds:`);
    console.log(`  dm deploy (local):          ${s(localMs)} s, ${localKubectl} kubectl processes each`);
    console.log(`  dm --manager-url deploy:    ${s(remoteMs)} s, ${remoteKubectl} kubectl processes each`);
    console.log(
      `  service / local per round:  ${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(2)}x (target ≤ 1.10)`,
    );

    // 20 deployments of 20 resources each, sent at once.
    const before = kubectlCount();
    const t0 = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await fetch(`${url}/api/v1/deployments?wait=true`, {
          method: 'POST',
          headers: { authorization: 'Bearer bench-admin', 'content-type': 'application/json' },
          body: JSON.stringify({
            name: `many-${i}`,
            cluster: 'bench',
            namespace: 'default',
            configuration: { content: configuration(`many-${i}`, 7, 7, 6), imports: [] },
          }),
        });
        return (await res.json()) as { status?: string; error?: unknown };
      }),
    );
    const manyMs = performance.now() - t0;
    const failed = answers.filter((a) => a.status !== 'done');
    console.log('20 concurrent deployments of 20 resources through the API:');
    console.log(
      `  ${(manyMs / 1000).toFixed(2)} s, ${kubectlCount() - before} kubectl processes, ${failed.length} not done${failed.length ? `: ${JSON.stringify(failed[0])}` : ''}`,
    );
    if (failed.length > 0) process.exitCode = 1;
  } finally {
    server.stop();
    await standin.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'serve') {
  await serveManager(process.argv[3]!, process.argv[4]!, process.argv[5]!);
} else {
  await bench(Math.max(1, Number(process.argv[2] ?? 5) || 5));
}

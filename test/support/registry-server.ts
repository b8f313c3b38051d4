/** Starts the real `dm-registry` (bin/dm-registry.js → dist/) on a free loopback port over a temporary SQLite file. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './run-cli.js';

export interface RunningRegistry {
  url: string;
  /** Every request the server logged, in order: `METHOD path`. */
  requests(): string[];
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function startRegistry(
  indexArgs: readonly string[],
  env: Record<string, string> = {},
): Promise<RunningRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-registry-'));
  const port = await freePort();
  const args = [
    join(repoRoot, 'bin', 'dm-registry.js'),
    'start',
    '--port',
    String(port),
    '--db',
    join(dir, 'registry.db'),
  ];
  for (const a of indexArgs) args.push('--index', a);
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
  });
  const log: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const ready = new Promise<void>((resolve, reject) => {
    let buffer = '';
    child.stdout?.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl = buffer.indexOf('\n');
      while (nl !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        try {
          const entry = JSON.parse(line) as { msg?: string; method?: string; path?: string };
          if (entry.msg === 'listening') resolve();
          if (entry.msg === 'request') log.push(`${entry.method} ${entry.path}`);
        } catch {
          // not a JSON log line
        }
        nl = buffer.indexOf('\n');
      }
    });
    child.on('exit', (code) =>
      reject(new Error(`dm-registry exited with ${code} before listening: ${stderr}`)),
    );
    setTimeout(() => reject(new Error(`dm-registry did not start in 30 s: ${stderr}`)), 30_000).unref();
  });
  await ready;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => [...log],
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.on('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

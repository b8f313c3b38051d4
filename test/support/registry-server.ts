/**
 * Starts the real `dm-registry` (bin/dm-registry.js → dist/) on a port the system picks (`--port 0`,
 * read back from its `listening` log line: no window in which another process can take the port) over
 * a temporary SQLite file, or the database `options.db` names (a `postgres://` URL). Its temporary
 * directory is its data directory too when the database is PostgreSQL (`--data-dir`, unless the
 * arguments name one: nothing is written under the repository's `./data`), and `stop()` removes it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './run-cli.js';

/**
 * A port free a moment ago, for a server that must come back on the same port after a restart
 * (startRegistry itself binds port 0 and reads the port back, which has no such race).
 */
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

export interface RunningRegistry {
  url: string;
  /** Its temporary directory (the SQLite file's, and the data directory on PostgreSQL); removed by stop(). */
  dir: string;
  /** Every request the server logged, in order: `METHOD path`. */
  requests(): string[];
  stop(): Promise<void>;
}

/**
 * How long dm-registry may take to index and listen before the test gives up. A limit, not an
 * expectation: it starts in about a second on an idle machine, but a loaded 2-core CI machine is slower.
 */
const START_LIMIT_MS = 180_000;

export async function startRegistry(
  indexArgs: readonly string[],
  env: Record<string, string> = {},
  extraArgs: readonly string[] = [],
  options: {
    db?: string;
    /**
     * The working directory: default the repository (relative index paths), or with `db` the
     * temporary directory, since a process on PostgreSQL keeps its own files in `./data`.
     */
    cwd?: string;
    /**
     * The dm-registry to run, as a command and its first arguments: default this checkout's
     * bin/dm-registry.js under this Node; the package and image tests run an installed one.
     */
    program?: readonly string[];
  } = {},
): Promise<RunningRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-registry-'));
  const [command, ...programArgs] = options.program ?? [
    process.execPath,
    join(repoRoot, 'bin', 'dm-registry.js'),
  ];
  const args = [...programArgs, 'start', '--port', '0', '--db', options.db ?? join(dir, 'registry.db')];
  for (const a of indexArgs) args.push('--index', a);
  // The database the process will use (the last --db wins); on PostgreSQL its keys and caches would
  // otherwise go to ./data of its working directory, the repository (docs/server.md, "Running it").
  const dbIndex = extraArgs.lastIndexOf('--db');
  const db = dbIndex >= 0 ? extraArgs[dbIndex + 1] : options.db;
  if (db && /^postgres(ql)?:/i.test(db) && !extraArgs.includes('--data-dir')) args.push('--data-dir', dir);
  args.push(...extraArgs);
  const child: ChildProcess = spawn(command as string, args, {
    cwd: options.cwd ?? (options.db ? dir : repoRoot),
    env: { ...process.env, ...env },
  });
  const log: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const ready = new Promise<number>((resolve, reject) => {
    let buffer = '';
    child.stdout?.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl = buffer.indexOf('\n');
      while (nl !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        try {
          const entry = JSON.parse(line) as { msg?: string; method?: string; path?: string; port?: number };
          if (entry.msg === 'listening') resolve(Number(entry.port));
          if (entry.msg === 'request') log.push(`${entry.method} ${entry.path}`);
        } catch {
          // not a JSON log line
        }
        nl = buffer.indexOf('\n');
      }
    });
    child.on('error', (error) => reject(new Error(`dm-registry could not be started: ${error.message}`)));
    child.on('exit', (code, signal) =>
      reject(new Error(`dm-registry exited with ${code ?? signal} before listening: ${stderr}`)),
    );
    setTimeout(() => {
      reject(new Error(`dm-registry did not listen within ${START_LIMIT_MS / 1000} s: ${stderr}`));
      child.kill('SIGKILL');
    }, START_LIMIT_MS).unref();
  });
  const port = await ready;
  if (!Number.isInteger(port) || port <= 0) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw new Error(`dm-registry logged no port when listening: ${stderr}`);
  }
  const removeDir = () => rm(dir, { recursive: true, force: true });
  return {
    url: `http://127.0.0.1:${port}`,
    dir,
    requests: () => [...log],
    stop: () =>
      new Promise<void>((resolve) => {
        // Already gone (an exit code, or killed by a signal: exitCode stays null then), or not yet.
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.on('exit', () => resolve());
        child.kill('SIGTERM');
      }).then(removeDir),
  };
}

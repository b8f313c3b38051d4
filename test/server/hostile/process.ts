/**
 * A real `dm-registry start` process for the hostile tests: its own temporary database (an SQLite
 * file in its directory, or with `dialect: 'postgres'` a new database of this test process's
 * private cluster, test/server/helpers.ts), the port it chose, its log, and a way to stop it
 * (SIGTERM, then its exit code).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Dialect, databaseOn, tempDir } from '../helpers.js';

export const BIN = join(process.cwd(), 'bin', 'dm-registry.js');
export const ADMIN = 'hostile-admin-token';

export interface RegistryProcess {
  child: ChildProcessWithoutNullStreams;
  dir: string;
  /** The `--db` it runs on (pass it again to restart on the same database). */
  db: string;
  url: string;
  /** Everything the process wrote so far (stdout and stderr). */
  log(): string;
  /** The exit code (or signal) once the process has exited, else undefined. */
  exited(): number | string | undefined;
  /** Settles with the exit code (or signal) when the process exits. */
  exit: Promise<number | string>;
  /** SIGTERM, then waits for the exit; returns the code. */
  stop(): Promise<number | string>;
  /** Kills it if still running and removes its directory. */
  dispose(): void;
}

export async function startRegistry(
  args: readonly string[],
  options: {
    nodeArgs?: readonly string[];
    env?: Record<string, string>;
    dir?: string;
    /** The database (default: `databaseOn(dialect, dir)`). */
    db?: string;
    /** Where the default database is (default SQLite). */
    dialect?: Dialect;
    /**
     * The working directory (default this process's; `dir` with `dialect: 'postgres'`, since a
     * process on PostgreSQL keeps its own files, such as the git cache, in `./data`).
     */
    cwd?: string;
  } = {},
): Promise<RegistryProcess> {
  const dir = options.dir ?? tempDir('dm-hostile-');
  const db = options.db ?? (await databaseOn(options.dialect ?? 'sqlite', dir));
  // On PostgreSQL without a working directory of its own, its keys and caches go to `dir`, not
  // to ./data of this process's (the repository; docs/server.md "Running it").
  const dataDir =
    /^postgres(ql)?:/i.test(db) && !options.cwd && !args.includes('--data-dir') ? ['--data-dir', dir] : [];
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), BIN, 'start', '--port', '0', '--db', db, ...dataDir, ...args],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, DM_ADMIN_TOKEN: ADMIN, ...options.env },
      cwd: options.cwd ?? (options.dialect === 'postgres' ? dir : process.cwd()),
    },
  );
  let log = '';
  let exit: number | string | undefined;
  const exitPromise = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => {
      exit = code ?? signal ?? 'unknown';
      resolve(exit);
    }),
  );
  child.stderr.on('data', (c: Buffer) => {
    log += c.toString();
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      log += c.toString();
      const m = /"msg":"listening","port":(\d+)/.exec(log);
      if (m) resolve(Number(m[1]));
    });
    void exitPromise.then((code) => reject(new Error(`dm-registry exited ${code}: ${log}`)));
  });
  return {
    child,
    dir,
    db,
    url: `http://127.0.0.1:${port}`,
    log: () => log,
    exited: () => exit,
    exit: exitPromise,
    async stop() {
      if (exit === undefined) child.kill('SIGTERM');
      return exitPromise;
    },
    dispose() {
      if (exit === undefined) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The `dm_registry_bounded_work{work, state}` gauges of a running server (docs/server.md). */
export async function boundedWork(url: string, work: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^dm_registry_bounded_work\{work="([\w-]+)",state="(\w+)"\} (\d+)$/gm)) {
    if (m[1] === work) out[m[2]!] = Number(m[3]);
  }
  return out;
}

/** Settles with `promise`, or fails once `ms` have passed: a hard bound on a test's wait. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms / 1000} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

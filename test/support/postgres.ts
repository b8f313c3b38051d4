/**
 * A private PostgreSQL cluster for the tests (docs/server.md, "Tests and measurements"): `initdb`
 * into a temporary directory and `pg_ctl` serving on a Unix socket in that directory only (no TCP
 * port, so clusters of parallel test files never meet), stopped and removed by `stop()` and, as a
 * last resort, when the test process exits. When the tests run as root, PostgreSQL (which refuses
 * to run as root) runs as the `postgres` user through `runuser -u postgres --`, on a directory it
 * owns. The binaries are found on PATH or under /usr/lib/postgresql/<version>/bin; without them
 * `postgresBinaries()` is undefined and `npm test` runs the SQLite half only (CI installs them).
 * The cluster is created with the `en_US.UTF-8` locale, as `initdb`, Debian's clusters and managed
 * PostgreSQL services create them for operators (docs/server.md, "Text is compared as bytes"): a
 * query whose range or order depends on the database's collation fails here, not in production.
 * `startPostgres({ locale: 'C' })` gives the bytewise cluster instead, for tests that run on both.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, chownSync, constants, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';

export interface PostgresCluster {
  /** A connection URL for `database` (default `postgres`) over the cluster's socket. */
  url(database?: string): string;
  /** Creates an empty database and answers its URL. */
  createDatabase(name: string): Promise<string>;
  /** The socket directory (also the cluster's temporary root). */
  dir: string;
  /** The locale the cluster was created with. */
  locale: string;
  stop(): void;
}

const PORT = 5432;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The directory holding `initdb` and `pg_ctl`, or undefined when PostgreSQL is not installed. */
export function postgresBinaries(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, 'initdb')) && executable(join(dir, 'pg_ctl'))) return dir;
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const dir = join(root, v, 'bin');
    if (executable(join(dir, 'initdb')) && executable(join(dir, 'pg_ctl'))) return dir;
  }
  return undefined;
}

function postgresUser(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Runs a PostgreSQL program (as `postgres` when we are root); throws with its output on failure. */
function run(bin: string, program: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const command = asRoot ? 'runuser' : join(bin, program);
  const argv = asRoot ? ['-u', 'postgres', '--', join(bin, program), ...args] : args;
  const result = spawnSync(command, argv, { encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) {
    throw new Error(
      `${program} ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr}${result.stdout}`,
    );
  }
}

const running = new Set<() => void>();
process.on('exit', () => {
  for (const stop of running) stop();
});

export interface StartPostgresOptions {
  /** The cluster's locale (initdb --locale): `en_US.UTF-8` (the default, operators') or `C`. */
  locale?: 'en_US.UTF-8' | 'C';
}

/** Starts a fresh cluster; the caller stops it. Throws when PostgreSQL is not installed. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresCluster> {
  const locale = options.locale ?? 'en_US.UTF-8';
  const bin = postgresBinaries();
  if (!bin) throw new Error('PostgreSQL binaries (initdb, pg_ctl) are not installed');
  const dir = mkdtempSync(join(tmpdir(), 'dm-pg-'));
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  run(bin, 'initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '-A',
    'trust',
    '-E',
    'UTF8',
    `--locale=${locale}`,
    '--no-sync',
  ]);
  const serverOptions = [
    `-p ${PORT}`,
    "-c listen_addresses=''",
    `-c unix_socket_directories=${dir}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
  ].join(' ');
  run(bin, 'pg_ctl', [
    'start',
    '-w',
    '-t',
    '120',
    '-D',
    data,
    '-l',
    join(dir, 'server.log'),
    '-o',
    serverOptions,
  ]);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    running.delete(stop);
    try {
      run(bin, 'pg_ctl', ['stop', '-w', '-t', '60', '-m', 'fast', '-D', data]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  running.add(stop);
  const url = (database = 'postgres') =>
    `postgres://postgres@localhost:${PORT}/${database}?host=${encodeURIComponent(dir)}`;
  return {
    dir,
    locale,
    url,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stop,
  };
}

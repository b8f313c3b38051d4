/**
 * Shared set-up for the server tests: a real temporary SQLite file with the migrations of
 * migrations/ applied (or, `testServerOn('postgres')`, a fresh database on this test process's
 * private PostgreSQL cluster, test/support/postgres.ts), the real app over it, and the real sources.
 * `DIALECTS` is the database parameter of the suites that run against both (docs/server.md,
 * "Tests and measurements").
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_ACCESS } from '../../server/src/api/access.js';
import { type CreateAppDeps, createApp, type RegistryApp } from '../../server/src/api/app.js';
import { silentLogger } from '../../server/src/log.js';
import { defaultSourceFactory, RegistryService } from '../../server/src/service.js';
import { isPostgres } from '../../server/src/store/open-store.js';
import { openPostgresStore, type PostgresStore } from '../../server/src/store/postgres/open.js';
import { openStore, type Store } from '../../server/src/store/sqlite/open.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';

export const FIXTURES = join(process.cwd(), 'registry-fixtures');
export const ADMIN_TOKEN = 'test-admin-token';

export interface TestServer extends RegistryApp {
  dir: string;
  store: Store;
  close(): Promise<void>;
}

/** The directories `tempDir` made, removed when the test process exits (whoever forgot to). */
const made: string[] = [];
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed at the latest when the test process exits. */
export function tempDir(prefix = 'dm-registry-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function testServer(
  options: Partial<CreateAppDeps> & { githubApiUrl?: string; githubToken?: string } = {},
): TestServer {
  const dir = tempDir();
  const store = openStore(join(dir, 'registry.db'));
  return serverOver(store, dir, options);
}

/** The real app over an opened store; `close()` stops it, closes the store and removes `dir`. */
function serverOver<S extends Store | PostgresStore>(
  store: S,
  dir: string,
  options: Partial<CreateAppDeps> & { githubApiUrl?: string; githubToken?: string },
): RegistryApp & { dir: string; store: S; close(): Promise<void> } {
  const { githubApiUrl, githubToken, ...rest } = options;
  const server = createApp({
    store,
    sources: defaultSourceFactory({ githubApiUrl, githubToken, gitCacheDir: join(dir, 'git') }),
    secretKey: randomBytes(32),
    adminTokens: [ADMIN_TOKEN],
    logger: silentLogger,
    accessLog: false,
    ...rest,
  });
  return {
    ...server,
    dir,
    store,
    async close() {
      await server.service.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

export type Dialect = 'sqlite' | 'postgres';

/** The databases the dialect-parameterised suites run against: PostgreSQL where it is installed. */
export const DIALECTS: readonly Dialect[] = postgresBinaries() ? ['sqlite', 'postgres'] : ['sqlite'];
if (!DIALECTS.includes('postgres')) {
  process.stderr.write(
    'note: PostgreSQL (initdb, pg_ctl) is not installed: the server tests run on SQLite only\n',
  );
}

export interface DialectTestServer extends RegistryApp {
  dir: string;
  store: Store | PostgresStore;
  close(): Promise<void>;
}

let cluster: Promise<PostgresCluster> | undefined;
let databases = 0;

/** A test server on `dialect`: SQLite as testServer(), or a new database of this process's cluster. */
export async function testServerOn(
  dialect: Dialect,
  options: Partial<CreateAppDeps> & { githubApiUrl?: string; githubToken?: string } = {},
): Promise<DialectTestServer> {
  if (dialect === 'sqlite') return testServer(options);
  return serverOver(await openPostgresStore(await postgresDatabase(), { max: 8 }), tempDir(), options);
}

/** A test server over the PostgreSQL database at `url` (a cluster the caller started, any locale). */
export async function testServerAt(
  url: string,
  options: Partial<CreateAppDeps> & { githubApiUrl?: string; githubToken?: string } = {},
): Promise<DialectTestServer> {
  return serverOver(await openPostgresStore(url, { max: 8 }), tempDir(), options);
}

/**
 * The `--db` of a dm-registry process on `dialect`: `file:<dir>/r.db`, or a new database of this
 * test process's cluster (one `--db` for the server and the commands run beside it).
 */
export async function databaseOn(dialect: Dialect, dir: string): Promise<string> {
  return dialect === 'sqlite' ? `file:${join(dir, 'r.db')}` : postgresDatabase();
}

/** Opens the store a `--db` names (a `postgres://` URL, else an SQLite file), migrations applied. */
export async function openDatabase(db: string): Promise<Store | PostgresStore> {
  if (/^postgres(ql)?:\/\//.test(db)) return openPostgresStore(db, { max: 8 });
  return openStore(db.replace(/^file:/, ''));
}

/** The URL of a new, empty database on this test process's private PostgreSQL cluster. */
export async function postgresDatabase(): Promise<string> {
  // One cluster per test process, stopped when it exits (test/support/postgres.ts).
  cluster ??= startPostgres();
  return (await cluster).createDatabase(`t${process.pid}_${++databases}`);
}

/**
 * The sync lease of the kill tests' child processes on PostgreSQL (docs/server.md, "Several
 * replicas"): short, so that the restarted server may take over the killed child's registry soon.
 */
export const CHILD_LEASE_TTL_MS = 1000;

/**
 * Runs `node script ...args` until it prints `marker`, then kills it with SIGKILL; rejects when
 * it prints `finished` instead (it should have been killed first) or exits on its own.
 */
export async function killAt(script: string, args: readonly string[], marker: string): Promise<void> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const closed = new Promise((r) => child.on('close', r));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(marker)) {
        child.kill('SIGKILL');
        resolve();
      }
      if (out.includes('finished'))
        reject(new Error(`the child finished; it should have been killed: ${out}`));
    });
    child.on('exit', () => resolve());
  });
  await closed;
  if (child.signalCode !== 'SIGKILL') throw new Error(`the child exited ${child.exitCode} before ${marker}`);
}

/**
 * On PostgreSQL, waits (bounded: 200 × 50 ms) until no live replica holds a sync lease: the one
 * of a killed process has expired, so a server started now marks its sync interrupted.
 */
export async function leasesExpired(store: Store | PostgresStore): Promise<void> {
  if (!isPostgres(store)) return;
  for (let i = 0; i < 200; i++) {
    const { rows } = await store.pool.query(
      `SELECT count(*)::int AS n FROM sync_leases WHERE expires_at >= (extract(epoch from clock_timestamp()) * 1000)::bigint`,
    );
    if ((rows[0] as { n: number }).n === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('a sync lease is still held');
}

/** A registry service over a `--db` (`openDatabase`), its own files in `dir`; `close()` ends both. */
export async function serviceOn(
  db: string,
  dir: string,
): Promise<{ store: Store | PostgresStore; service: RegistryService; close(): Promise<void> }> {
  const store = await openDatabase(db);
  const service = new RegistryService({
    store,
    sources: defaultSourceFactory({ gitCacheDir: join(dir, 'git') }),
    secretKey: randomBytes(32),
    syncLeaseTtlMs: CHILD_LEASE_TTL_MS,
    log: (level, message, fields) => silentLogger.log(level, message, fields),
  });
  return {
    store,
    service,
    async close() {
      await service.stop();
      await store.close();
    },
  };
}

/**
 * The set-up of the kill tests: a copy of registry-fixtures to edit, a database on `dialect` with
 * that copy indexed as registry 1 `github.com/acme/templates` (its row and redis:v1.1 as `before`),
 * and `open()` for this process's service over it (again after the child was killed: a restart).
 */
export async function killTestRegistry(dialect: Dialect) {
  const dir = tempDir();
  const registryDir = join(dir, 'registry');
  cpSync(FIXTURES, registryDir, { recursive: true });
  mkdirSync(join(dir, 'data'));
  const db = await databaseOn(dialect, join(dir, 'data'));
  const first = await serviceOn(db, dir);
  const row = await first.service.add({ source: registryDir, name: 'github.com/acme/templates' });
  const outcome = await first.service.sync(row.id, 'manual');
  if (row.id !== 1 || outcome.status !== 'succeeded') throw new Error(`the first sync ${outcome.status}`);
  const before = await first.service.catalog.resolve('github.com/acme/templates/redis:v1.1', ADMIN_ACCESS);
  const registry = await first.service.find(1, ADMIN_ACCESS);
  await first.close();
  return {
    dir,
    registryDir,
    db,
    before,
    registry,
    open: () => serviceOn(db, dir),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

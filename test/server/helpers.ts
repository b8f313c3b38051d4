/**
 * Shared set-up for the server tests: a real temporary SQLite file with the migrations of
 * migrations/ applied (or, `testServerOn('postgres')`, a fresh database on this test process's
 * private PostgreSQL cluster, test/support/postgres.ts), the real app over it, and the real sources.
 * `DIALECTS` is the database parameter of the suites that run against both (docs/server.md,
 * "Tests and measurements").
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CreateAppDeps, createApp, type RegistryApp } from '../../server/src/api/app.js';
import { silentLogger } from '../../server/src/log.js';
import { defaultSourceFactory } from '../../server/src/service.js';
import { openStore, type Store } from '../../server/src/store/db.js';
import { openPostgresStore, type PostgresStore } from '../../server/src/store/postgres.js';
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

/** The URL of a new, empty database on this test process's private PostgreSQL cluster. */
export async function postgresDatabase(): Promise<string> {
  // One cluster per test process, stopped when it exits (test/support/postgres.ts).
  cluster ??= startPostgres();
  return (await cluster).createDatabase(`t${process.pid}_${++databases}`);
}

/**
 * The database a mirror test's dm-registry process runs on: SQLite (its own file, the default of
 * test/support/registry-server.ts) or a new database of this test process's private PostgreSQL
 * cluster (test/support/postgres.ts, stopped when the process exits). `DIALECTS` lists PostgreSQL
 * where it is installed.
 */
import { type PostgresCluster, startPostgres } from '../support/postgres.js';

export { DIALECTS, type Dialect } from '../server/helpers.js';

let cluster: Promise<PostgresCluster> | undefined;
let databases = 0;

/** A new empty PostgreSQL database of this process's cluster. */
export async function postgresDatabase(): Promise<string> {
  cluster ??= startPostgres();
  return (await cluster).createDatabase(`mirror${process.pid}_${++databases}`);
}

/** The `--db` arguments of a dm-registry process on `dialect` (none: its own SQLite file). */
export async function dbArgs(dialect: 'sqlite' | 'postgres'): Promise<string[]> {
  return dialect === 'sqlite' ? [] : ['--db', await postgresDatabase()];
}

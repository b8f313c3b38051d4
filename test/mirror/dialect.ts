/**
 * The database a mirror test's dm-registry process runs on: SQLite (its own file, the default of
 * test/support/registry-server.ts) or a new database of this test process's private PostgreSQL
 * cluster (the one cluster of test/server/helpers.ts, stopped when the process exits). `DIALECTS`
 * lists PostgreSQL where it is installed.
 */
import { postgresDatabase } from '../server/helpers.js';

export { DIALECTS, type Dialect, postgresDatabase } from '../server/helpers.js';

/** The `--db` arguments of a dm-registry process on `dialect` (none: its own SQLite file). */
export async function dbArgs(dialect: 'sqlite' | 'postgres'): Promise<string[]> {
  return dialect === 'sqlite' ? [] : ['--db', await postgresDatabase()];
}

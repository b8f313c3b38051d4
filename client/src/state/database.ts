/**
 * The local deployments database (spec/deployments.md §2): SQLite via better-sqlite3 with WAL and a
 * busy timeout (two `dm deploy` processes may write at once), drizzle over it, and the migrations of
 * `migrations/client/` applied at open.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { DmError } from '../error.js';
import * as schema from './schema.js';

export type StateDb = BetterSQLite3Database<typeof schema>;

export interface StateDatabase {
  db: StateDb;
  sqlite: Database.Database;
  file: string;
  close(): void;
}

/** The database file under the XDG state directory. */
export function stateDatabaseFile(stateDir: string): string {
  return join(stateDir, 'deployments.db');
}

/** `migrations/client/`, found upwards from this module (src or dist). */
export function findClientMigrations(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'migrations', 'client');
    if (existsSync(join(candidate, 'meta', '_journal.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir)
      throw new DmError('MIGRATIONS_NOT_FOUND', 'cannot find the migrations/client/ folder');
    dir = parent;
  }
}

export function openStateDatabase(file: string): StateDatabase {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file);
  } catch (error) {
    throw new DmError(
      'STATE_UNREADABLE',
      `cannot open the deployments database ${file}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  const db = drizzle(sqlite, { schema });
  // Two processes opening a fresh database at once may race to migrate: the loser retries once
  // and then finds the migrations applied.
  try {
    migrate(db, { migrationsFolder: findClientMigrations() });
  } catch (error) {
    if (!/already exists/.test((error as Error).message)) throw error;
    migrate(db, { migrationsFolder: findClientMigrations() });
  }
  return { db, sqlite, file, close: () => sqlite.close() };
}

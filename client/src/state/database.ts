/**
 * The local deployments database (docs/deployments.md "State"): SQLite via better-sqlite3 with WAL and a
 * busy timeout (two `dm deploy` processes may write at once), drizzle over it, and the migrations of
 * `migrations/client/` applied at open.
 */
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import * as schema from './schema.js';
import { findMigrationsFolder, openSqliteFile } from './sqlite.js';

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
  return findMigrationsFolder(import.meta.url, 'migrations', 'client');
}

export function openStateDatabase(file: string): StateDatabase {
  const sqlite = openSqliteFile(file, {
    description: 'the deployments database',
    code: 'STATE_UNREADABLE',
    busyTimeoutMs: 10_000,
  });
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

/**
 * The local deployments database (docs/deployments.md "State"): SQLite via better-sqlite3 with WAL and a
 * busy timeout (two `dm deploy` processes may write at once), drizzle over it, and the migrations of
 * `migrations/client/` applied at open.
 *
 * The stores (deployments-store.ts, operations-store.ts) see a `StateDatabase`: a drizzle handle, the
 * tables, and an asynchronous transaction. The same store code runs over this SQLite file and over
 * the registry server's PostgreSQL (database-pg.ts, docs/manager.md "Several replicas"): drizzle's
 * query builders are awaited on both, so one implementation holds the semantics.
 */
import { join } from 'node:path';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import * as schema from './schema.js';
import { findMigrationsFolder, openSqliteFile } from './sqlite.js';

export type StateDb = BetterSQLite3Database<typeof schema>;

export type StateTables = typeof schema;

export interface StateDatabase {
  dialect: 'sqlite' | 'postgres';
  /**
   * The drizzle handle, typed as SQLite's: on PostgreSQL it is node-postgres's over the tables of
   * schema-pg.ts (same names and columns). Store code only awaits query builders (no `.get()`,
   * `.all()` or `.run()`, which exist on SQLite only).
   */
  db: StateDb;
  tables: StateTables;
  /** Runs `fn` in one transaction (SQLite: `BEGIN IMMEDIATE`, one at a time in this process). */
  transaction<T>(fn: (db: StateDb) => Promise<T>): Promise<T>;
  /** Where it is, for messages. */
  file: string;
  close(): Promise<void>;
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
  // better-sqlite3 answers at once, so a transaction's awaits are only microtasks; still, another
  // task of this process must not put statements into it: transactions queue on one chain.
  let chain: Promise<unknown> = Promise.resolve();
  const transaction = <T>(fn: (db: StateDb) => Promise<T>): Promise<T> => {
    const run = chain.then(async () => {
      sqlite.exec('BEGIN IMMEDIATE');
      try {
        const out = await fn(db);
        sqlite.exec('COMMIT');
        return out;
      } catch (error) {
        if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
        throw error;
      }
    });
    chain = run.catch(() => {});
    return run;
  };
  return {
    dialect: 'sqlite',
    db,
    tables: schema,
    transaction,
    file,
    close: async () => {
      await chain;
      sqlite.close();
    },
  };
}

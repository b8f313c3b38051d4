// SQLite only: opening a better-sqlite3 file (WAL, busy timeout) and applying migrations/sqlite/.
/**
 * Opening the embedded database (docs/server.md "Store"): better-sqlite3 with WAL, foreign keys and
 * a busy timeout, drizzle over it, and the migrations of `migrations/sqlite/` applied at open.
 * PostgreSQL has its own opener (postgres/open.ts); open-store.ts chooses between them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import {
  findMigrationsFolder as findPackageMigrations,
  openSqliteFile,
} from '../../../../client/src/state/index.js';
import * as schema from './schema.js';

export type Db = BetterSQLite3Database<typeof schema>;

export interface Store {
  db: Db;
  sqlite: Database.Database;
  file: string;
  close(): void;
  /** Runs `hook` when the store is closed, before its connection (the swap worker: sqlite/swap-index-thread.ts). */
  onClose(hook: () => void): void;
}

export interface OpenStoreOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Where the migrations are; default: `migrations/sqlite/`, found upwards from this module. */
  migrationsFolder?: string;
}

/** The `migrations/sqlite/` folder of the package, found upwards from this module (src or dist). */
export function findMigrationsFolder(): string {
  return findPackageMigrations(import.meta.url, 'migrations', 'sqlite');
}

/** Opens (creating if needed) a SQLite database file and applies the migrations. */
export function openStore(file: string, options: OpenStoreOptions = {}): Store {
  const sqlite = openSqliteFile(file, {
    description: 'the database',
    code: 'DATABASE_UNREACHABLE',
    category: 'unreachable',
    busyTimeoutMs: 5000,
    foreignKeys: true,
  });
  const db = drizzle(sqlite, { schema });
  if (options.migrate !== false) {
    migrate(db, { migrationsFolder: options.migrationsFolder ?? findMigrationsFolder() });
  }
  const closing: (() => void)[] = [];
  return {
    db,
    sqlite,
    file,
    close: () => {
      for (const hook of closing.splice(0)) hook();
      sqlite.close();
    },
    onClose: (hook) => {
      closing.push(hook);
    },
  };
}

/** Whether every migration of the folder has been applied (for /readyz). */
export function migrationsApplied(store: Store, migrationsFolder = findMigrationsFolder()): boolean {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  const row = store.sqlite.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number };
  return row.n >= journal.entries.length;
}

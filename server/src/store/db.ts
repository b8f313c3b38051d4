/**
 * Opening the embedded database (spec/server.md §1-§2): better-sqlite3 with WAL, foreign keys and
 * a busy timeout, drizzle over it, and the migrations of `migrations/` applied at open.
 * PostgreSQL (§6) will get its own opener returning the same `Store` shape.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { DmError } from '../../../client/src/error.js';
import * as schema from './schema.js';

export type Db = BetterSQLite3Database<typeof schema>;

export interface Store {
  db: Db;
  sqlite: Database.Database;
  file: string;
  close(): void;
}

export interface OpenStoreOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Where `migrations/` is; default: found upwards from this module. */
  migrationsFolder?: string;
}

/** The `migrations/` folder of the package, found upwards from this module (src or dist). */
export function findMigrationsFolder(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'migrations');
    if (existsSync(join(candidate, 'meta', '_journal.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new DmError('MIGRATIONS_NOT_FOUND', 'cannot find the migrations/ folder');
    dir = parent;
  }
}

/** Opens (creating if needed) a SQLite database file and applies the migrations. */
export function openStore(file: string, options: OpenStoreOptions = {}): Store {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file);
  } catch (error) {
    throw new DmError(
      'DATABASE_UNREACHABLE',
      `cannot open the database ${file}: ${(error as Error).message}`,
      {
        category: 'unreachable',
        cause: error,
      },
    );
  }
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  const db = drizzle(sqlite, { schema });
  if (options.migrate !== false) {
    migrate(db, { migrationsFolder: options.migrationsFolder ?? findMigrationsFolder() });
  }
  return { db, sqlite, file, close: () => sqlite.close() };
}

/** Whether every migration of the folder has been applied (for /readyz). */
export function migrationsApplied(store: Store, migrationsFolder = findMigrationsFolder()): boolean {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  const row = store.sqlite.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number };
  return row.n >= journal.entries.length;
}

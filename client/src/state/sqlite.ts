/**
 * Opening an embedded SQLite database, the one way both the client's deployments database and
 * the registry server's store do it: the file's directory created, WAL, a busy timeout (several
 * processes may write), synchronous=NORMAL, optional foreign keys, and a DmError naming the file
 * when it cannot be opened. Migrations folders (drizzle-kit's output) are found upwards from the
 * calling module, so the same code works from src/ and from dist/.
 */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { DmError, type ErrorCategory, type ErrorCode } from '../error.js';

export interface OpenSqliteOptions {
  /** What the database is, for the error message ("the deployments database"). */
  description: string;
  /** The DmError code when it cannot be opened. */
  code: ErrorCode;
  /** Only where the code allows several categories (docs/errors.md); the code's own otherwise. */
  category?: ErrorCategory;
  busyTimeoutMs: number;
  foreignKeys?: boolean;
}

export function openSqliteFile(file: string, options: OpenSqliteOptions): Database.Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  let sqlite: Database.Database;
  try {
    // A new database is readable by its owner only (it holds token hashes and encrypted
    // credentials); SQLite gives its -wal and -shm files the database file's mode.
    if (file !== ':memory:' && !existsSync(file)) closeSync(openSync(file, 'wx', 0o600));
    sqlite = new Database(file);
  } catch (error) {
    throw new DmError(
      options.code,
      `cannot open ${options.description} ${file}: ${(error as Error).message}`,
      {
        ...(options.category ? { category: options.category } : {}),
        cause: error,
      },
    );
  }
  sqlite.pragma('journal_mode = WAL');
  if (options.foreignKeys) sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${Math.floor(options.busyTimeoutMs)}`);
  sqlite.pragma('synchronous = NORMAL');
  return sqlite;
}

/**
 * A drizzle-kit migrations folder of this package (`migrations`, `migrations/client`), found by
 * walking up from `fromModule` (an `import.meta.url`) to the directory that holds it.
 */
export function findMigrationsFolder(fromModule: string, ...segments: string[]): string {
  let dir = dirname(fileURLToPath(fromModule));
  for (;;) {
    const candidate = join(dir, ...segments);
    if (existsSync(join(candidate, 'meta', '_journal.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) {
      throw new DmError('MIGRATIONS_NOT_FOUND', `cannot find the ${segments.join('/')}/ folder`);
    }
    dir = parent;
  }
}

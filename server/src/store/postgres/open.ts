// PostgreSQL only: opening a `pg` pool, applying migrations/postgres/ under an advisory lock, and the transaction helper.
/**
 * Opening the PostgreSQL store (docs/server.md, "Store"): a `pg` pool, drizzle's node-postgres
 * driver over it (postgres/schema.ts), and the migrations of `migrations/postgres/` applied at open.
 *
 * Migrations are applied in one transaction that first takes a transaction-scoped advisory lock
 * (`pg_advisory_xact_lock`), so replicas starting together apply them once and the others wait and
 * find nothing left to do; no session-level lock is ever taken (they break behind PgBouncer in
 * transaction mode). The bookkeeping is drizzle's own (`drizzle.__drizzle_migrations`: hash and
 * folder time per migration), so drizzle-kit's tooling reads the same history.
 */
import { type MigrationMeta, readMigrationFiles } from 'drizzle-orm/migrator';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { DmError } from '../../../../client/src/error.js';
import { findMigrationsFolder as findPackageMigrations } from '../../../../client/src/state/index.js';
import * as schema from './schema.js';

export type PgDb = NodePgDatabase<typeof schema>;

export interface PostgresStore {
  dialect: 'postgres';
  db: PgDb;
  pool: pg.Pool;
  /** The URL without its password, for logs and messages. */
  displayUrl: string;
  close(): Promise<void>;
}

export interface OpenPostgresOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  migrationsFolder?: string;
  /** Pool size (default 10). */
  max?: number;
  /**
   * Longest wait for a connection, ms: for a free one of the pool, or for a new
   * one to be established (default 3,000). Beyond it the request fails with 503 DATABASE_UNAVAILABLE instead of
   * waiting on a database that is restarting or hangs (docs/server.md, "Store").
   */
  acquireTimeoutMs?: number;
}

/** The default bound on waiting for a connection, ms. */
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 3_000;

/** Any key: the one lock every migrating replica queues on ("dm-registry migrations"). */
const MIGRATION_LOCK = 0x646d_6d69;

/** `postgres://user:secret@host/db` → `postgres://user@host/db`. */
export function displayUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/i, '$1@');
}

/** The `migrations/postgres/` folder of the package, found upwards from this module. */
export function findPostgresMigrations(): string {
  return findPackageMigrations(import.meta.url, 'migrations', 'postgres');
}

function unreachable(url: string, error: unknown): DmError {
  const reason = error instanceof Error ? error.message : String(error);
  return new DmError('DATABASE_UNREACHABLE', `cannot reach the database ${displayUrl(url)}: ${reason}`, {
    category: 'unreachable',
  });
}

/** Opens a pool on `url`, checks it answers, and applies the migrations. */
export async function openPostgresStore(
  url: string,
  options: OpenPostgresOptions = {},
): Promise<PostgresStore> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS,
    // Connections a restarted or vanished database host left half-open are found and dropped.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client losing its server must not take the process down; the next query reports it.
  pool.on('error', () => {});
  try {
    await pool.query('SELECT 1');
    if (options.migrate !== false) await migratePostgres(pool, options.migrationsFolder);
  } catch (error) {
    await pool.end().catch(() => {});
    if (error instanceof DmError) throw error;
    throw unreachable(url, error);
  }
  return {
    dialect: 'postgres',
    db: drizzle(pool, { schema }),
    pool,
    displayUrl: displayUrl(url),
    close: () => pool.end(),
  };
}

function pending(
  applied: { created_at: string | number } | undefined,
  all: MigrationMeta[],
): MigrationMeta[] {
  const last = applied === undefined ? -1 : Number(applied.created_at);
  return all.filter((m) => m.folderMillis > last);
}

/**
 * Runs `work` in one transaction on a client of the pool: COMMIT when it settles, ROLLBACK when it
 * throws (the error goes on), the client released either way. Every multi-statement write on
 * PostgreSQL goes through here (nothing session-level outlives it: PgBouncer-safe).
 */
export async function pgTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  } finally {
    client.release();
  }
}

/** Applies the pending migrations in one transaction under the migration lock; answers how many. */
export async function migratePostgres(pool: pg.Pool, folder = findPostgresMigrations()): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder: folder });
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query('CREATE SCHEMA IF NOT EXISTS drizzle');
      await client.query(
        'CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)',
      );
      const last = await client.query<{ created_at: string }>(
        'SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1',
      );
      const todo = pending(last.rows[0], migrations);
      for (const m of todo) {
        for (const statement of m.sql) {
          if (statement.trim() !== '') await client.query(statement);
        }
        await client.query('INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)', [
          m.hash,
          m.folderMillis,
        ]);
      }
      await client.query('COMMIT');
      return todo.length;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  } finally {
    client.release();
  }
}

/** Whether every migration of the folder has been applied (for /readyz). */
export async function postgresMigrationsApplied(
  store: PostgresStore,
  folder = findPostgresMigrations(),
): Promise<boolean> {
  const migrations = readMigrationFiles({ migrationsFolder: folder });
  try {
    const last = await store.pool.query<{ created_at: string }>(
      'SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1',
    );
    return pending(last.rows[0], migrations).length === 0;
  } catch {
    return false;
  }
}

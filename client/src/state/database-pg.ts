/**
 * The deployments database on the registry server's PostgreSQL (docs/manager.md, "Several
 * replicas"): drizzle's node-postgres driver over the server's pool and the tables of
 * schema-pg.ts, whose migration is the server's own (migrations/postgres/). The stores run on it
 * unchanged (database.ts).
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import type { StateDatabase, StateDb, StateTables } from './database.js';
import * as schemaPg from './schema-pg.js';

/** The state over `pool` (opened and migrated by the server); closing it leaves the pool open. */
export function postgresStateDatabase(pool: pg.Pool, displayUrl: string): StateDatabase {
  const db = drizzle(pool, { schema: schemaPg });
  // The same tables and columns as schema.ts; drizzle builds each dialect's SQL from the table objects.
  const asState = (d: unknown) => d as StateDb;
  return {
    dialect: 'postgres',
    db: asState(db),
    tables: schemaPg as unknown as StateTables,
    transaction: (fn) => db.transaction((tx) => fn(asState(tx))),
    file: displayUrl,
    close: async () => {},
  };
}

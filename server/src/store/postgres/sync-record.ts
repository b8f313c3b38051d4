// PostgreSQL only: a sync's outcome written on a given pool client, inside the swap's transaction or alone.
/**
 * PostgreSQL-specific: a sync's outcome written on a given connection (docs/server.md, "Store"),
 * by the service store outside a swap and by the index swap inside its transaction
 * (postgres/swap-index.ts), so both write the same rows. SQLite's twin is in sqlite/swap-index.ts.
 */
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import type { PgDb } from './open.js';
import * as schema from './schema.js';
import { registries, syncs } from './schema.js';

/** A sync's history values and a registry's sync state, in this schema's terms (contract.ts's). */
type SyncValues = Partial<typeof syncs.$inferInsert>;
type RegistrySyncState = Partial<typeof registries.$inferInsert>;

/** A sync's outcome, written with the swap that ends it (SwapRecord in contract.ts). */
export interface SyncOutcome {
  syncId: number;
  registryId: number;
  sync: SyncValues;
  state: RegistrySyncState;
  keep: number;
}

/** Ends a sync's history row; the history keeps the last `keep` syncs of each registry. */
export async function finishSyncPg(
  on: { db: PgDb; client: pg.PoolClient | pg.Pool },
  syncId: number,
  registryId: number,
  values: SyncValues,
  keep: number,
): Promise<void> {
  await on.db.update(syncs).set(values).where(eq(syncs.id, syncId));
  await on.client.query(
    `DELETE FROM syncs WHERE registry_id = $1 AND id NOT IN
       (SELECT id FROM syncs WHERE registry_id = $1 ORDER BY id DESC LIMIT $2)`,
    [registryId, keep],
  );
}

/** A registry's sync state (status, error, time). */
export async function setSyncStatePg(db: PgDb, registryId: number, state: RegistrySyncState): Promise<void> {
  await db.update(registries).set(state).where(eq(registries.id, registryId));
}

/** The sync's outcome (SwapMeta.record, data as on SQLite), written on the swap's connection. */
export async function recordSwapPg(client: pg.PoolClient, record: SyncOutcome): Promise<void> {
  const db = drizzle(client, { schema });
  await finishSyncPg({ db, client }, record.syncId, record.registryId, record.sync, record.keep);
  await setSyncStatePg(db, record.registryId, record.state);
}

/**
 * The one place a dialect is chosen (docs/server.md "The store"): `--db` names an SQLite file or a
 * PostgreSQL URL (commands/target.ts reads it); this module opens it and builds the one
 * ServiceStore (contract.ts) of the opened database, and the few things that exist on one dialect
 * only (leases between replicas, the pool the manager shares). Nothing else in the server looks at
 * which database it runs on.
 */

import type pg from 'pg';
import type { RegistryLeases, ServiceStore } from './contract.js';
import type { PostgresStore } from './postgres/open.js';
import { postgresServiceStore } from './postgres/service-store.js';
import { SyncLeases } from './postgres/sync-lease.js';
import type { Store } from './sqlite/open.js';
import { sqliteServiceStore } from './sqlite/service-store.js';

/** An opened store of either dialect (sqlite/open.ts, postgres/open.ts). */
export type StoreHandle = Store | PostgresStore;

/** Where the store is: an SQLite file or a PostgreSQL URL (commands/target.ts `databaseTarget`). */
export type StoreLocation = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

export function isPostgres(store: StoreHandle): store is PostgresStore {
  return 'pool' in store;
}

const instances = new WeakMap<StoreHandle, ServiceStore>();

/** The one ServiceStore of an opened store (its statements prepared once). */
export function serviceStoreOf(store: StoreHandle): ServiceStore {
  let found = instances.get(store);
  if (!found) {
    found = isPostgres(store) ? postgresServiceStore(store) : sqliteServiceStore(store);
    instances.set(store, found);
  }
  return found;
}

/**
 * Sync leases across replicas (postgres/sync-lease.ts) for a store other processes share;
 * undefined on SQLite, where one process owns the file (docs/server.md "Several replicas").
 */
export function registryLeasesOf(
  store: StoreHandle,
  replica: string,
  options: { ttlMs: number },
): RegistryLeases | undefined {
  return isPostgres(store) ? new SyncLeases(store, replica, options) : undefined;
}

/**
 * The PostgreSQL pool the Deployment Manager shares with the store (its state and deployment
 * leases; docs/manager.md "Several replicas"); undefined on SQLite, where it keeps its own file.
 */
export function sharedPool(store: StoreHandle): { pool: pg.Pool; displayUrl: string } | undefined {
  return isPostgres(store) ? { pool: store.pool, displayUrl: store.displayUrl } : undefined;
}

/** An opened store: its handle, how to name it in messages (no password), and how to close it. */
export interface OpenedStore {
  store: StoreHandle;
  display: string;
  close(): Promise<void>;
}

/** Opens the store at `at` with its migrations applied (`max`: the PostgreSQL pool's size). */
export async function openStoreAt(at: StoreLocation, options: { max?: number } = {}): Promise<OpenedStore> {
  if (at.kind === 'postgres') {
    const { openPostgresStore } = await import('./postgres/open.js');
    const store = await openPostgresStore(at.url, options.max === undefined ? {} : { max: options.max });
    return { store, display: store.displayUrl, close: () => store.close() };
  }
  const { openStore } = await import('./sqlite/open.js');
  const store = openStore(at.file);
  return { store, display: at.file, close: async () => store.close() };
}

/**
 * What the registry service's parts share (service.ts builds it once): the store's queries, the
 * catalog, the clock and the log.
 */
import type { ChecksumsOptions } from '../checksums.js';
import type { IndexBuildPool } from '../indexer/build-index-pool.js';
import type { SyncOutcome } from '../indexer/sync-registry.js';
import type { Mirror } from '../mirror/mirror.js';
import type { StoreTarget } from '../mirror/store-target.js';
import type { Catalog } from '../resolve/catalog.js';
import type { QuarantineEvent, ServiceStore } from '../store/contract.js';
import type { StoreHandle } from '../store/open-store.js';
import type { SourceFactory } from './sources.js';

export interface ServiceDeps {
  /** The opened store, SQLite (store/sqlite/open.ts) or PostgreSQL (store/postgres/open.ts). */
  store: StoreHandle;
  sources: SourceFactory;
  secretKey: Buffer;
  clock?: () => number;
  adminTokens?: readonly string[];
  defaultRegistry?: string | undefined;
  githubHosts?: readonly string[];
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  /** How long a sync lease lasts without a heartbeat, ms (PostgreSQL; default 15 s). */
  syncLeaseTtlMs?: number;
  /** Overall deadline of one sync, ms (default SYNC_DEADLINE_MS, 10 min). */
  syncDeadlineMs?: number;
  /** The worker threads that build indexes (default: the process's shared pool). */
  indexPool?: IndexBuildPool;
  /**
   * Called after each sync (metrics), with the registry's name, or PRIVATE_LABEL for a private
   * registry (and one gone before its sync): metrics are public and never name private registries.
   */
  onSync?: (registry: string, outcome: SyncOutcome) => void;
  /** The checksum log's key, quarantine notifications and metric (docs/integrity-store.md). */
  checksums?: ChecksumsOptions;
  /** Builds the pull-through mirror, when `--upstream` is given (docs/mirroring.md). */
  mirror?: MirrorFactory | undefined;
}

/** The `registry` metrics label of every private registry. */
export const PRIVATE_LABEL = '(private)';

export type ServiceLog = (
  level: 'info' | 'warn' | 'error',
  message: string,
  fields?: Record<string, unknown>,
) => void;

/** What every part of the service reads: built once by RegistryService. */
export interface ServiceContext {
  readonly deps: ServiceDeps;
  /** The store's queries (store/contract.ts). */
  readonly data: ServiceStore;
  readonly catalog: Catalog;
  readonly clock: () => number;
  readonly log: ServiceLog;
}

/** A part of the service: what it shares with the others, from the context. */
export abstract class ServicePart {
  protected readonly data: ServiceStore;
  protected readonly catalog: Catalog;
  protected readonly clock: () => number;
  protected readonly deps: ServiceDeps;
  protected readonly log: ServiceLog;

  constructor(ctx: ServiceContext) {
    this.data = ctx.data;
    this.catalog = ctx.catalog;
    this.clock = ctx.clock;
    this.deps = ctx.deps;
    this.log = ctx.log;
  }
}

/** What the service gives the mirror it builds (the composition root's factory, api/app.ts). */
export interface MirrorHooks {
  /** The store's queries a mirror writes through. */
  data: ServiceStore;
  catalog: Catalog;
  /** Quarantines the mirror finds, announced like a sync's. */
  quarantined(events: readonly QuarantineEvent[]): void;
  /** Revalidates what the mirror holds of a registry it only pulls through (never throws). */
  revalidateHeld(name: string): void;
}

/** Builds the pull-through mirror and its store side, given what it needs of the service. */
export type MirrorFactory = (hooks: MirrorHooks) => { mirror: Mirror; target: StoreTarget };

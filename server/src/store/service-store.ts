/**
 * The store as the service, the catalog, the token book and the indexer use it (docs/server.md,
 * "Store"): one asynchronous interface, small query groups per concern, with a SQLite
 * implementation (service-store-sqlite.ts, better-sqlite3's prepared statements, answering at once)
 * and a PostgreSQL one (service-store-pg.ts, the `pg` pool). The store owns its row types. Reads of
 * the API and the pages are reads.ts / reads-pg.ts (`reads`).
 */
import type { LogSigner } from '../../../client/src/integrity/index.js';
import type { BuiltIndex, KnownContent, PreviousVersion } from '../indexer/build-index.js';
import type {
  AddedGroup,
  AddVersionsResult,
  BundleVersionRow,
  ExportedTemplate,
  VersionKey,
} from './add-versions.js';
import type { Store } from './db.js';
import type { QuarantineEvent } from './first-seen.js';
import type { PostgresStore } from './postgres.js';
import type { Accepted, AcceptInput, OpenQuarantineCount } from './quarantine.js';
import type { FindingRow, ReadStore } from './reads.js';
import type { registries, syncs } from './schema.js';
import { postgresServiceStore } from './service-store-pg.js';
import { sqliteServiceStore } from './service-store-sqlite.js';
import type { SwapMeta, SwapResult } from './swap-index.js';
import type { TokenRow } from './tokens.js';

/** An opened store of either dialect (db.ts, postgres.ts). */
export type StoreHandle = Store | PostgresStore;

export function isPostgres(store: StoreHandle): store is PostgresStore {
  return 'pool' in store;
}

export type RegistryRow = typeof registries.$inferSelect;
export type NewRegistry = Omit<typeof registries.$inferInsert, 'id'>;
export type SyncValues = Partial<typeof syncs.$inferInsert>;

/** What a registry's row says about its last sync (`lastSync*`, and what the sync learnt). */
export interface RegistrySyncState {
  lastSyncAt?: number | null;
  lastSyncStatus: string;
  lastSyncError?: string | null;
  etag?: string | null;
  commit?: string;
}

export interface RegistryQueries {
  /** Every registry, by name. */
  list(): Promise<RegistryRow[]>;
  byId(id: number): Promise<RegistryRow | undefined>;
  byName(name: string): Promise<RegistryRow | undefined>;
  insert(values: NewRegistry): Promise<RegistryRow>;
  /** Points a registry at another source, and sets its interval when given (forgets its ETag). */
  updateSource(
    id: number,
    source: Pick<RegistryRow, 'sourceType' | 'source' | 'branch' | 'path'> &
      Partial<Pick<RegistryRow, 'intervalSeconds'>>,
  ): Promise<RegistryRow | undefined>;
  /** Deletes a registry (its index with it) and the content nothing references any more. */
  delete(id: number): Promise<RegistryRow | undefined>;
  /** How many of a registry's versions its upstream no longer serves (docs/mirroring.md). */
  removedUpstreamCount(id: number): Promise<number>;
  /** The findings of a registry's last sync, by path and code. */
  findings(id: number): Promise<FindingRow[]>;
  /**
   * Every registry's id and generation (bumped by every index swap or added version): what the
   * generation watch reads on a timer (generation-watch.ts). One small query, never per request.
   */
  generations(): Promise<RegistryGeneration[]>;
}

/** A registry's id and the generation of its index. */
export interface RegistryGeneration {
  id: number;
  generation: number;
}

export interface CredentialQueries {
  /** The encrypted secret of a credential, or undefined. */
  secret(name: string): Promise<string | undefined>;
  upsert(name: string, kind: string, secret: string, now: number): Promise<void>;
}

export interface TokenQueries {
  all(): Promise<TokenRow[]>;
  /** Changes with every creation and revocation (count, largest id, sum of ids). */
  fingerprint(): Promise<string>;
  insert(values: Omit<TokenRow, 'id' | 'lastUsedAt'>): Promise<number>;
  delete(by: { id: number } | { hash: string }): Promise<boolean>;
  /** Records when tokens were last used (ids → epoch ms). */
  recordUsed(used: ReadonlyMap<number, number>): Promise<void>;
}

export interface SyncQueries {
  /** Marks syncs left `running` by a stopped process as `interrupted`; answers how many. */
  recoverInterrupted(now: number): Promise<number>;
  /**
   * Marks a registry's syncs left `running` as `interrupted`: called under its sync lease, when no
   * live process can be running one (PostgreSQL, docs/server.md "Several replicas").
   */
  interruptRunning(registryId: number, now: number): Promise<number>;
  /** Records a sync as running (and its registry's status); answers its id. */
  start(registryId: number, trigger: string, startedAt: number, replica: string): Promise<number>;
  /** Records how a sync ended, keeping the registry's last `keep` syncs. */
  finish(syncId: number, registryId: number, values: SyncValues, keep: number): Promise<void>;
  setRegistryState(registryId: number, state: RegistrySyncState): Promise<void>;
  /** The registry's latest sync's request figures, for its info. */
  latest(registryId: number): Promise<{ apiRequests: number; rateLimitRemaining: number | null } | undefined>;
  /** Content rows (metrics and tests). */
  countFiles(): Promise<number>;
  /**
   * The registry's stored versions that have a tree SHA, by directory: a sync reuses those whose
   * tree SHA is unchanged instead of re-reading them (docs/server.md, "Indexing").
   */
  versionTrees(registryId: number): Promise<Map<string, PreviousVersion>>;
}

/** What the catalog (resolve/catalog.ts) loads into memory. */
export interface CatalogRegistryRow {
  id: number;
  name: string;
  visibility: string;
  organisation: string | null;
  commit: string | null;
}

export interface CatalogVersionRow {
  collection: string;
  name: string;
  version: string;
  id: number;
}

export interface CatalogVersionDetail {
  version: string;
  kind: string;
  templateFile: string;
  schemaFile: string | null;
  digest: string;
  schemaJson: string | null;
  removedUpstreamAt: number | null;
  collection: string;
  template: string;
  registry: string;
  commit: string | null;
  /** Its files by path (byte order), read in the same statement: one snapshot of the index. */
  files: { path: string; size: number; sha256: string }[];
}

export interface CatalogQueries {
  registries(): Promise<CatalogRegistryRow[]>;
  versions(registryId: number): Promise<CatalogVersionRow[]>;
  version(versionId: number): Promise<CatalogVersionDetail | undefined>;
  /** Stored bytes by sha256. */
  content(sha256: string): Promise<Buffer | undefined>;
  /** The open quarantine of `template@version` (canonical template name; docs/integrity-store.md §4). */
  quarantine(template: string, version: string): Promise<OpenQuarantineOf | undefined>;
}

/** What a resolution shows of an open quarantine. */
export interface OpenQuarantineOf {
  since: number;
  newDigest: string;
  changedFiles: string;
}

/**
 * The checksum log and quarantines outside a swap (store/quarantine.ts; docs/integrity-store.md):
 * an admin's acceptance, notification delivery marks and the checkpoint reads serve.
 */
export interface ChecksumQueries {
  accept(input: AcceptInput): Promise<Accepted>;
  /** Records that every configured URL received a quarantine's notification. */
  markNotified(id: number, now: number): Promise<void>;
  /** Open quarantines whose notification was never delivered. */
  undelivered(): Promise<QuarantineEvent[]>;
  /** The newest signed checkpoint, signing the log's current size first when it is newer. */
  checkpoint(signer: LogSigner, now: number): Promise<{ size: number; note: string }>;
  /** A registry's acceptances of changed content, newest first, at most `limit` (the audit listing). */
  acceptances(registryId: number, limit: number): Promise<Accepted[]>;
  /** Open quarantines per registry (a gauge in /metrics). */
  openCounts(): Promise<OpenQuarantineCount[]>;
}

/**
 * Adding versions without a swap and what mirrors and bundles read (add-versions.ts,
 * add-versions-pg.ts; docs/mirroring.md): pull-through, an eager mirror's sync, bundle export and
 * import. Every write is one transaction.
 */
export interface MirrorQueries {
  /** The names of the registries this server indexes itself (never pulled through). */
  ownRegistries(): Promise<string[]>;
  /** The stored digest of one exact version, or undefined. */
  storedDigest(key: VersionKey): Promise<string | undefined>;
  /** The content hashes (of `wanted`) the store does not hold. */
  missingContent(wanted: readonly string[]): Promise<string[]>;
  /**
   * Adds each group's versions to its registry (created when absent), all groups in one
   * transaction; `VERSION_CONFLICT` (nothing written) when any version exists with another digest.
   */
  addVersions(
    groups: readonly AddedGroup[],
    content: (sha256: string) => Buffer | undefined,
    options?: { now?: number },
  ): Promise<AddVersionsResult>;
  /** Marks stored versions missing from `listed` as removed upstream (versionKey), unmarks listed ones. */
  flagRemovedUpstream(
    registryId: number,
    listed: ReadonlySet<string>,
    now: number,
  ): Promise<{ removed: number; changed: boolean }>;
  /** Marks one stored version as no longer served upstream; whether the mark is new. */
  markRemovedUpstream(key: VersionKey, now: number): Promise<boolean>;
  /**
   * Opens (or refreshes) the quarantine of a stored version whose other digest is known
   * (docs/integrity-store.md §6); the event to announce, or undefined when nothing changed.
   */
  openQuarantine(q: OpenQuarantineInput): Promise<QuarantineEvent | undefined>;
  /**
   * Closes the open quarantines of these versions (canonical `template`, `version`) whose first
   * digest is `digest`: the upstream serves that content again and no longer quarantines it.
   * Answers how many closed.
   */
  closeReverted(
    registryId: number,
    versions: readonly { template: string; version: string; digest: string }[],
    now: number,
  ): Promise<number>;
  makePrivate(registryId: number): Promise<void>;
  counts(registryId: number): Promise<{ templateCount: number; versionCount: number } | undefined>;
  /** Every version of a registry (by name, any case), for a bundle. */
  versionsOf(registry: string): Promise<VersionKey[]>;
  /** What a bundle carries of a version beyond its resolution, with its first-seen time. */
  bundleVersion(key: VersionKey, digest: string): Promise<BundleVersionRow | undefined>;
  /** Every template's search data, by registry name. */
  templates(): Promise<ExportedTemplate[]>;
}

export interface OpenQuarantineInput {
  registry: string;
  /** Canonical full template name. */
  template: string;
  version: string;
  firstDigest: string;
  newDigest: string;
  changedFiles?: QuarantineEvent['changedFiles'];
  since: number;
}

/** A sync's outcome, written with the swap that ends it. */
export interface SwapRecord {
  syncId: number;
  registryId: number;
  sync: SyncValues;
  state: RegistrySyncState;
  keep: number;
}

export interface ServiceStore {
  readonly dialect: 'sqlite' | 'postgres';
  readonly handle: StoreHandle;
  readonly registries: RegistryQueries;
  readonly credentials: CredentialQueries;
  readonly tokens: TokenQueries;
  readonly syncs: SyncQueries;
  readonly catalog: CatalogQueries;
  readonly checksums: ChecksumQueries;
  readonly mirror: MirrorQueries;
  readonly reads: ReadStore;
  /** Content already stored, by git blob id (the indexer reuses it). */
  knownContent(): KnownContent;
  /**
   * Swaps a registry's index in, in one transaction (swap-index.ts, swap-index-pg.ts), and records
   * the sync's outcome inside that transaction.
   */
  swap(built: BuiltIndex, meta: SwapMeta): Promise<SwapResult>;
  /** Whether the database answers and every migration is applied (/readyz). */
  ready(): Promise<'ready' | 'unreachable' | 'migrations-pending'>;
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

/**
 * The store's contract (docs/server.md "The store"): the one asynchronous interface the service,
 * the catalog, the token book, the mirror and the indexer use, its query groups per concern, and
 * every row type they exchange. It imports no implementation: sqlite/ and postgres/ implement it,
 * open-store.ts is the one place that picks a dialect.
 */
import type { LogSigner, MerkleHashStore } from '../../../client/src/integrity/index.js';
import type { ChangedFile } from '../../../client/src/wire/registry-api.js';
import type { BuiltIndex, KnownContent, PreviousVersion } from '../indexer/build-index.js';

/** A registry's row (sqlite/schema.ts, postgres/schema.ts `registries`). */
export interface RegistryRow {
  id: number;
  name: string;
  sourceType: string;
  source: string;
  branch: string | null;
  path: string;
  intervalSeconds: number | null;
  visibility: string;
  organisation: string | null;
  credential: string | null;
  webhookSecret: string | null;
  commit: string | null;
  etag: string | null;
  registryYamlSha256: string | null;
  generation: number;
  lastSyncAt: number | null;
  lastSyncStatus: string;
  lastSyncError: string | null;
  templateCount: number;
  versionCount: number;
  findingCount: number;
  createdAt: number;
}

/** A registry to insert: its name, source and creation time; the rest has defaults. */
export type NewRegistry = Pick<RegistryRow, 'name' | 'sourceType' | 'source' | 'createdAt'> &
  Partial<Omit<RegistryRow, 'id' | 'name' | 'sourceType' | 'source' | 'createdAt'>>;

/** A sync's row (`syncs`), as written. */
export interface SyncValues {
  id?: number;
  registryId?: number;
  trigger?: string;
  status?: string;
  startedAt?: number;
  finishedAt?: number | null;
  commit?: string | null;
  apiRequests?: number;
  rateLimitRemaining?: number | null;
  error?: string | null;
  replica?: string | null;
}

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
 * postgres/add-versions.ts; docs/mirroring.md): pull-through, an eager mirror's sync, bundle export and
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

/**
 * One sync per registry across the replicas sharing a database (postgres/sync-lease.ts; SQLite has
 * one process per file and none): runs `sync` under the registry's lease, coalescing triggers;
 * answers the rounds run here (0: a sync running here or elsewhere covers this trigger).
 */
export interface RegistryLeases {
  run(registryId: number, sync: () => Promise<void>): Promise<number>;
}

export interface ServiceStore {
  readonly dialect: 'sqlite' | 'postgres';
  /** The opened database this store runs on (open-store.ts `StoreHandle`). */
  readonly handle: object;
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
   * Swaps a registry's index in, in one transaction (sqlite/swap-index.ts, postgres/swap-index.ts), and records
   * the sync's outcome inside that transaction.
   */
  swap(built: BuiltIndex, meta: SwapMeta): Promise<SwapResult>;
  /** Whether the database answers and every migration is applied (/readyz). */
  ready(): Promise<'ready' | 'unreachable' | 'migrations-pending'>;
}

// ---- Visibility (visibility.ts)

/** What a caller may read besides public registries. */
export interface Reader {
  /** Every registry (admin tokens, `*` read tokens). */
  all: boolean;
  /** Registries granted one by one (read tokens for a registry). */
  ids: readonly number[];
  /** Organisations whose registries the caller may read. */
  organisations: readonly string[];
}

// ---- Search

export interface SearchOptions {
  q: string;
  collection?: string | undefined;
  registry?: string | undefined;
  page: number;
  limit: number;
  /** What the caller may read besides public registries (store/visibility.ts). */
  reader: Reader;
}

/** One template found; the API adds what it shows besides (the reference). */
export interface TemplateMatch {
  registry: string;
  collection: string;
  name: string;
  latestVersion: string | null;
  title: string | null;
  description: string | null;
}

/** One page of matches with the totals and facets over every match the caller may see. */
export interface SearchPage {
  query: string;
  total: number;
  /** True when more matches exist than the candidate bound; `total` is then a lower bound. */
  totalIsLowerBound: boolean;
  page: number;
  limit: number;
  matches: TemplateMatch[];
  facets: { collection: Record<string, number>; registry: Record<string, number> };
  /**
   * Set when no template matched the words and the answer is templates with similar names
   * (similar-names.ts): the most similar name, for "did you mean".
   */
  didYouMean: string | null;
}

// ---- Reads of the API and the pages

export interface TemplateRow {
  latestVersion: string | null;
  title: string | null;
  description: string | null;
}

export interface VersionRow {
  id: number;
  version: string;
  kind: string;
  digest: string;
  dir: string;
  templateFile: string;
  schemaFile: string | null;
  hasExample: boolean;
  /** A mirror's upstream no longer serves this version (docs/mirroring.md). */
  removedUpstream: boolean;
  /** When the server first saw this version (ms since the epoch; its first `first_seen` row), if recorded. */
  firstSeenAt: number | null;
}

export interface FindingRow {
  code: string;
  severity: string;
  path: string;
  message: string;
}

export interface RegistryTemplateRow {
  collection: string;
  name: string;
  latestVersion: string | null;
  title: string | null;
}

/** One version of a registry in its listing (what a mirror syncs from, docs/mirroring.md). */
export interface ListedVersionRow {
  collection: string;
  template: string;
  version: string;
  digest: string;
}

/** One sync of a registry as the store keeps it (times in ms since the epoch). */
export interface SyncRow {
  id: number;
  trigger: string;
  status: string;
  startedAt: number;
  finishedAt: number | null;
  replica: string | null;
  apiRequests: number;
  error: string | null;
}

/** The newest first-seen record of a version (docs/integrity-store.md §1). */
export interface FirstSeenRow {
  digest: string;
  supersedes: string | null;
  logIndex: number;
  /** The registry whose sync (or mirror, or bundle) recorded it; it may be deleted since. */
  registryId: number;
}

/** A signed checkpoint of the checksum log. */
export interface CheckpointRow {
  size: number;
  note: string;
}

/** An open quarantine (docs/integrity-store.md §4): what the status and the answers show. */
export interface QuarantineRow {
  id: number;
  template: string;
  version: string;
  firstDigest: string;
  newDigest: string;
  changedFiles: ChangedFile[];
  since: number;
}

export interface StoredFile {
  path: string;
  content: Buffer;
}

/** One page of rows and how many there are in all. */
export interface RowsPage<T> {
  rows: T[];
  total: number;
}

/**
 * The read queries both dialects answer, written once in read-queries.ts over either runner; each
 * dialect's reads.ts adds its search. The same rows in the same order; a test runs one suite of
 * them against both.
 */
export interface ReadStore {
  template(registryId: number, collection: string, name: string): Promise<TemplateRow | undefined>;
  /** The versions of a template, newest first. */
  versions(registryId: number, collection: string, name: string): Promise<VersionRow[]>;
  /**
   * At most `limit` of a template's version strings after `after` in byte order (one column, read
   * from the index on template and version): a not-found answer reads them a step at a time to
   * name the nearest (resolve/nearest-versions.ts), never the rows.
   */
  versionNamesAfter(
    registryId: number,
    collection: string,
    name: string,
    after: string,
    limit: number,
  ): Promise<string[]>;
  /** One version of a template, by its exact version string. */
  version(
    registryId: number,
    collection: string,
    name: string,
    version: string,
  ): Promise<VersionRow | undefined>;
  /**
   * Page `page` (from 1) of `size` versions of a template, newest first as `versions` orders them,
   * and how many it has: only the page's rows are read whole (docs/server.md, "Reads, written once").
   */
  versionsPage(
    registryId: number,
    collection: string,
    name: string,
    page: number,
    size: number,
  ): Promise<RowsPage<VersionRow>>;
  /** The sha256 of a file of a version, or undefined when the version has no such file. */
  fileSha256(versionId: number, path: string): Promise<string | undefined>;
  fileContent(versionId: number, path: string): Promise<Buffer | undefined>;
  /** A file of a version as UTF-8 text, when it exists and is at most MAX_INLINE_BYTES. */
  inlineText(versionId: number, path: string): Promise<string | undefined>;
  /** The parsed schema of a version as stored JSON text ('null' without one). */
  schemaJson(versionId: number): Promise<string>;
  /** Every file of a version with its content, by path. */
  versionContents(versionId: number): Promise<StoredFile[]>;
  /** Findings at or under a registry-relative directory, by path and code. */
  findingsUnder(registryId: number, dir: string): Promise<FindingRow[]>;
  /** A registry's templates by collection and name (byte order). */
  templates(registryId: number): Promise<RegistryTemplateRow[]>;
  /** Page `page` (from 1) of `size` of a registry's templates in the order of `templates`, and how many it has. */
  templatesPage(registryId: number, page: number, size: number): Promise<RowsPage<RegistryTemplateRow>>;
  /** The first `limit` templates of one collection of a registry, by name (byte order), and how many it has. */
  templatesIn(registryId: number, collection: string, limit: number): Promise<RowsPage<RegistryTemplateRow>>;
  /** Every version of a registry with its digest, by collection, template and version (byte order). */
  versionList(registryId: number): Promise<ListedVersionRow[]>;
  search(options: SearchOptions): Promise<SearchPage>;
  /**
   * Loads the search's rows of the registries' generations given (every registry; an index swap
   * or the generation watch calls it), in the background: until a registry's new generation is
   * loaded whole, searches are answered from the database. Never rejects.
   */
  warm(generations: readonly RegistryGeneration[]): Promise<void>;
  /** How the searches were answered, and how many registry generations were loaded. */
  searchCounters(): SearchCounters;
  /** A registry's last SYNC_HISTORY syncs, newest first. */
  syncs(registryId: number): Promise<SyncRow[]>;
  /** The checksum log's stored hashes (docs/integrity-store.md §1). */
  logHashes(): MerkleHashStore;
  /** The newest signed checkpoint, if any. */
  latestCheckpoint(): Promise<CheckpointRow | undefined>;
  /** The newest first-seen record of `template@version` (canonical template name). */
  newestRecord(template: string, version: string): Promise<FirstSeenRow | undefined>;
  /** A registry's open quarantines, by template and version. */
  openQuarantines(registryId: number): Promise<QuarantineRow[]>;
}

/** What `searchCounters()` reports (tests and benches read it; docs/server.md, "Store"). */
export interface SearchCounters {
  /** Searches answered from the held rows. */
  held: number;
  /** Searches answered from the database while a registry's generation was being loaded. */
  database: number;
  /** Registry generations loaded into the held rows. */
  loads: number;
}

// ---- First seen and quarantines

/** A version found changed in this swap (new, or its new digest changed again). */
export interface QuarantineEvent {
  registryId: number;
  registry: string;
  template: string;
  version: string;
  firstDigest: string;
  newDigest: string;
  changedFiles: ChangedFile[];
  treeSha: string | null;
  since: number;
  /** The open row to refresh; undefined: insert one. */
  openId: number | undefined;
  /** Set by the writer: the row's id. */
  id?: number;
}

export interface AcceptInput {
  registryId: number;
  /** `host/owner/repo`. */
  registry: string;
  /** `[<collection>/]<template>@<version>`, as in the route. */
  ref: string;
  reason: unknown;
  /** Who accepts (`token:<id>`, `admin`). */
  by: string;
  now: number;
  signer: LogSigner | undefined;
}

export interface Accepted {
  template: string;
  version: string;
  oldDigest: string;
  newDigest: string;
  acceptedAt: number;
  acceptedBy: string;
  reason: string;
  logIndex: number;
}

/** Open quarantines per registry (the `dm_registry_open_quarantines` gauge, read at each scrape). */
export interface OpenQuarantineCount {
  registry: string;
  visibility: string;
  open: number;
}

// ---- Versions added without a swap (mirrors, bundles)

export interface AddedFile {
  path: string;
  sha256: string;
  size: number;
}

export interface AddedVersion {
  collection: string;
  template: string;
  version: string;
  kind: string;
  dir: string;
  templateFile: string;
  schemaFile: string | null;
  hasExample: boolean;
  digest: string;
  schemaJson: string | null;
  files: AddedFile[];
  /** When the version was first seen where it came from (epoch ms; a bundle's first-seen time). */
  seenAt?: number | null;
  /** The stored digest this version replaces: a change its upstream accepted (docs/mirroring.md). */
  supersedes?: string | undefined;
}

export interface AddedRegistry {
  name: string;
  /** 'upstream' (pulled through a mirror) or 'bundle' (imported). */
  sourceType: 'upstream' | 'bundle';
  source: string;
  visibility: 'public' | 'private';
  commit: string | null;
}

export interface AddVersionsResult {
  /** The registry of the last group (the only one, for a mirror). */
  registryId: number;
  added: number;
  /** Versions already stored with the same digest. */
  unchanged: number;
  /** Quarantines opened or refreshed: versions whose digest differs from their first-seen one. */
  quarantined: QuarantineEvent[];
}

/** One registry's versions to add. */
export interface AddedGroup {
  registry: AddedRegistry;
  versions: readonly AddedVersion[];
}

/** An exact version of a registry (by name). */
export interface VersionKey {
  registry: string;
  collection: string;
  template: string;
  version: string;
}

/** What a bundle carries of a version beyond its resolution. */
export interface BundleVersionRow {
  dir: string;
  hasExample: boolean;
  schemaJson: string | null;
  /** When this server first saw the version with this digest (epoch ms), or null. */
  firstSeen: number | null;
}

/** A template's search data, as a bundle carries it. */
export type ExportedTemplate = TemplateMatch;

// ---- Index swaps

export interface SwapMeta {
  registryId: number;
  commit: string;
  etag: string | null;
  now: number;
  /** Test hook: runs inside the transaction, after the old index is deleted and half the new one written. */
  midSwap?: () => void;
  /** The sync's outcome, written last inside the transaction. */
  record?: SwapRecord;
  /** Signs the checksum log's checkpoint of the swap's appends (docs/integrity-store.md §2). */
  signer?: LogSigner | undefined;
  /** The sync that swaps, for the first-seen record. */
  syncId?: number | null;
}

export interface SwapResult {
  templateCount: number;
  versionCount: number;
  findingCount: number;
  generation: number;
  /** Versions first seen by this swap (appended to the checksum log). */
  recorded: number;
  /** Versions this swap found changed since first seen (new quarantines or new digests). */
  quarantined: QuarantineEvent[];
}

// ---- Tokens

export interface TokenRow {
  id: number;
  hash: string;
  role: 'admin' | 'read';
  registryId: number | null;
  /** Comma-separated organisation names (store/visibility.ts), or null. */
  organisations: string | null;
  createdAt: number;
  expiresAt: number | null;
  lastUsedAt: number | null;
}

/**
 * The read queries of the API and the pages (docs/server.md, "Read path"), one module: a
 * template's row and versions, a version's files and schema, findings, a registry's templates,
 * and the search. Handlers call these and never hold SQL. Statements are prepared once per store,
 * and `readsOf(store)` hands every route module the same instance (one set of statements, one
 * search with its caches).
 */
import type Database from 'better-sqlite3';
import type { MerkleHashStore } from '../../../client/src/integrity/index.js';
import { compareVersions, tryParseVersion } from '../../../client/src/reference/version.js';
import { SqliteHashStore } from './checksum-log.js';
import type { Store } from './db.js';
import type { ChangedFile } from './first-seen.js';
import { type SearchOptions, type SearchPage, TemplateSearch } from './search.js';
import type { RegistryGeneration } from './service-store.js';

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

/**
 * The version's first sight, by its canonical full template name (`host/owner/repo/[collection/]template`),
 * for the versions queries (`v`, `t`, `r`: versions, templates, registries).
 */
export const FIRST_SEEN_AT_SQL = `(SELECT fs.seen_at FROM first_seen fs
  WHERE fs.template = r.name || '/' || CASE WHEN t.collection = '' THEN '' ELSE t.collection || '/' END || t.name
    AND fs.version = v.version ORDER BY fs.id LIMIT 1)`;

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

/** Open quarantines as stored (changed_files as JSON text, times maybe as text on PostgreSQL). */
export function quarantineRows(
  rows: readonly (Omit<QuarantineRow, 'changedFiles' | 'since'> & {
    changedFiles: string;
    since: number | string;
  })[],
): QuarantineRow[] {
  return rows.map((r) => ({
    ...r,
    since: Number(r.since),
    changedFiles: JSON.parse(r.changedFiles) as ChangedFile[],
  }));
}

const QUARANTINE_COLUMNS = `id, template, version, first_digest AS "firstDigest", new_digest AS "newDigest",
  changed_files AS "changedFiles", since`;
/** Open quarantines of a registry, by template and version. */
export const OPEN_QUARANTINES_SQL = `SELECT ${QUARANTINE_COLUMNS} FROM quarantines
  WHERE registry_id = $1 AND accepted_at IS NULL ORDER BY template, version`;
/** The newest first-seen row of a key. */
export const NEWEST_RECORD_SQL = `SELECT digest, supersedes, log_index AS "logIndex", registry_id AS "registryId" FROM first_seen
  WHERE template = $1 AND version = $2 ORDER BY id DESC LIMIT 1`;
export const LATEST_CHECKPOINT_SQL = 'SELECT size, note FROM log_checkpoints ORDER BY size DESC LIMIT 1';

/** `$1`-style placeholders as SQLite's `?`, in order (the statements above serve both dialects). */
export const sqlite = (sql: string) => sql.replace(/\$\d+/g, '?');

/** How many syncs the history answers (the store keeps as many: KEEP_SYNCS). */
export const SYNC_HISTORY = 100;

export interface StoredFile {
  path: string;
  content: Buffer;
}

/** Largest file `inlineText` returns (example.yaml on the pages); bigger ones are linked only. */
export const MAX_INLINE_BYTES = 64 * 1024;

/** Version strings newest first in semver order; names that are not versions sort last. */
export function newestFirst<T extends { version: string }>(rows: T[]): T[] {
  return rows.sort((a, b) => {
    const va = tryParseVersion(a.version);
    const vb = tryParseVersion(b.version);
    if (!va || !vb) return a.version < b.version ? 1 : -1;
    return compareVersions(vb, va) || (a.version < b.version ? 1 : -1);
  });
}

/**
 * The read queries both dialects answer (SQLite: this module; PostgreSQL: reads-pg.ts), the same
 * rows in the same order; a test runs one suite of them against both.
 */
export interface ReadStore {
  template(registryId: number, collection: string, name: string): Promise<TemplateRow | undefined>;
  /** The versions of a template, newest first. */
  versions(registryId: number, collection: string, name: string): Promise<VersionRow[]>;
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
  /** A registry's templates by collection and name. */
  templates(registryId: number): Promise<RegistryTemplateRow[]>;
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

export class ReadQueries implements ReadStore {
  private readonly searcher: TemplateSearch;
  private readonly s: Record<
    | 'template'
    | 'versions'
    | 'fileSha'
    | 'fileContent'
    | 'inline'
    | 'schemaJson'
    | 'versionContents'
    | 'findings'
    | 'templates'
    | 'versionList'
    | 'syncs'
    | 'quarantines'
    | 'newestRecord'
    | 'latestCheckpoint',
    Database.Statement
  >;
  private readonly hashes: SqliteHashStore;

  constructor(store: Store) {
    const db = store.sqlite;
    this.searcher = new TemplateSearch(store);
    this.hashes = new SqliteHashStore(db);
    this.s = {
      quarantines: db.prepare(sqlite(OPEN_QUARANTINES_SQL)),
      newestRecord: db.prepare(sqlite(NEWEST_RECORD_SQL)),
      latestCheckpoint: db.prepare(LATEST_CHECKPOINT_SQL),
      template: db.prepare(
        'SELECT latest_version AS latestVersion, title, description FROM templates WHERE registry_id = ? AND collection = ? AND name = ?',
      ),
      versions: db.prepare(
        `SELECT v.id, v.version, v.kind, v.digest, v.dir, v.template_file AS templateFile,
                v.schema_file AS schemaFile, v.has_example AS hasExample,
                v.removed_upstream_at IS NOT NULL AS removedUpstream, ${FIRST_SEEN_AT_SQL} AS firstSeenAt
         FROM versions v JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
         WHERE t.registry_id = ? AND t.collection = ? AND t.name = ?`,
      ),
      fileSha: db.prepare('SELECT sha256 FROM version_files WHERE version_id = ? AND path = ?'),
      fileContent: db.prepare(
        'SELECT f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256 WHERE vf.version_id = ? AND vf.path = ?',
      ),
      inline: db.prepare(
        `SELECT f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256
         WHERE vf.version_id = ? AND vf.path = ? AND vf.size <= ${MAX_INLINE_BYTES}`,
      ),
      schemaJson: db.prepare('SELECT schema_json FROM versions WHERE id = ?').pluck(),
      versionContents: db.prepare(
        'SELECT vf.path, f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256 WHERE vf.version_id = ? ORDER BY vf.path',
      ),
      findings: db.prepare(
        `SELECT code, severity, path, message FROM findings
         WHERE registry_id = ? AND (path = ? OR substr(path, 1, length(?) + 1) = ? || '/')
         ORDER BY path, code`,
      ),
      templates: db.prepare(
        `SELECT collection, name, latest_version AS latestVersion, title FROM templates
         WHERE registry_id = ? ORDER BY collection, name`,
      ),
      versionList: db.prepare(
        `SELECT t.collection, t.name AS template, v.version, v.digest
         FROM versions v JOIN templates t ON t.id = v.template_id
         WHERE t.registry_id = ? ORDER BY t.collection, t.name, v.version`,
      ),
      syncs: db.prepare(
        `SELECT id, "trigger", status, started_at AS startedAt, finished_at AS finishedAt, replica,
                api_requests AS apiRequests, error
         FROM syncs WHERE registry_id = ? ORDER BY id DESC LIMIT ${SYNC_HISTORY}`,
      ),
    };
  }

  async template(registryId: number, collection: string, name: string): Promise<TemplateRow | undefined> {
    return this.s.template.get(registryId, collection, name) as TemplateRow | undefined;
  }

  async versions(registryId: number, collection: string, name: string): Promise<VersionRow[]> {
    const rows = this.s.versions.all(registryId, collection, name) as (Omit<
      VersionRow,
      'hasExample' | 'removedUpstream'
    > & {
      hasExample: number;
      removedUpstream: number;
    })[];
    return newestFirst(
      rows.map((r) => ({ ...r, hasExample: r.hasExample === 1, removedUpstream: r.removedUpstream === 1 })),
    );
  }

  async fileSha256(versionId: number, path: string): Promise<string | undefined> {
    return (this.s.fileSha.get(versionId, path) as { sha256: string } | undefined)?.sha256;
  }

  async fileContent(versionId: number, path: string): Promise<Buffer | undefined> {
    return (this.s.fileContent.get(versionId, path) as { content: Buffer } | undefined)?.content;
  }

  async inlineText(versionId: number, path: string): Promise<string | undefined> {
    const row = this.s.inline.get(versionId, path) as { content: Buffer } | undefined;
    return row ? row.content.toString('utf8') : undefined;
  }

  async schemaJson(versionId: number): Promise<string> {
    return (this.s.schemaJson.get(versionId) as string | null | undefined) ?? 'null';
  }

  async versionContents(versionId: number): Promise<StoredFile[]> {
    return this.s.versionContents.all(versionId) as StoredFile[];
  }

  async findingsUnder(registryId: number, dir: string): Promise<FindingRow[]> {
    return this.s.findings.all(registryId, dir, dir, dir) as FindingRow[];
  }

  async templates(registryId: number): Promise<RegistryTemplateRow[]> {
    return this.s.templates.all(registryId) as RegistryTemplateRow[];
  }

  async versionList(registryId: number): Promise<ListedVersionRow[]> {
    return this.s.versionList.all(registryId) as ListedVersionRow[];
  }

  async search(options: SearchOptions): Promise<SearchPage> {
    return this.searcher.search(options);
  }

  warm(generations: readonly RegistryGeneration[]): Promise<void> {
    return this.searcher.warm(generations);
  }

  searchCounters(): SearchCounters {
    return this.searcher.counters();
  }

  async syncs(registryId: number): Promise<SyncRow[]> {
    return this.s.syncs.all(registryId) as SyncRow[];
  }

  logHashes(): MerkleHashStore {
    return this.hashes;
  }

  async latestCheckpoint(): Promise<CheckpointRow | undefined> {
    return this.s.latestCheckpoint.get() as CheckpointRow | undefined;
  }

  async newestRecord(template: string, version: string): Promise<FirstSeenRow | undefined> {
    return this.s.newestRecord.get(template, version) as FirstSeenRow | undefined;
  }

  async openQuarantines(registryId: number): Promise<QuarantineRow[]> {
    return quarantineRows(this.s.quarantines.all(registryId) as never);
  }
}

const instances = new WeakMap<Store, ReadQueries>();

/** The one ReadStore of a store, shared by the API and the pages. */
export function readsOf(store: Store): ReadStore {
  let reads = instances.get(store);
  if (!reads) {
    reads = new ReadQueries(store);
    instances.set(store, reads);
  }
  return reads;
}

// SQLite only: the ReadStore over better-sqlite3 statements prepared once, answering synchronously; the SQL text both dialects run is in ../reads.ts.
/**
 * The read queries of the API and the pages (docs/server.md, "Read path"), one module: a
 * template's row and versions, a version's files and schema, findings, a registry's templates,
 * and the search. Handlers call these and never hold SQL. Statements are prepared once per store,
 * and `readsOf(store)` hands every route module the same instance (one set of statements, one
 * search with its caches).
 */
import type Database from 'better-sqlite3';
import type { MerkleHashStore } from '../../../../client/src/integrity/index.js';
import { SqlHashStore } from '../checksum-log.js';
import type {
  CheckpointRow,
  FindingRow,
  FirstSeenRow,
  ListedVersionRow,
  QuarantineRow,
  ReadStore,
  RegistryGeneration,
  RegistryTemplateRow,
  SearchCounters,
  SearchOptions,
  SearchPage,
  StoredFile,
  SyncRow,
  TemplateRow,
  VersionRow,
} from '../contract.js';
import {
  FIRST_SEEN_AT_SQL,
  LATEST_CHECKPOINT_SQL,
  MAX_INLINE_BYTES,
  NEWEST_RECORD_SQL,
  newestFirst,
  OPEN_QUARANTINES_SQL,
  quarantineRows,
  SYNC_HISTORY,
} from '../reads.js';
import { sqlite } from '../sql.js';
import type { Store } from './open.js';
import { sqliteRunner } from './runner.js';
import { TemplateSearch } from './search.js';
import { swapsSettled } from './swap-index-thread.js';

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
  private readonly hashes: SqlHashStore;

  constructor(store: Store) {
    const db = store.sqlite;
    this.searcher = new TemplateSearch(store);
    this.hashes = new SqlHashStore(sqliteRunner(store, () => swapsSettled(store)));
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

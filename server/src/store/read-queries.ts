/**
 * The read queries of the API and the pages, written once over the store's runner (docs/server.md
 * "The store", "Reads, written once"): a template's row and versions, a version's files and
 * schema, findings, a registry's templates (whole or one page), syncs, quarantines, first-seen
 * records, checkpoints and the checksum log's hashes. Each dialect's reads.ts adds only its search
 * (FTS5 on SQLite, lexemes and pg_trgm on PostgreSQL). On SQLite each statement is prepared once
 * per text (sqlite/runner.ts); values are converted here with Number() / Boolean(), since a
 * PostgreSQL bigint or count(*) arrives as text and an SQLite boolean as 0 or 1.
 */
import type { MerkleHashStore } from '../../../client/src/integrity/index.js';
import { SqlHashStore } from './checksum-log.js';
import type {
  CheckpointRow,
  FindingRow,
  FirstSeenRow,
  ListedVersionRow,
  QuarantineRow,
  ReadStore,
  RegistryGeneration,
  RegistryTemplateRow,
  RowsPage,
  SearchCounters,
  SearchOptions,
  SearchPage,
  StoredFile,
  SyncRow,
  TemplateRow,
  VersionRow,
} from './contract.js';
import {
  FIRST_SEEN_AT_SQL,
  LATEST_CHECKPOINT_SQL,
  MAX_INLINE_BYTES,
  NEWEST_RECORD_SQL,
  newestFirst,
  OPEN_QUARANTINES_SQL,
  quarantineRows,
  SYNC_HISTORY,
} from './reads.js';
import { listParam, type SqlRunner } from './sql.js';

/** A version row as either driver gives it (booleans 0/1 on SQLite, a bigint as text on PostgreSQL). */
type StoredVersion = Omit<VersionRow, 'hasExample' | 'removedUpstream' | 'firstSeenAt'> & {
  hasExample: boolean | number;
  removedUpstream: boolean | number;
  firstSeenAt: number | string | null;
};

function versionRow(r: StoredVersion): VersionRow {
  return {
    ...r,
    hasExample: Boolean(r.hasExample),
    removedUpstream: Boolean(r.removedUpstream),
    firstSeenAt: r.firstSeenAt === null ? null : Number(r.firstSeenAt),
  };
}

/** The most rows one page may ask for (the pages ask for ROWS_PER_PAGE). */
export const MAX_PAGE_ROWS = 1000;

/** `page` (from 1) and `size` as a LIMIT and an OFFSET, bounded. */
function limits(page: number, size: number): [limit: number, offset: number] {
  const limit = Math.max(1, Math.min(MAX_PAGE_ROWS, Math.floor(size)));
  return [limit, (Math.max(1, Math.floor(page)) - 1) * limit];
}

/** The SQL texts of the reads, with the dialect's fragments in them (built once per store). */
function statements(r: SqlRunner) {
  const c = r.byteOrder;
  const versionColumns = `v.id, v.version, v.kind, v.digest, v.dir, v.template_file AS "templateFile",
    v.schema_file AS "schemaFile", v.has_example AS "hasExample",
    v.removed_upstream_at IS NOT NULL AS "removedUpstream", ${FIRST_SEEN_AT_SQL} AS "firstSeenAt"`;
  const ofTemplate =
    'FROM versions v JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id';
  return {
    template: `SELECT latest_version AS "latestVersion", title, description FROM templates
      WHERE registry_id = $1 AND collection = $2 AND name = $3`,
    versions: `SELECT ${versionColumns} ${ofTemplate} WHERE t.registry_id = $1 AND t.collection = $2 AND t.name = $3`,
    version: `SELECT ${versionColumns} ${ofTemplate}
      WHERE t.registry_id = $1 AND t.collection = $2 AND t.name = $3 AND v.version = $4`,
    // A page of versions: every version string (the order is semver's, which SQL cannot give), then
    // the page's rows alone, with their first sight.
    versionKeys: `SELECT v.id, v.version FROM versions v JOIN templates t ON t.id = v.template_id
      WHERE t.registry_id = $1 AND t.collection = $2 AND t.name = $3`,
    // A step of version strings in byte order after $4: the template's id found first, so the
    // index on template and version gives the order (through a join, both databases sorted every
    // version of the template after $4 on each step).
    versionNamesAfter: `SELECT version FROM versions
      WHERE template_id = (SELECT id FROM templates WHERE registry_id = $1 AND collection = $2 AND name = $3)
        AND ${c('version')} > $4
      ORDER BY ${c('version')} LIMIT $5`,
    versionsById: `SELECT ${versionColumns}
      FROM ${r.list('$1', 'p', [['id', 'int']])} CROSS JOIN versions v JOIN templates t ON t.id = v.template_id
        JOIN registries r ON r.id = t.registry_id
      WHERE v.id = p.id`,
    fileSha: 'SELECT sha256 FROM version_files WHERE version_id = $1 AND path = $2',
    fileContent: `SELECT f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256
      WHERE vf.version_id = $1 AND vf.path = $2`,
    inline: `SELECT f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256
      WHERE vf.version_id = $1 AND vf.path = $2 AND vf.size <= ${MAX_INLINE_BYTES}`,
    schemaJson: 'SELECT schema_json AS json FROM versions WHERE id = $1',
    versionContents: `SELECT vf.path, f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256
      WHERE vf.version_id = $1 ORDER BY ${c('vf.path')}`,
    findings: `SELECT code, severity, path, message FROM findings
      WHERE registry_id = $1 AND (path = $2 OR substr(path, 1, length($3) + 1) = $4 || '/')
      ORDER BY ${c('path')}, ${c('code')}`,
    templates: `SELECT collection, name, latest_version AS "latestVersion", title FROM templates
      WHERE registry_id = $1 ORDER BY ${c('collection')}, ${c('name')}`,
    templatesPage: `SELECT collection, name, latest_version AS "latestVersion", title FROM templates
      WHERE registry_id = $1 ORDER BY ${c('collection')}, ${c('name')} LIMIT $2 OFFSET $3`,
    templatesIn: `SELECT collection, name, latest_version AS "latestVersion", title FROM templates
      WHERE registry_id = $1 AND collection = $2 ORDER BY ${c('name')} LIMIT $3`,
    templateCount: 'SELECT count(*) AS n FROM templates WHERE registry_id = $1',
    collectionCount: 'SELECT count(*) AS n FROM templates WHERE registry_id = $1 AND collection = $2',
    versionList: `SELECT t.collection, t.name AS template, v.version, v.digest
      FROM versions v JOIN templates t ON t.id = v.template_id
      WHERE t.registry_id = $1 ORDER BY ${c('t.collection')}, ${c('t.name')}, ${c('v.version')}`,
    syncs: `SELECT id, "trigger", status, started_at AS "startedAt", finished_at AS "finishedAt", replica,
        api_requests AS "apiRequests", error
      FROM syncs WHERE registry_id = $1 ORDER BY id DESC LIMIT ${SYNC_HISTORY}`,
  };
}

/**
 * The ReadStore but its search, over either runner. A dialect's reads.ts extends it with the search
 * (`search`, `warm`, `searchCounters`), the one part whose SQL differs.
 */
export abstract class SqlReads implements ReadStore {
  private readonly sql: ReturnType<typeof statements>;
  private readonly hashes: SqlHashStore;

  constructor(protected readonly runner: SqlRunner) {
    this.sql = statements(runner);
    this.hashes = new SqlHashStore(runner);
  }

  abstract search(options: SearchOptions): Promise<SearchPage>;
  abstract warm(generations: readonly RegistryGeneration[]): Promise<void>;
  abstract searchCounters(): SearchCounters;

  async template(registryId: number, collection: string, name: string): Promise<TemplateRow | undefined> {
    const [row] = await this.runner.all<TemplateRow>(this.sql.template, [registryId, collection, name]);
    return row;
  }

  async versions(registryId: number, collection: string, name: string): Promise<VersionRow[]> {
    const rows = await this.runner.all<StoredVersion>(this.sql.versions, [registryId, collection, name]);
    return newestFirst(rows.map(versionRow));
  }

  async versionNamesAfter(
    registryId: number,
    collection: string,
    name: string,
    after: string,
    limit: number,
  ): Promise<string[]> {
    const rows = await this.runner.all<{ version: string }>(this.sql.versionNamesAfter, [
      registryId,
      collection,
      name,
      after,
      Math.max(1, Math.min(MAX_PAGE_ROWS, Math.floor(limit))),
    ]);
    return rows.map((r) => r.version);
  }

  async version(
    registryId: number,
    collection: string,
    name: string,
    version: string,
  ): Promise<VersionRow | undefined> {
    const [row] = await this.runner.all<StoredVersion>(this.sql.version, [
      registryId,
      collection,
      name,
      version,
    ]);
    return row && versionRow(row);
  }

  async versionsPage(
    registryId: number,
    collection: string,
    name: string,
    page: number,
    size: number,
  ): Promise<RowsPage<VersionRow>> {
    const [limit, offset] = limits(page, size);
    const keys = newestFirst(
      await this.runner.all<{ id: number; version: string }>(this.sql.versionKeys, [
        registryId,
        collection,
        name,
      ]),
    );
    const shown = keys.slice(offset, offset + limit);
    if (shown.length === 0) return { rows: [], total: keys.length };
    const rows = await this.runner.all<StoredVersion>(this.sql.versionsById, [
      listParam(shown.map((k) => [k.id])),
    ]);
    const at = new Map(shown.map((k, i) => [k.id, i]));
    return { rows: rows.map(versionRow).sort((a, b) => at.get(a.id)! - at.get(b.id)!), total: keys.length };
  }

  async fileSha256(versionId: number, path: string): Promise<string | undefined> {
    const [row] = await this.runner.all<{ sha256: string }>(this.sql.fileSha, [versionId, path]);
    return row?.sha256;
  }

  async fileContent(versionId: number, path: string): Promise<Buffer | undefined> {
    const [row] = await this.runner.all<{ content: Buffer }>(this.sql.fileContent, [versionId, path]);
    return row?.content;
  }

  async inlineText(versionId: number, path: string): Promise<string | undefined> {
    const [row] = await this.runner.all<{ content: Buffer }>(this.sql.inline, [versionId, path]);
    return row ? row.content.toString('utf8') : undefined;
  }

  async schemaJson(versionId: number): Promise<string> {
    const [row] = await this.runner.all<{ json: string | null }>(this.sql.schemaJson, [versionId]);
    return row?.json ?? 'null';
  }

  versionContents(versionId: number): Promise<StoredFile[]> {
    return this.runner.all<StoredFile>(this.sql.versionContents, [versionId]);
  }

  findingsUnder(registryId: number, dir: string): Promise<FindingRow[]> {
    return this.runner.all<FindingRow>(this.sql.findings, [registryId, dir, dir, dir]);
  }

  templates(registryId: number): Promise<RegistryTemplateRow[]> {
    return this.runner.all<RegistryTemplateRow>(this.sql.templates, [registryId]);
  }

  async templatesPage(
    registryId: number,
    page: number,
    size: number,
  ): Promise<RowsPage<RegistryTemplateRow>> {
    const [limit, offset] = limits(page, size);
    const [rows, [count]] = await Promise.all([
      this.runner.all<RegistryTemplateRow>(this.sql.templatesPage, [registryId, limit, offset]),
      this.runner.all<{ n: number | string }>(this.sql.templateCount, [registryId]),
    ]);
    return { rows, total: Number(count?.n ?? 0) };
  }

  async templatesIn(
    registryId: number,
    collection: string,
    limit: number,
  ): Promise<RowsPage<RegistryTemplateRow>> {
    const [rows, [count]] = await Promise.all([
      this.runner.all<RegistryTemplateRow>(this.sql.templatesIn, [registryId, collection, limit]),
      this.runner.all<{ n: number | string }>(this.sql.collectionCount, [registryId, collection]),
    ]);
    return { rows, total: Number(count?.n ?? 0) };
  }

  versionList(registryId: number): Promise<ListedVersionRow[]> {
    return this.runner.all<ListedVersionRow>(this.sql.versionList, [registryId]);
  }

  async syncs(registryId: number): Promise<SyncRow[]> {
    const rows = await this.runner.all<
      Omit<SyncRow, 'startedAt' | 'finishedAt'> & {
        startedAt: number | string;
        finishedAt: number | string | null;
      }
    >(this.sql.syncs, [registryId]);
    return rows.map((r) => ({
      ...r,
      startedAt: Number(r.startedAt),
      finishedAt: r.finishedAt === null ? null : Number(r.finishedAt),
    }));
  }

  logHashes(): MerkleHashStore {
    return this.hashes;
  }

  async latestCheckpoint(): Promise<CheckpointRow | undefined> {
    const [row] = await this.runner.all<{ size: number | string; note: string }>(LATEST_CHECKPOINT_SQL);
    return row ? { size: Number(row.size), note: row.note } : undefined;
  }

  async newestRecord(template: string, version: string): Promise<FirstSeenRow | undefined> {
    const [row] = await this.runner.all<FirstSeenRow>(NEWEST_RECORD_SQL, [template, version]);
    return row ? { ...row, logIndex: Number(row.logIndex), registryId: Number(row.registryId) } : undefined;
  }

  async openQuarantines(registryId: number): Promise<QuarantineRow[]> {
    return quarantineRows(await this.runner.all(OPEN_QUARANTINES_SQL, [registryId]));
  }
}

/**
 * The read queries on PostgreSQL (the ReadStore of reads.ts; docs/server.md, "Store"): the same
 * rows in the same order as SQLite's (text ordered `COLLATE "C"`, byte order like SQLite's), and the
 * search over the generated `templates.search` vector: every word of the query must match as a
 * prefix (`word:*`), ordered exact name, then name prefix, then `ts_rank` (name A, title and
 * description B, property names and collection C), then name. When nothing matches, names within
 * trigram distance of the query (pg_trgm) are the answer, so `rediss` still finds `redis`, with
 * the most similar name as `didYouMean` (SQLite: similar-names.ts, the same rule). The
 * caller's visible registries are a condition of the same statement that ranks, so totals and
 * facets count only what the caller may see.
 */

import type { PostgresStore } from './postgres.js';
import type {
  FindingRow,
  ReadStore,
  RegistryTemplateRow,
  StoredFile,
  SyncRow,
  TemplateRow,
  VersionRow,
} from './reads.js';
import { MAX_INLINE_BYTES, newestFirst, SYNC_HISTORY } from './reads.js';
import {
  CANDIDATES,
  countFacets,
  queryWords,
  type SearchOptions,
  type SearchPage,
  type TemplateMatch,
} from './search.js';

interface Candidate extends TemplateMatch {
  registryId: number;
}

/** `redis clus` → `redis:* & clus:*` (words are letters, digits and `_` only: no tsquery syntax). */
export function tsQuery(words: readonly string[]): string | null {
  return words.length ? words.map((w) => `${w}:*`).join(' & ') : null;
}

function likePrefix(text: string): string {
  return `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class PostgresReads implements ReadStore {
  constructor(private readonly store: PostgresStore) {}

  private async rows<T>(text: string, values: unknown[]): Promise<T[]> {
    return (await this.store.pool.query({ text, values })).rows as T[];
  }

  async template(registryId: number, collection: string, name: string): Promise<TemplateRow | undefined> {
    const [row] = await this.rows<TemplateRow>(
      `SELECT latest_version AS "latestVersion", title, description FROM templates
       WHERE registry_id = $1 AND collection = $2 AND name = $3`,
      [registryId, collection, name],
    );
    return row;
  }

  async versions(registryId: number, collection: string, name: string): Promise<VersionRow[]> {
    return newestFirst(
      await this.rows<VersionRow>(
        `SELECT v.id, v.version, v.kind, v.digest, v.dir, v.template_file AS "templateFile",
                v.schema_file AS "schemaFile", v.has_example AS "hasExample"
         FROM versions v JOIN templates t ON t.id = v.template_id
         WHERE t.registry_id = $1 AND t.collection = $2 AND t.name = $3`,
        [registryId, collection, name],
      ),
    );
  }

  async fileSha256(versionId: number, path: string): Promise<string | undefined> {
    const [row] = await this.rows<{ sha256: string }>(
      'SELECT sha256 FROM version_files WHERE version_id = $1 AND path = $2',
      [versionId, path],
    );
    return row?.sha256;
  }

  async fileContent(versionId: number, path: string): Promise<Buffer | undefined> {
    const [row] = await this.rows<{ content: Buffer }>(
      `SELECT f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256
       WHERE vf.version_id = $1 AND vf.path = $2`,
      [versionId, path],
    );
    return row?.content;
  }

  async inlineText(versionId: number, path: string): Promise<string | undefined> {
    const [row] = await this.rows<{ content: Buffer }>(
      `SELECT f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256
       WHERE vf.version_id = $1 AND vf.path = $2 AND vf.size <= ${MAX_INLINE_BYTES}`,
      [versionId, path],
    );
    return row ? row.content.toString('utf8') : undefined;
  }

  async schemaJson(versionId: number): Promise<string> {
    const [row] = await this.rows<{ json: string | null }>(
      'SELECT schema_json AS json FROM versions WHERE id = $1',
      [versionId],
    );
    return row?.json ?? 'null';
  }

  async versionContents(versionId: number): Promise<StoredFile[]> {
    return this.rows<StoredFile>(
      `SELECT vf.path, f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256
       WHERE vf.version_id = $1 ORDER BY vf.path COLLATE "C"`,
      [versionId],
    );
  }

  async findingsUnder(registryId: number, dir: string): Promise<FindingRow[]> {
    return this.rows<FindingRow>(
      `SELECT code, severity, path, message FROM findings
       WHERE registry_id = $1 AND (path = $2 OR left(path, length($2) + 1) = $2 || '/')
       ORDER BY path COLLATE "C", code COLLATE "C"`,
      [registryId, dir],
    );
  }

  async templates(registryId: number): Promise<RegistryTemplateRow[]> {
    return this.rows<RegistryTemplateRow>(
      `SELECT collection, name, latest_version AS "latestVersion", title FROM templates
       WHERE registry_id = $1 ORDER BY collection COLLATE "C", name COLLATE "C"`,
      [registryId],
    );
  }

  async syncs(registryId: number): Promise<SyncRow[]> {
    const rows = await this.rows<SyncRow & { startedAt: string; finishedAt: string | null }>(
      `SELECT id, "trigger", status, started_at AS "startedAt", finished_at AS "finishedAt", replica,
              api_requests AS "apiRequests", error
       FROM syncs WHERE registry_id = $1 ORDER BY id DESC LIMIT ${SYNC_HISTORY}`,
      [registryId],
    );
    // bigint columns arrive as text.
    return rows.map((r) => ({
      ...r,
      startedAt: Number(r.startedAt),
      finishedAt: r.finishedAt === null ? null : Number(r.finishedAt),
    }));
  }

  async search(options: SearchOptions): Promise<SearchPage> {
    const names = new Map<number, string>();
    for (const r of await this.rows<{ id: number; name: string }>('SELECT id, name FROM registries', [])) {
      names.set(r.id, r.name);
    }
    let visible = options.visible;
    if (options.registry !== undefined) visible = visible.filter((id) => names.get(id) === options.registry);
    const words = queryWords(options.q);
    const tsq = tsQuery(words);
    const q = options.q.trim().toLowerCase();
    const values: unknown[] = [visible];
    let where = 'registry_id = ANY($1::int[])';
    if (options.collection !== undefined) {
      values.push(options.collection);
      where += ` AND collection = $${values.length}`;
    }
    const columns = `id, name, collection, title, description, registry_id AS "registryId", latest_version AS "latestVersion"`;
    let rows: Candidate[];
    let didYouMean: string | null = null;
    if (tsq === null) {
      rows = await this.rows<Candidate>(
        `SELECT ${columns} FROM templates WHERE ${where}
         ORDER BY name COLLATE "C", collection COLLATE "C" LIMIT ${CANDIDATES + 1}`,
        values,
      );
    } else {
      const at = values.length;
      rows = await this.rows<Candidate>(
        `SELECT ${columns} FROM templates, to_tsquery('simple', $${at + 1}) AS query
         WHERE ${where} AND (search @@ query OR lower(name) = $${at + 2})
         ORDER BY lower(name) = $${at + 2} DESC, lower(name) LIKE $${at + 3} DESC, ts_rank(search, query) DESC,
                  name COLLATE "C", collection COLLATE "C"
         LIMIT ${CANDIDATES + 1}`,
        [...values, tsq, q, likePrefix(q)],
      );
      if (rows.length === 0 && q.length >= 3) {
        rows = await this.rows<Candidate>(
          `SELECT ${columns} FROM templates WHERE ${where} AND name % $${at + 1}
           ORDER BY similarity(name, $${at + 1}) DESC, name COLLATE "C", collection COLLATE "C"
           LIMIT ${CANDIDATES + 1}`,
          [...values, q],
        );
        didYouMean = rows[0]?.name ?? null;
      }
    }
    const totalIsLowerBound = rows.length > CANDIDATES;
    if (totalIsLowerBound) rows.length = CANDIDATES;
    const start = (options.page - 1) * options.limit;
    return {
      query: options.q,
      total: rows.length,
      totalIsLowerBound,
      page: options.page,
      limit: options.limit,
      matches: rows.slice(start, start + options.limit).map((r) => ({
        registry: names.get(r.registryId) ?? '',
        collection: r.collection,
        name: r.name,
        latestVersion: r.latestVersion,
        title: r.title || null,
        description: r.description || null,
      })),
      facets: countFacets(rows, names),
      didYouMean,
    };
  }
}

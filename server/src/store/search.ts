/**
 * Template search (spec/server.md §2, §7) over the FTS5 table of migrations/0001: every word of
 * the query must match (as a prefix) in the name, collection, schema title/description or property
 * names; hits ranked by bm25 with the name weighted highest. The ranked candidate set is bounded
 * (CANDIDATES) so that very broad prefixes cannot make the tail slow; facet counts and `total`
 * are over that set (`totalIsLowerBound` says when more matched).
 */
import type Database from 'better-sqlite3';
import { formatTemplateName } from '../../../client/src/reference/reference.js';
import type { SearchHit, SearchResult } from '../api/shapes.js';
import type { Store } from './db.js';

export const CANDIDATES = 1000;

export interface SearchOptions {
  q: string;
  collection?: string | undefined;
  registry?: string | undefined;
  page: number;
  limit: number;
  /** Registry ids the caller may read (public ones plus the token's). */
  visible: number[];
}

interface Row {
  id: number;
  rank: number;
  collection: string;
  name: string;
  latestVersion: string | null;
  title: string | null;
  description: string | null;
  registry: string;
}

/** `redis clus` → `"redis"* AND "clus"*`; words only (no FTS syntax from users). */
export function ftsQuery(q: string): string | null {
  const words = q.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  if (words.length === 0) return null;
  return words
    .slice(0, 16)
    .map((w) => `"${w}"*`)
    .join(' AND ');
}

export class TemplateSearch {
  private readonly ranked = new Map<string, Database.Statement>();

  constructor(private readonly store: Store) {}

  private statement(kind: 'fts' | 'list' | 'exact', filters: string): Database.Statement {
    const key = `${kind}:${filters}`;
    let stmt = this.ranked.get(key);
    if (!stmt) {
      const sql =
        kind === 'exact'
          ? `SELECT t.id, 0 AS rank, t.collection, t.name, t.latest_version AS latestVersion, t.title, t.description,
                    r.name AS registry
             FROM templates t JOIN registries r ON r.id = t.registry_id WHERE t.name = ? ${filters}
             ORDER BY t.collection, r.name LIMIT 100`
          : kind === 'fts'
            ? `SELECT c.id, c.rank, t.collection, t.name, t.latest_version AS latestVersion, t.title, t.description,
                    r.name AS registry
             FROM (SELECT f.rowid AS id, bm25(templates_fts, 10.0, 4.0, 5.0, 1.0, 2.0) AS rank
                   FROM templates_fts f JOIN templates t2 ON t2.id = f.rowid
                   WHERE templates_fts MATCH ? ${filters.replaceAll('t.', 't2.')} LIMIT ${CANDIDATES + 1}) c
             JOIN templates t ON t.id = c.id JOIN registries r ON r.id = t.registry_id`
            : `SELECT t.id, 0 AS rank, t.collection, t.name, t.latest_version AS latestVersion, t.title, t.description,
                    r.name AS registry
             FROM templates t JOIN registries r ON r.id = t.registry_id WHERE 1 ${filters}
             ORDER BY t.name, t.collection, r.name LIMIT ${CANDIDATES + 1}`;
      stmt = this.store.sqlite.prepare(sql);
      this.ranked.set(key, stmt);
    }
    return stmt;
  }

  search(options: SearchOptions): SearchResult {
    const params: unknown[] = [];
    let filters = '';
    const match = ftsQuery(options.q);
    if (match) params.push(match);
    if (options.visible.length === 0) filters += ' AND 0';
    else filters += ` AND t.registry_id IN (${options.visible.map(() => '?').join(',')})`;
    params.push(...options.visible);
    if (options.collection !== undefined) {
      filters += ' AND t.collection = ?';
      params.push(options.collection);
    }
    if (options.registry !== undefined) {
      filters += ' AND t.registry_id = (SELECT id FROM registries WHERE name = ?)';
      params.push(options.registry);
    }
    const rows = this.statement(match ? 'fts' : 'list', filters).all(...params) as Row[];
    const totalIsLowerBound = rows.length > CANDIDATES;
    if (totalIsLowerBound) rows.length = CANDIDATES;
    if (match) {
      // Templates named exactly like the query come first, even beyond the candidate bound.
      const exactName = options.q.trim();
      const exact = this.statement('exact', filters).all(exactName, ...params.slice(1)) as Row[];
      const seen = new Set(exact.map((r) => r.id));
      rows.sort((a, b) => a.rank - b.rank || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const rest = rows.filter((r) => !seen.has(r.id));
      rows.length = 0;
      rows.push(...exact.map((r) => ({ ...r, rank: -Infinity })), ...rest);
    }
    const collection: Record<string, number> = {};
    const registry: Record<string, number> = {};
    for (const r of rows) {
      collection[r.collection] = (collection[r.collection] ?? 0) + 1;
      registry[r.registry] = (registry[r.registry] ?? 0) + 1;
    }
    const start = (options.page - 1) * options.limit;
    const hits: SearchHit[] = rows.slice(start, start + options.limit).map((r) => {
      const [host = '', owner = '', repo = ''] = r.registry.split('/');
      return {
        registry: r.registry,
        collection: r.collection,
        name: r.name,
        reference: formatTemplateName({ host, owner, repo, collection: r.collection, template: r.name }),
        latestVersion: r.latestVersion,
        title: r.title,
        description: r.description,
      };
    });
    return {
      query: options.q,
      total: rows.length,
      totalIsLowerBound,
      page: options.page,
      limit: options.limit,
      hits,
      facets: { collection, registry },
    };
  }
}

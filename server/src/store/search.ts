/**
 * Template search (docs/server.md "HTTP API", "Read path") over the FTS5 table (migrations 0001/0002): every word
 * of the query must match, as a prefix, a word of the name, collection, schema title/description
 * or property names. The prefix index (`prefix='2 3'`) finds matches; the candidate set is
 * bounded (CANDIDATES, read from the FTS table alone, no join) and ranked here — exact name, name
 * prefix, then by where the words match (name words, title, collection, then the rest), then
 * name, the order PostgreSQL's search has as far as FTS5 allows (reads-pg.ts) — because
 * bm25 over a large match set is what makes the tail slow (§7: 55 ms p99). Templates named
 * exactly like the query always come first, even beyond the bound. Facets and `total` count the
 * candidate set; `totalIsLowerBound` says when more matched. What the caller may not read is
 * excluded inside the scan (store/visibility.ts), before the bound, totals and facets.
 */
import type Database from 'better-sqlite3';
import type { Store } from './db.js';
import { type NamedRow, SimilarNames } from './similar-names.js';
import { mayRead, type Reader, visibleRegistriesSqlite } from './visibility.js';

export const CANDIDATES = 1000;

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

interface Candidate {
  id: number;
  name: string;
  collection: string;
  title: string | null;
  registryId: number;
  score: number;
}

/** The words of a query, lower-cased; only letters, digits and `_` (no FTS syntax from users). */
export function queryWords(q: string): string[] {
  return (q.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).slice(0, 16);
}

/** `redis clus` → `"redis"* AND "clus"*`. */
export function ftsQuery(words: readonly string[]): string | null {
  return words.length ? words.map((w) => `"${w}"*`).join(' AND ') : null;
}

const WORD_SPLIT = /[^\p{L}\p{N}_]+/u;

function fieldScore(text: string, words: readonly string[], weight: number): number {
  if (!text) return 0;
  const tokens = text.toLowerCase().split(WORD_SPLIT);
  let score = 0;
  for (const w of words) {
    for (const t of tokens) {
      if (t === w) {
        score += weight * 2;
        break;
      }
      if (t.startsWith(w)) {
        score += weight;
        break;
      }
    }
  }
  return score;
}

function rank(c: Candidate, words: readonly string[]): number {
  let score = fieldScore(c.name, words, 20);
  score += fieldScore(c.title ?? '', words, 8);
  score += fieldScore(c.collection, words, 6);
  // Matches only in the description or property names keep the base score.
  return score;
}

/** Facet counts of the candidates by collection and registry name (both dialects). */
export function countFacets(
  rows: readonly { collection: string; registryId: number }[],
  registryNames: ReadonlyMap<number, string>,
): SearchPage['facets'] {
  const collection: Record<string, number> = {};
  const registry: Record<string, number> = {};
  for (const r of rows) {
    collection[r.collection] = (collection[r.collection] ?? 0) + 1;
    const name = registryNames.get(r.registryId) ?? '';
    registry[name] = (registry[name] ?? 0) + 1;
  }
  return { collection, registry };
}

/** The search's conditions (` AND …` each) on a table's `registry_id` and `collection` columns. */
function searchFilters(prefix: string, options: SearchOptions): { sql: string; params: unknown[] } {
  let sql = '';
  const params: unknown[] = [];
  const visible = visibleRegistriesSqlite(`${prefix}registry_id`, options.reader);
  if (visible) {
    sql += ` AND ${visible.sql}`;
    params.push(...visible.params);
  }
  if (options.registry !== undefined) {
    sql += ` AND ${prefix}registry_id IN (SELECT id FROM registries WHERE name = ?)`;
    params.push(options.registry);
  }
  if (options.collection !== undefined) {
    sql += ` AND ${prefix}collection = ?`;
    params.push(options.collection);
  }
  return { sql, params };
}

/** Prepared statements kept per search (their text varies with the caller's grants). */
const MAX_STATEMENTS = 256;

export class TemplateSearch {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly names: SimilarNames;

  constructor(private readonly store: Store) {
    this.names = new SimilarNames(
      () =>
        (this.statement("SELECT group_concat(id || ':' || generation) FROM registries").pluck().get() as
          | string
          | null) ?? '',
      () =>
        this.statement(
          'SELECT id, name, collection, registry_id AS registryId FROM templates',
        ).all() as NamedRow[],
    );
  }

  /** When no words matched: templates with names similar to the query, as on PostgreSQL. */
  private similarTo(q: string, options: SearchOptions): Candidate[] {
    if (q.trim().length < 3) return [];
    // The same visibility rule as the SQL condition (store/visibility.ts), over the registries.
    const registries = new Set(
      (
        this.statement('SELECT id, name, visibility, organisation FROM registries').all() as {
          id: number;
          name: string;
          visibility: string;
          organisation: string | null;
        }[]
      )
        .filter(
          (r) =>
            mayRead(options.reader, r) && (options.registry === undefined || r.name === options.registry),
        )
        .map((r) => r.id),
    );
    const collection = options.collection;
    const similar = this.names.similar(
      q.trim().toLowerCase(),
      (r) => registries.has(r.registryId) && (collection === undefined || r.collection === collection),
      CANDIDATES + 1,
    );
    const titles = new Map(
      (
        this.statement('SELECT id, title FROM templates WHERE id IN (SELECT value FROM json_each(?))').all(
          JSON.stringify(similar.map((r) => r.id)),
        ) as { id: number; title: string | null }[]
      ).map((r) => [r.id, r.title]),
    );
    return similar.map((r) => ({ ...r, title: titles.get(r.id) ?? null, score: 0 }));
  }

  private statement(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      if (this.statements.size >= MAX_STATEMENTS) this.statements.clear();
      stmt = this.store.sqlite.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  search(options: SearchOptions): SearchPage {
    const words = queryWords(options.q);
    const match = ftsQuery(words);
    const registryNames = new Map<number, string>();
    for (const r of this.statement('SELECT id, name FROM registries').all() as {
      id: number;
      name: string;
    }[]) {
      registryNames.set(r.id, r.name);
    }
    // Visibility and the filters go inside the bounded FTS scan (docs/server.md, "Organisations and
    // visibility"), so the candidates, totals and facets hold only what the caller may see.
    const { sql: filters, params } = searchFilters('', options);
    const { sql: plain } = searchFilters('t.', options);
    const columns =
      't.id AS id, t.name AS name, t.collection AS collection, t.title AS title, t.registry_id AS registryId, 0 AS score';
    const rows = (
      match
        ? this.statement(
            `SELECT ${columns} FROM templates t WHERE t.id IN
               (SELECT rowid FROM templates_fts WHERE templates_fts MATCH ?${filters} LIMIT ${CANDIDATES + 1})`,
          ).all(match, ...params)
        : this.statement(
            `SELECT ${columns} FROM templates t WHERE 1${plain} ORDER BY t.name, t.collection LIMIT ${CANDIDATES + 1}`,
          ).all(...params)
    ) as Candidate[];
    // Nothing matched the words: names similar to the query are the answer (similar-names.ts).
    const similar = match && rows.length === 0 ? this.similarTo(options.q, options) : [];
    rows.push(...similar);
    const totalIsLowerBound = rows.length > CANDIDATES;
    if (totalIsLowerBound) rows.length = CANDIDATES;

    let ranked = rows;
    if (match && similar.length === 0) {
      const q = options.q.trim().toLowerCase();
      const exactName = options.q.trim();
      const seen = new Set(rows.map((r) => r.id));
      if (exactName) {
        // Exactly named templates first, even when the bound cut them off.
        const exact = this.statement(`SELECT ${columns} FROM templates t WHERE t.name = ?${plain}`).all(
          exactName,
          ...params,
        ) as Candidate[];
        for (const e of exact) if (!seen.has(e.id)) rows.push(e);
      }
      // The order PostgreSQL's search has too (reads-pg.ts): exact name, name prefix, rank, name.
      const tier = (c: Candidate) => {
        const name = c.name.toLowerCase();
        return name === q ? 2 : name.startsWith(q) ? 1 : 0;
      };
      for (const r of rows) r.score = rank(r, words);
      ranked = rows.sort(
        (a, b) =>
          tier(b) - tier(a) ||
          b.score - a.score ||
          (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
          (a.collection < b.collection ? -1 : a.collection > b.collection ? 1 : 0),
      );
    }

    const facets = countFacets(ranked, registryNames);
    const page = this.statement(
      'SELECT latest_version AS latestVersion, description FROM templates WHERE id = ?',
    );
    const start = (options.page - 1) * options.limit;
    const matches: TemplateMatch[] = ranked.slice(start, start + options.limit).map((r) => {
      const extra = page.get(r.id) as
        | { latestVersion: string | null; description: string | null }
        | undefined;
      return {
        registry: registryNames.get(r.registryId) ?? '',
        collection: r.collection,
        name: r.name,
        latestVersion: extra?.latestVersion ?? null,
        title: r.title || null,
        description: extra?.description || null,
      };
    });
    return {
      query: options.q,
      total: ranked.length,
      totalIsLowerBound,
      page: options.page,
      limit: options.limit,
      matches,
      facets,
      didYouMean: similar[0]?.name ?? null,
    };
  }
}

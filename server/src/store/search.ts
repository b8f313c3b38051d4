/**
 * Search's rules, the same for both dialects (docs/server.md "The store"): the one tokeniser of
 * queries, the ranking (exact name, name prefix, where the words match, then name), and the page
 * with its totals and facets. Each dialect finds candidates its own way (sqlite/search.ts: FTS5
 * and rows held in memory; postgres/search.ts: the tsvector lexemes) and ranks them here.
 */
import type { SearchOptions, SearchPage } from './contract.js';
/**
 * Search's rules, the same for both dialects (docs/server.md "The store"): the one tokeniser of
 * queries, the ranking (exact name, name prefix, where the words match, then name), and the page
 * with its totals and facets. Each dialect finds candidates its own way (sqlite/search.ts: FTS5
 * and rows held in memory; postgres/search.ts: the tsvector index) and ranks them here.
 */

export const CANDIDATES = 1000;

/**
 * The words of a query, lower-cased: runs of letters and digits, so `exporter_node`,
 * `exporter.node` and `exporter node` are the same two words (no FTS syntax from users). The one
 * tokeniser of search queries on both dialects: FTS5's unicode61 and PostgreSQL's parser both
 * split the indexed text on `_` and punctuation, so a word never holds them.
 */
export function queryWords(q: string): string[] {
  return (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 16);
}

const WORD_CHAR = /[\p{L}\p{N}_]/u;

/** Whether the character ending just before `at` in `text` is a word character (letter, digit, `_`). */
function wordCharBefore(text: string, at: number): boolean {
  if (at === 0) return false;
  const c = text.charCodeAt(at - 1);
  if (c < 0x80) return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
  const start = c >= 0xdc00 && c <= 0xdfff && at >= 2 ? at - 2 : at - 1;
  return WORD_CHAR.test(String.fromCodePoint(text.codePointAt(start)!));
}

/** Whether the character starting at `at` in `text` is a word character. */
function wordCharAt(text: string, at: number): boolean {
  if (at >= text.length) return false;
  const c = text.charCodeAt(at);
  if (c < 0x80) return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
  return WORD_CHAR.test(String.fromCodePoint(text.codePointAt(at)!));
}

/**
 * `weight` per query word that starts a word of the lower-cased `text`, twice that when the first
 * such word is the query word itself. Scans the text in place (no split per candidate).
 */
function fieldScore(text: string, words: readonly string[], weight: number): number {
  if (!text) return 0;
  let score = 0;
  for (const w of words) {
    let at = text.indexOf(w);
    while (at !== -1 && wordCharBefore(text, at)) at = text.indexOf(w, at + 1);
    if (at !== -1) score += wordCharAt(text, at + w.length) ? weight : weight * 2;
  }
  return score;
}

export function rank(
  r: { lowerName: string; lowerTitle: string; lowerCollection: string },
  words: readonly string[],
): number {
  let score = fieldScore(r.lowerName, words, 20);
  score += fieldScore(r.lowerTitle, words, 8);
  score += fieldScore(r.lowerCollection, words, 6);
  // Matches only in the description or property names keep the base score.
  return score;
}

/**
 * The search order over candidates read from PostgreSQL (postgres/reads.ts), the rule SQLite's search
 * applies to its held rows: the exact name (case-insensitive), names starting with the query, the
 * by-field score (`rank`), then name, collection and id (code-unit order, as the held rows').
 * The rows carry their lower-cased name, title and collection.
 */
export function rankCandidates<
  T extends {
    id: number;
    name: string;
    collection: string;
    lowerName: string;
    lowerTitle: string;
    lowerCollection: string;
  },
>(rows: readonly T[], q: string, words: readonly string[]): T[] {
  const keyed = rows.map((row) => {
    const tier = row.lowerName === q ? 2 : row.lowerName.startsWith(q) ? 1 : 0;
    const score = rank(row, words);
    return { row, tier, score };
  });
  keyed.sort(
    (a, b) =>
      b.tier - a.tier ||
      b.score - a.score ||
      (a.row.name < b.row.name ? -1 : a.row.name > b.row.name ? 1 : 0) ||
      (a.row.collection < b.row.collection ? -1 : a.row.collection > b.row.collection ? 1 : 0) ||
      a.row.id - b.row.id,
  );
  return keyed.map((k) => k.row);
}

/** Scores stay below this (16 words × 68 at most); the sort key packs tier, score and name order. */
const SCORE_LIMIT = 4096;
const ORDER_LIMIT = 2 ** 32;

/** rankHeld's sort keys (grown when a ranking needs more). */
let rankKeys = new Float64Array(CANDIDATES + 64);

/**
 * `rankCandidates` over rows held in memory, each knowing its place (`order`) in `ordered`, every
 * held row by name, collection and id: the same order, as one number per row — tier, score, the
 * row's place — so the sort compares numbers only (no string comparison, no object per row).
 */
export function rankHeld<
  T extends { lowerName: string; lowerTitle: string; lowerCollection: string; order: number },
>(rows: readonly T[], ordered: readonly T[], q: string, words: readonly string[]): T[] {
  // The keys in one array reused by every ranking (searches rank one at a time), not one per search.
  if (rankKeys.length < rows.length) rankKeys = new Float64Array(Math.max(rows.length, 2 * rankKeys.length));
  const keys = rankKeys.subarray(0, rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const tier = r.lowerName === q ? 2 : r.lowerName.startsWith(q) ? 1 : 0;
    const score = Math.min(rank(r, words), SCORE_LIMIT - 1);
    keys[i] = ((2 - tier) * SCORE_LIMIT + (SCORE_LIMIT - 1 - score)) * ORDER_LIMIT + r.order;
  }
  keys.sort();
  const ranked = new Array<T>(keys.length);
  // A key is a whole number below 2^53: its low 32 bits (`>>> 0`) are the row's place.
  for (let i = 0; i < keys.length; i++) ranked[i] = ordered[keys[i]! >>> 0]!;
  return ranked;
}

/** What only the shown page's rows read from the store. */
export interface PageExtra {
  latestVersion: string | null;
  description: string | null;
}

/** The answer over ranked candidates (both dialects): totals and facets over all, the page's matches. */
export function searchPage(
  options: SearchOptions,
  ranked: readonly {
    id: number;
    name: string;
    collection: string;
    title: string | null;
    registryId: number;
  }[],
  how: {
    totalIsLowerBound: boolean;
    registryNames: ReadonlyMap<number, string>;
    extra: (id: number) => PageExtra | undefined;
    didYouMean: string | null;
  },
): SearchPage {
  const start = (options.page - 1) * options.limit;
  return {
    query: options.q,
    total: ranked.length,
    totalIsLowerBound: how.totalIsLowerBound,
    page: options.page,
    limit: options.limit,
    matches: ranked.slice(start, start + options.limit).map((r) => {
      const extra = how.extra(r.id);
      return {
        registry: how.registryNames.get(r.registryId) ?? '',
        collection: r.collection,
        name: r.name,
        latestVersion: extra?.latestVersion ?? null,
        title: r.title || null,
        description: extra?.description || null,
      };
    }),
    facets: countFacets(ranked, how.registryNames),
    didYouMean: how.didYouMean,
  };
}

/** Facet counts of the candidates by collection and registry name (both dialects). */
export function countFacets(
  rows: readonly { collection: string; registryId: number }[],
  registryNames: ReadonlyMap<number, string>,
): SearchPage['facets'] {
  // Counted in Maps (an object with many keys added one by one is slow), then made objects once.
  const collections = new Map<string, number>();
  const registries = new Map<number, number>();
  for (const r of rows) {
    collections.set(r.collection, (collections.get(r.collection) ?? 0) + 1);
    registries.set(r.registryId, (registries.get(r.registryId) ?? 0) + 1);
  }
  const collection: Record<string, number> = {};
  for (const [name, n] of collections) collection[name] = n;
  const registry: Record<string, number> = {};
  for (const [id, n] of registries) {
    const name = registryNames.get(id) ?? '';
    registry[name] = (registry[name] ?? 0) + n;
  }
  return { collection, registry };
}

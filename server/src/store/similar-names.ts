/**
 * Typo tolerance for search on both dialects (docs/server.md, "Search"): template names similar to
 * the query by pg_trgm's rule (`name % q`), so both dialects answer a misspelt query with the same
 * templates in the same order, from names held in memory (SQLite: sqlite/search.ts; PostgreSQL:
 * postgres/search.ts, the trigram index answering only while they load). A string's trigrams are
 * those of each word (letters and digits, lower-cased) padded with two spaces before and one after;
 * two strings' similarity is shared trigrams over all distinct trigrams of both; a name is similar
 * when that is at least 0.3 (pg_trgm's default `similarity_threshold`).
 *
 * The names are held with an inverted index from trigram to names, built again when any registry's
 * generation changes (every index swap or added version bumps it) once the search's rows of it are
 * loaded, or on first use, so a query costs the lengths of its trigrams' posting lists, not a scan
 * of every name; the similar rows are ordered by numbers (their places in the name order), and only
 * the returned ones are copied.
 */

/** pg_trgm's default `pg_trgm.similarity_threshold`. */
export const SIMILARITY_THRESHOLD = 0.3;

const WORD = /[\p{L}\p{N}]+/gu;

/** The distinct trigrams of `text` as pg_trgm makes them (`show_trgm`). */
export function trigrams(text: string): Set<string> {
  const out = new Set<string>();
  for (const word of text.toLowerCase().match(WORD) ?? []) {
    const padded = `  ${word} `;
    if (!/[^\x20-\x7e]/.test(word)) {
      for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.slice(i, i + 3));
    } else {
      const chars = [...padded];
      for (let i = 0; i + 2 < chars.length; i++) out.add(chars[i]! + chars[i + 1]! + chars[i + 2]!);
    }
  }
  return out;
}

/** A trigram as a key of the index: an ASCII one as a number (three 7-bit codes), another as its text. */
type TrigramKey = number | string;

/** The code of a trigram of three ASCII characters. */
const code = (a: number, b: number, c: number): number => a * 16384 + b * 128 + c;

/**
 * The distinct keys of `trigrams(text)`: for ASCII text (every template name) made from the
 * character codes directly, without a string per trigram or a Set; other text through `trigrams`.
 */
function trigramKeys(text: string): TrigramKey[] {
  const lower = text.toLowerCase();
  for (let i = 0; i < lower.length; i++) {
    if (lower.charCodeAt(i) >= 0x80) {
      const keys: TrigramKey[] = [];
      for (const t of trigrams(lower)) {
        const ascii =
          t.length === 3 && t.charCodeAt(0) < 0x80 && t.charCodeAt(1) < 0x80 && t.charCodeAt(2) < 0x80;
        keys.push(ascii ? code(t.charCodeAt(0), t.charCodeAt(1), t.charCodeAt(2)) : t);
      }
      return keys;
    }
  }
  // Each word (a run of ASCII letters and digits) padded with two spaces before and one after.
  const keys: number[] = [];
  let a = 32;
  let b = 32;
  let inWord = false;
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 32;
    if ((c >= 48 && c <= 57) || (c >= 97 && c <= 122)) {
      if (!inWord) {
        a = 32;
        b = 32;
        inWord = true;
      }
      keys.push(code(a, b, c));
      a = b;
      b = c;
    } else if (inWord) {
      keys.push(code(a, b, 32));
      inWord = false;
    }
  }
  keys.sort((x, y) => x - y);
  let distinct = 0;
  for (let i = 0; i < keys.length; i++) if (i === 0 || keys[i] !== keys[i - 1]) keys[distinct++] = keys[i]!;
  keys.length = distinct;
  return keys;
}

/** pg_trgm's `similarity(a, b)`. */
export function similarity(a: string, b: string): number {
  const ta = trigrams(a);
  const tb = trigrams(b);
  if (ta.size === 0 || tb.size === 0) return 0;
  let shared = 0;
  for (const t of ta) if (tb.has(t)) shared++;
  return shared / (ta.size + tb.size - shared);
}

/** A template row the index returns. */
export interface NamedRow {
  id: number;
  name: string;
  collection: string;
  registryId: number;
}

/** A row found similar, with its similarity to the query. */
export type SimilarRow<R extends NamedRow = NamedRow> = R & { similarity: number };

interface Built<R extends NamedRow> {
  /** Every row, by name then collection (code-unit order): a row's place is its index here. */
  ordered: readonly R[];
  /** Distinct lower-cased names' trigram counts, by name number. */
  sizes: Uint16Array;
  /** The places of name number i's rows: `places[placeStart[i]]` up to `places[placeStart[i + 1]]`. */
  placeStart: Int32Array;
  places: Int32Array;
  /** Trigram → the numbers of the names that have it. */
  postings: Map<TrigramKey, Int32Array>;
  /** Scratch counts per name for one query (zeroed again after each). */
  shared: Uint16Array;
  /** Scratch list of the names one query touched. */
  touched: Int32Array;
}

/** By name, then collection, in code-unit order (the order of pg_trgm's query, postgres/reads.ts). */
function byName(a: NamedRow, b: NamedRow): number {
  return (
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
    (a.collection < b.collection ? -1 : a.collection > b.collection ? 1 : 0)
  );
}

function build<R extends NamedRow>(given: readonly R[]): Built<R> {
  // Each row's place in the name order: the loaders hand rows in that order, checked here.
  let rows = given;
  for (let i = 1; i < rows.length; i++) {
    if (byName(rows[i - 1]!, rows[i]!) > 0) {
      rows = [...given].sort(byName);
      break;
    }
  }
  const byLowerName = new Map<string, number>();
  /** The name number of each place. */
  const nameAt = new Int32Array(rows.length);
  const lists = new Map<TrigramKey, number[]>();
  const sizes: number[] = [];
  for (let place = 0; place < rows.length; place++) {
    const r = rows[place]!;
    const key = r.name.toLowerCase();
    let at = byLowerName.get(key);
    if (at === undefined) {
      at = sizes.length;
      byLowerName.set(key, at);
      const set = trigramKeys(key);
      sizes.push(Math.min(set.length, 0xffff));
      for (const t of set) {
        const list = lists.get(t);
        if (list) list.push(at);
        else lists.set(t, [at]);
      }
    }
    nameAt[place] = at;
  }
  // Each name's places, in place order, as one array (a counting sort by name number).
  const names = sizes.length;
  const placeStart = new Int32Array(names + 1);
  for (let place = 0; place < rows.length; place++) placeStart[nameAt[place]! + 1]!++;
  for (let i = 0; i < names; i++) placeStart[i + 1]! += placeStart[i]!;
  const places = new Int32Array(rows.length);
  const next = placeStart.slice(0, names);
  for (let place = 0; place < rows.length; place++) places[next[nameAt[place]!]!++] = place;
  const postings = new Map<TrigramKey, Int32Array>();
  for (const [t, list] of lists) postings.set(t, Int32Array.from(list));
  return {
    ordered: rows,
    sizes: Uint16Array.from(sizes),
    placeStart,
    places,
    postings,
    shared: new Uint16Array(names),
    touched: new Int32Array(names),
  };
}

/**
 * The names of a store, indexed by trigram. `load` reads every template's row; `version` is a
 * cheap fingerprint of the indexes (the registries' ids and generations): the rows are read again
 * only when it changes.
 */
export class SimilarNames<R extends NamedRow = NamedRow> {
  private built: Built<R> | undefined;
  private builtFor: string | undefined;

  constructor(
    private readonly version: () => string,
    private readonly load: () => R[],
  ) {}

  /** Builds the index now if the rows changed since it was built (after a load, not on a query). */
  prepare(): void {
    this.index();
  }

  private index(): Built<R> {
    const version = this.version();
    if (!this.built || this.builtFor !== version) {
      this.built = build(this.load());
      this.builtFor = version;
    }
    return this.built;
  }

  /**
   * Rows whose name is similar to `query`, most similar first, then by name and collection (the
   * order of postgres/reads.ts), keeping those `keep` accepts, at most `limit`.
   */
  similar(query: string, keep: (row: R) => boolean, limit: number): SimilarRow<R>[] {
    const q = trigramKeys(query);
    if (q.length === 0) return [];
    const index = this.index();
    const { shared, sizes, touched } = index;
    let touchedCount = 0;
    for (const t of q) {
      const list = index.postings.get(t);
      if (!list) continue;
      for (let k = 0; k < list.length; k++) {
        const i = list[k]!;
        const count = shared[i]!;
        shared[i] = count + 1;
        if (count === 0) touched[touchedCount++] = i;
      }
    }
    // The similar rows as (place, similarity) pairs; rows are made only for the ones returned.
    const { ordered } = index;
    const places: number[] = [];
    const similarities: number[] = [];
    for (let k = 0; k < touchedCount; k++) {
      const i = touched[k]!;
      const count = shared[i]!;
      shared[i] = 0;
      const sim = count / (q.length + sizes[i]! - count);
      if (sim < SIMILARITY_THRESHOLD) continue;
      for (let at = index.placeStart[i]!; at < index.placeStart[i + 1]!; at++) {
        const place = index.places[at]!;
        if (!keep(ordered[place]!)) continue;
        places.push(place);
        similarities.push(sim);
      }
    }
    // Most similar first, then by name and collection (the rows' places): numbers compared only.
    const order = Array.from(places.keys());
    order.sort((a, b) => similarities[b]! - similarities[a]! || places[a]! - places[b]!);
    if (order.length > limit) order.length = limit;
    return order.map((k) => ({ ...ordered[places[k]!]!, similarity: similarities[k]! }));
  }
}

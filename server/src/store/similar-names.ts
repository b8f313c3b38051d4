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
 * generation changes (every index swap or added version bumps it) in slices with the search's
 * rows of it (slices.ts: the event loop turns between them), or on first use, so a query costs the
 * lengths of its trigrams' posting lists, not a scan of every name; the similar rows are ordered
 * by numbers (their places in the name order), and the held rows are returned (none copied).
 */
import { atOnce, type Steps, sortInSlices } from './slices.js';

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

/**
 * Trigrams as numbers. A trigram of ASCII characters holds only spaces, digits and lower-case
 * letters (words are runs of letters and digits, lower-cased, padded with spaces): 37 codes each,
 * so it is a number below ASCII_KEYS made from the character codes directly. Another trigram
 * (with a non-ASCII letter) is numbered from ASCII_KEYS up by the index that holds it.
 */
const ASCII_KEYS = 37 * 37 * 37;
const CODE37 = new Int8Array(128).fill(-1);
CODE37[32] = 0;
for (let c = 48; c <= 57; c++) CODE37[c] = c - 47;
for (let c = 97; c <= 122; c++) CODE37[c] = c - 86;

/** Whether character code `c` is one of the 37 a trigram key is made of. */
const coded = (c: number): boolean => c < 0x80 && CODE37[c]! >= 0;

const code = (a: number, b: number, c: number): number => CODE37[a]! * 1369 + CODE37[b]! * 37 + CODE37[c]!;

/**
 * Writes the distinct keys of the lower-cased `lower`'s trigrams into `out` from `at` (room for
 * 2 × length + 2 keys needed) and returns where they end. A non-ASCII trigram is numbered by
 * `others` (a new one added when `add`, otherwise one not held is -1, -2, …: counted, matching
 * nothing). For ASCII text (every template name) no string is made per trigram.
 */
function writeKeys(
  lower: string,
  out: Int32Array,
  at: number,
  others: Map<string, number>,
  add: boolean,
): number {
  const begin = at;
  for (let i = 0; i < lower.length; i++) {
    if (lower.charCodeAt(i) < 0x80) continue;
    let unknown = 0;
    for (const t of trigrams(lower)) {
      const ascii =
        t.length === 3 && coded(t.charCodeAt(0)) && coded(t.charCodeAt(1)) && coded(t.charCodeAt(2));
      let key = ascii ? code(t.charCodeAt(0), t.charCodeAt(1), t.charCodeAt(2)) : others.get(t);
      if (key === undefined) {
        if (add) {
          key = ASCII_KEYS + others.size;
          others.set(t, key);
        } else key = -1 - unknown++;
      }
      out[at++] = key;
    }
    return at;
  }
  // Each word (a run of ASCII letters and digits) padded with two spaces before and one after.
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
      out[at++] = code(a, b, c);
      a = b;
      b = c;
    } else if (inWord) {
      out[at++] = code(a, b, 32);
      inWord = false;
    }
  }
  out.subarray(begin, at).sort();
  let end = begin;
  for (let i = begin; i < at; i++) if (i === begin || out[i] !== out[i - 1]) out[end++] = out[i]!;
  return end;
}

/** Room `writeKeys` needs for `text`. */
const roomFor = (text: string): number => 2 * text.length + 2;

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

/** The names' trigram index (`indexNames`), held by `SimilarNames`. */
export interface NameIndex<R extends NamedRow = NamedRow> {
  /** Every row, by name then collection (code-unit order): a row's place is its index here. */
  ordered: readonly R[];
  /** Distinct lower-cased names' trigram counts, by name number. */
  sizes: Uint16Array;
  /** The places of name number i's rows: `places[placeStart[i]]` up to `places[placeStart[i + 1]]`. */
  placeStart: Int32Array;
  places: Int32Array;
  /** The numbers of the names with trigram key k: `postings[postingStart[k]]` up to `postingStart[k + 1]`. */
  postingStart: Int32Array;
  postings: Int32Array;
  /** Non-ASCII trigrams' keys. */
  others: Map<string, number>;
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

/** Names between two pauses of `indexNames`. */
const NAMES_STEP = 1024;

/**
 * The trigram index of `given` (in name order; sorted here when not), built in steps (slices.ts):
 * each distinct lower-cased name's keys written into one array, then the posting lists made from
 * it by a counting sort over the keys (no list or Map entry per trigram).
 */
export function* indexNames<R extends NamedRow>(given: readonly R[]): Steps<NameIndex<R>> {
  let rows = given;
  for (let i = 1; i < rows.length; i++) {
    if (i % NAMES_STEP === 0) yield;
    if (byName(rows[i - 1]!, rows[i]!) > 0) {
      rows = yield* sortInSlices([...given], byName);
      break;
    }
  }
  const byLowerName = new Map<string, number>();
  /** The name number of each place. */
  const nameAt = new Int32Array(rows.length);
  /** Name number i's keys: `keys[keyStart[i]]` up to `keys[keyStart[i + 1]]`. */
  const keyStart = new Int32Array(rows.length + 1);
  let keys = new Int32Array(Math.max(1024, rows.length * 24));
  let end = 0;
  let names = 0;
  const others = new Map<string, number>();
  for (let place = 0; place < rows.length; place++) {
    if (place % NAMES_STEP === NAMES_STEP - 1) yield;
    const lower = rows[place]!.name.toLowerCase();
    let at = byLowerName.get(lower);
    if (at === undefined) {
      at = names++;
      byLowerName.set(lower, at);
      keyStart[at] = end;
      if (end + roomFor(lower) > keys.length) {
        const grown = new Int32Array(Math.max(keys.length * 2, end + roomFor(lower)));
        grown.set(keys.subarray(0, end));
        keys = grown;
      }
      end = writeKeys(lower, keys, end, others, true);
    }
    nameAt[place] = at;
  }
  keyStart[names] = end;
  yield;
  const sizes = new Uint16Array(names);
  for (let i = 0; i < names; i++) sizes[i] = Math.min(keyStart[i + 1]! - keyStart[i]!, 0xffff);
  // Posting lists by a counting sort over the keys; each list in name-number order.
  const space = ASCII_KEYS + others.size;
  const postingStart = new Int32Array(space + 1);
  // Every loop over the keys (about 20 a name) or the names pauses.
  for (let k = 0; k < end; k++) {
    postingStart[keys[k]! + 1]!++;
    if (k % (NAMES_STEP * 16) === 0) yield;
  }
  for (let k = 0; k < space; k++) postingStart[k + 1]! += postingStart[k]!;
  yield;
  const postings = new Int32Array(end);
  const fill = postingStart.slice(0, space);
  for (let i = 0; i < names; i++) {
    if (i % (NAMES_STEP * 4) === 0) yield;
    for (let k = keyStart[i]!; k < keyStart[i + 1]!; k++) postings[fill[keys[k]!]!++] = i;
  }
  // Each name's places, in place order, as one array (a counting sort by name number).
  const placeStart = new Int32Array(names + 1);
  for (let place = 0; place < rows.length; place++) placeStart[nameAt[place]! + 1]!++;
  yield;
  for (let i = 0; i < names; i++) placeStart[i + 1]! += placeStart[i]!;
  const places = new Int32Array(rows.length);
  const next = placeStart.slice(0, names);
  yield;
  for (let place = 0; place < rows.length; place++) places[next[nameAt[place]!]!++] = place;
  return {
    ordered: rows,
    sizes,
    placeStart,
    places,
    postingStart,
    postings,
    others,
    shared: new Uint16Array(names),
    touched: new Int32Array(names),
  };
}

/**
 * The names of a store, indexed by trigram. `load` reads every template's row; `version` is a
 * cheap fingerprint of the indexes (the registries' ids and generations): the rows are read again
 * only when it changes, unless an index of that version was built aside and held (`hold`).
 */
export class SimilarNames<R extends NamedRow = NamedRow> {
  private built: NameIndex<R> | undefined;
  private builtFor: string | undefined;

  constructor(
    private readonly version: () => string,
    private readonly load: () => readonly R[],
  ) {}

  /** Builds the index now if the rows changed since it was built (after a load, not on a query). */
  prepare(): void {
    this.index();
  }

  /** Holds `index` (built in slices by `indexNames`) as the index of `version`. */
  hold(index: NameIndex<R>, version: string): void {
    this.built = index;
    this.builtFor = version;
  }

  private index(): NameIndex<R> {
    const version = this.version();
    if (!this.built || this.builtFor !== version) {
      this.built = atOnce(indexNames(this.load()));
      this.builtFor = version;
    }
    return this.built;
  }

  /**
   * Rows whose name is similar to `query`, most similar first, then by name and collection (the
   * order of postgres/reads.ts), keeping those `keep` accepts, at most `limit`.
   */
  similar(query: string, keep: (row: R) => boolean, limit: number): R[] {
    const lower = query.toLowerCase();
    const index = this.index();
    const q = new Int32Array(roomFor(lower));
    const count = writeKeys(lower, q, 0, index.others, false);
    if (count === 0) return [];
    const { shared, sizes, touched, postings, postingStart } = index;
    let touchedCount = 0;
    for (let t = 0; t < count; t++) {
      const key = q[t]!;
      if (key < 0 || key >= postingStart.length - 1) continue;
      for (let k = postingStart[key]!; k < postingStart[key + 1]!; k++) {
        const i = postings[k]!;
        const n = shared[i]!;
        shared[i] = n + 1;
        if (n === 0) touched[touchedCount++] = i;
      }
    }
    // The similar rows as (place, similarity) pairs; rows are looked up only for the ones returned.
    const { ordered } = index;
    const places: number[] = [];
    const similarities: number[] = [];
    for (let k = 0; k < touchedCount; k++) {
      const i = touched[k]!;
      const n = shared[i]!;
      shared[i] = 0;
      const sim = n / (count + sizes[i]! - n);
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
    return order.map((k) => ordered[places[k]!]!);
  }
}

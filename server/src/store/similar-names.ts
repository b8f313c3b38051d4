/**
 * Typo tolerance for search on SQLite (docs/server.md, "Search"): template names similar to the
 * query by the rule PostgreSQL's pg_trgm applies there (postgres/reads.ts: `name % q`), so both dialects
 * answer a misspelt query with the same templates. A string's trigrams are those of each word
 * (letters and digits, lower-cased) padded with two spaces before and one after; two strings'
 * similarity is shared trigrams over all distinct trigrams of both; a name is similar when that is
 * at least 0.3 (pg_trgm's default `similarity_threshold`).
 *
 * The names are held in memory with an inverted index from trigram to names, built again when any
 * registry's generation changes (every index swap or added version bumps it) once the search's rows
 * of it are loaded (search.ts), or on first use, so a query costs the lengths of its trigrams'
 * posting lists, not a scan of every name.
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
export interface SimilarRow extends NamedRow {
  similarity: number;
}

interface Built {
  /** Distinct lower-cased names' trigram counts and rows, by name number. */
  sizes: Uint16Array;
  rows: NamedRow[][];
  /** Trigram → the numbers of the names that have it. */
  postings: Map<string, Int32Array>;
  /** Scratch counts per name for one query (zeroed again after each). */
  shared: Uint16Array;
}

function build(rows: readonly NamedRow[]): Built {
  const byName = new Map<string, number>();
  const grouped: NamedRow[][] = [];
  const lists = new Map<string, number[]>();
  const sizes: number[] = [];
  for (const r of rows) {
    const key = r.name.toLowerCase();
    let at = byName.get(key);
    if (at === undefined) {
      at = grouped.length;
      byName.set(key, at);
      grouped.push([]);
      const set = trigrams(key);
      sizes.push(Math.min(set.size, 0xffff));
      for (const t of set) {
        const list = lists.get(t);
        if (list) list.push(at);
        else lists.set(t, [at]);
      }
    }
    grouped[at]!.push(r);
  }
  const postings = new Map<string, Int32Array>();
  for (const [t, list] of lists) postings.set(t, Int32Array.from(list));
  return {
    sizes: Uint16Array.from(sizes),
    rows: grouped,
    postings,
    shared: new Uint16Array(grouped.length),
  };
}

/**
 * The names of a store, indexed by trigram. `load` reads every template's row; `version` is a
 * cheap fingerprint of the indexes (the registries' ids and generations): the rows are read again
 * only when it changes.
 */
export class SimilarNames {
  private built: Built | undefined;
  private builtFor: string | undefined;

  constructor(
    private readonly version: () => string,
    private readonly load: () => NamedRow[],
  ) {}

  /** Builds the index now if the rows changed since it was built (after a load, not on a query). */
  prepare(): void {
    this.index();
  }

  private index(): Built {
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
  similar(query: string, keep: (row: NamedRow) => boolean, limit: number): SimilarRow[] {
    const q = trigrams(query);
    if (q.size === 0) return [];
    const index = this.index();
    const { shared, sizes } = index;
    const touched: number[] = [];
    for (const t of q) {
      const list = index.postings.get(t);
      if (!list) continue;
      for (let k = 0; k < list.length; k++) {
        const i = list[k]!;
        const count = shared[i]!;
        shared[i] = count + 1;
        if (count === 0) touched.push(i);
      }
    }
    const found: SimilarRow[] = [];
    for (const i of touched) {
      const count = shared[i]!;
      shared[i] = 0;
      const sim = count / (q.size + sizes[i]! - count);
      if (sim < SIMILARITY_THRESHOLD) continue;
      for (const row of index.rows[i]!) if (keep(row)) found.push({ ...row, similarity: sim });
    }
    found.sort(
      (a, b) =>
        b.similarity - a.similarity ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
        (a.collection < b.collection ? -1 : a.collection > b.collection ? 1 : 0),
    );
    return found.slice(0, limit);
  }
}

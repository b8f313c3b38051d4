// PostgreSQL only: each registry's tsvector lexemes held in memory for the word match; the ranking is ../search.ts's.
/**
 * The PostgreSQL search's word match held in memory (docs/server.md, "Store"): each registry's
 * templates with the lexemes of their generated `templates.search` vector (`tsvector_to_array`,
 * so the words are PostgreSQL's own), loaded again in the background when the registry's
 * generation changes (every index swap or added version bumps it; `warm`), never on a search
 * request once held: postgres/reads.ts answers from the database meanwhile. A query word matches a template when it is a prefix of
 * one of its lexemes — what `word:*` means to `@@` — found by binary search in the registry's
 * sorted lexemes; every word must match. The GIN prefix scan this replaces merged the posting
 * lists of every lexeme with the prefix, 5–10 ms a query at 100,000 templates. The held rows are
 * ranked by their place in the name order (store/search.ts `rankHeld`), and a query whose words
 * match nothing is answered from their names by pg_trgm's rule (similar-names.ts), as on SQLite.
 */

import type { Reader, RegistryGeneration } from '../contract.js';
import {
  arrange,
  type HeldGeneration,
  type HeldRow,
  HeldRowMaker,
  HeldRows,
  type MatchRow,
  type ReadRow,
  Warming,
} from '../held-rows.js';
import { rankHeld } from '../search.js';
import { indexNames } from '../similar-names.js';
import { atOnce, byCodeUnits, inSlices, type Steps, sortInSlices } from '../slices.js';
import { mayRead } from '../visibility.js';
import type { PostgresStore } from './open.js';

export interface PgRegistryRow {
  id: number;
  name: string;
  visibility: string;
  organisation: string | null;
  generation: number;
}

/** A matched template (held-rows.ts `MatchRow`, the same on both dialects), by its older name. */
export type PgMatchRow = MatchRow;

interface HeldRegistry extends HeldGeneration<HeldRow> {
  /** By id. */
  rows: HeldRow[];
  /**
   * Every distinct lexeme, in code-unit order, and the indexes (into rows) of its templates: lexeme
   * k's are `postings[postingStart[k]]` up to `postingStart[k + 1]`, so the lexemes a word starts
   * (a run of `lexemes`) have their postings in one run too (one array, not one per lexeme).
   */
  lexemes: Lexemes;
  postingStart: Int32Array;
  postings: Int32Array;
  /**
   * seen[i] - `seenBase`: how many words row i matched in the search running now (reused by each
   * search, they run one at a time; each search starts above the last one's counts, so nothing is
   * cleared per search).
   */
  seen: Int32Array;
  seenBase: number;
}

/**
 * A registry's distinct lexemes in code-unit order, held as one string: lexeme k is
 * `text.slice(start[k], start[k + 1])`. One string and one typed array, where a string per
 * lexeme (about two per template: the name's compound and its number) was as many objects in the
 * heap for the collector to trace.
 */
interface Lexemes {
  text: string;
  start: Int32Array;
  count: number;
}

/** Lexeme k against `word` in code-unit order, as `<` compares strings: below 0, 0 or above 0. */
function compareLexeme(lexemes: Lexemes, k: number, word: string): number {
  const { text, start } = lexemes;
  const from = start[k]!;
  const length = start[k + 1]! - from;
  const n = Math.min(length, word.length);
  for (let i = 0; i < n; i++) {
    const d = text.charCodeAt(from + i) - word.charCodeAt(i);
    if (d !== 0) return d;
  }
  return length - word.length;
}

/** Whether lexeme k starts with `word`. */
function lexemeStartsWith(lexemes: Lexemes, k: number, word: string): boolean {
  const { text, start } = lexemes;
  const from = start[k]!;
  if (start[k + 1]! - from < word.length) return false;
  for (let i = 0; i < word.length; i++) if (text.charCodeAt(from + i) !== word.charCodeAt(i)) return false;
  return true;
}

/** The first index in `lexemes` whose lexeme is not below `word`. */
function lowerBound(lexemes: Lexemes, word: string): number {
  let lo = 0;
  let hi = lexemes.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareLexeme(lexemes, mid, word) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A template row as read for holding, with its lexemes as a JSON array (`array_to_json`): parsed
 * by JSON.parse in `Holding.add`'s slices, where the driver's own parse of a text[] ran in the turn
 * the statement's result arrived, several times slower.
 */
type LoadedRow = ReadRow & { lexemes: string };

/** Lexemes between two pauses of `holding`. */
const STEP = 1024;

/** Rows between two pauses of `Holding.add` (about 17 lexemes each, a JSON.parse each). */
const ROW_STEP = 64;

/**
 * A registry's rows made ready for matching, fed a step of rows at a time (`add`), then finished
 * (`finish`: the lexemes sorted, their posting lists), each in steps (slices.ts).
 */
class Holding {
  private readonly byLexeme = new Map<string, number[]>();
  private readonly maker = new HeldRowMaker();
  private readonly held: HeldRow[] = [];

  *add(rows: readonly LoadedRow[]): Steps<void> {
    for (let k = 0; k < rows.length; k++) {
      const r = rows[k]!;
      const i = this.held.length;
      for (const lexeme of JSON.parse(r.lexemes) as string[]) {
        const list = this.byLexeme.get(lexeme);
        if (list) list.push(i);
        else this.byLexeme.set(lexeme, [i]);
      }
      this.held.push(this.maker.of(r));
      if (k % ROW_STEP === ROW_STEP - 1) yield;
    }
  }

  *finish(generation: number): Steps<HeldRegistry> {
    const { byLexeme, held } = this;
    // Every loop over the lexemes pauses (100,000 templates have about as many).
    const unsorted: string[] = [];
    for (const lexeme of byLexeme.keys()) {
      unsorted.push(lexeme);
      if (unsorted.length % STEP === 0) yield;
    }
    const lexemes = yield* sortInSlices(unsorted, byCodeUnits);
    // Held as one string (Lexemes), joined a step of lexemes at a time.
    const start = new Int32Array(lexemes.length + 1);
    const chunks: string[] = [];
    for (let k = 0; k < lexemes.length; k += STEP) {
      const chunk = lexemes.slice(k, k + STEP);
      for (let j = 0; j < chunk.length; j++) start[k + j + 1] = start[k + j]! + chunk[j]!.length;
      chunks.push(chunk.join(''));
      yield;
    }
    const postingStart = new Int32Array(lexemes.length + 1);
    for (let k = 0; k < lexemes.length; k++) {
      postingStart[k + 1] = postingStart[k]! + byLexeme.get(lexemes[k]!)!.length;
      if (k % STEP === STEP - 1) yield;
    }
    const postings = new Int32Array(postingStart[lexemes.length]!);
    for (let k = 0; k < lexemes.length; k++) {
      postings.set(byLexeme.get(lexemes[k]!)!, postingStart[k]!);
      if (k % STEP === STEP - 1) yield;
    }
    return {
      generation,
      rows: held,
      lexemes: { text: chunks.join(''), start, count: lexemes.length },
      postingStart,
      postings,
      seen: new Int32Array(held.length),
      seenBase: 1,
    };
  }
}

/**
 * Rows and bytes (of name, title and lexemes) read per statement of a load, whichever comes
 * first (always at least one row); each step's rows are made ready in slices before the next is
 * read. The driver parses a statement's result in the turn of the event loop it arrives in (the
 * socket's reads of one turn: up to 2 MB), so this bounds that turn: 5,000 rows a statement were
 * 40–65 ms of the main thread's CPU without a turn at 100,000 templates (docs/server.md, "Search
 * after an index swap").
 */
const LOAD_ROWS = 1000;
const LOAD_BYTES = 64 * 1024;

/** The end of the run of `lexemes` from `first` that `word` starts (binary search). */
function prefixEnd(lexemes: Lexemes, word: string, first: number): number {
  let lo = first;
  let hi = lexemes.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (lexemeStartsWith(lexemes, mid, word)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Whether the caller may read registry `r` (store/visibility.ts) and asked for it. */
function visibleTo(r: PgRegistryRow, options: { reader: Reader; registry?: string | undefined }): boolean {
  return mayRead(options.reader, r) && (options.registry === undefined || r.name === options.registry);
}

/**
 * The held rows (held-rows.ts) with their lexemes. A misspelt query is answered from the held
 * names by trigram (`names`, similar-names.ts, pg_trgm's rule), not by the trigram index, whose
 * posting lists for common trigrams (`red`, ` re`) made the database read and recheck thousands of
 * rows (20-30 ms a query at 100,000 templates).
 */
export class PgTemplateWords extends HeldRows<HeldRegistry> {
  constructor(private readonly store: PostgresStore) {
    super();
  }

  /**
   * A registry's rows and lexemes at its current generation (at least `generation`), read
   * at most LOAD_ROWS rows and about LOAD_BYTES per statement by id and made ready in slices
   * between them: no result of every row and lexeme held at once, no long parse. Undefined when the generation moved on meanwhile (a
   * swap: its warm loads the new one) or the registry went.
   */
  private async load(id: number, generation: number): Promise<HeldRegistry | undefined> {
    // The same generation before the first step and after the last: no swap committed between
    // them (every change of a registry's templates bumps it), so the steps read one index.
    const generationNow = async () =>
      (
        await this.store.pool.query<{ generation: number }>({
          name: 'search-held-generation',
          text: 'SELECT generation FROM registries WHERE id = $1',
          values: [id],
        })
      ).rows[0]?.generation;
    const read = await generationNow();
    if (read === undefined || read < generation) return undefined;
    const holding = new Holding();
    let after = 0;
    for (;;) {
      // The next LOAD_ROWS rows by id (their lexemes made JSON after the LIMIT: for those rows
      // only, whatever the plan), cut where their bytes, counted up in id order, pass LOAD_BYTES.
      const { rows } = await this.store.pool.query<LoadedRow>({
        name: 'search-held-rows',
        text: `SELECT id, name, collection, title, "registryId", lexemes FROM (
                 SELECT *, sum(bytes) OVER (ORDER BY id) - bytes AS before FROM (
                   SELECT *, octet_length(name) + coalesce(octet_length(title), 0) + octet_length(lexemes) AS bytes FROM (
                     SELECT id, name, collection, title, registry_id AS "registryId",
                            array_to_json(tsvector_to_array(search))::text AS lexemes
                     FROM (SELECT id, name, collection, title, registry_id, search FROM templates
                           WHERE registry_id = $1 AND id > $2 ORDER BY id LIMIT ${LOAD_ROWS}) page
                   ) read
                 ) sized
               ) counted WHERE before < ${LOAD_BYTES} ORDER BY id`,
        values: [id, after],
      });
      if (rows.length === 0) break;
      await inSlices(holding.add(rows));
      after = rows[rows.length - 1]!.id;
    }
    if ((await generationNow()) !== read) return undefined;
    return inSlices(holding.finish(read));
  }

  /** Whether `warm` was ever called (a service runs): then no load is made on a request. */
  private warmed = false;
  /** One warm at a time, going on with the generations last asked for. */
  private readonly warming = new Warming<readonly RegistryGeneration[]>((wanted) => this.bringIn(wanted));

  /**
   * Loads, on the request, the registries never held yet where nothing has asked for a load in
   * the background (`warm`: a store read without a service, as in the benches): what the first
   * search did before loads were made in the background.
   */
  async loadNew(registries: readonly RegistryGeneration[]): Promise<void> {
    if (this.warmed) return;
    if (registries.some((r) => !this.registries.has(r.id))) await this.kick(registries);
  }

  /**
   * Whether every registry is held at (at least) the generation `registries` says, so a search can
   * be answered from the held rows. When not, the missing generations are loaded in the background
   * (`warm`) and the caller answers from the database meanwhile: no request waits for a load.
   */
  ready(registries: readonly RegistryGeneration[]): boolean {
    const ready = this.holds(registries);
    if (!ready) void this.kick(registries);
    return ready;
  }

  /** Whether every registry is held at (at least) the generation `registries` says (nothing loaded). */
  holds(registries: readonly RegistryGeneration[]): boolean {
    if (registries.length !== this.registries.size) return false;
    for (const r of registries)
      if ((this.registries.get(r.id)?.generation ?? -1) < r.generation) return false;
    return true;
  }

  /**
   * Brings the held registries up to `registries`' generations (every registry; the others are
   * dropped), in the background of an index swap (docs/server.md, "Store"): the rows, their order
   * and the names' trigram index are made aside in slices (slices.ts) and held in one step once
   * every new generation is read whole, so a search never sees half of one and no request waits
   * behind the work. A failed load is left for the next swap, watch tick or search to start
   * again; it never rejects.
   */
  warm(registries: readonly RegistryGeneration[]): Promise<void> {
    this.warmed = true;
    return this.kick(registries);
  }

  /** Starts (or asks the warm in flight to go on with) bringing the rows up to `registries`. */
  private kick(registries: readonly RegistryGeneration[]): Promise<void> {
    return this.warming.kick(registries);
  }

  /** Loads the registries' generations not held (the others are dropped), then holds them in one step. */
  private async bringIn(registries: readonly RegistryGeneration[]): Promise<void> {
    const next = new Map<number, HeldRegistry>();
    let changed = registries.length !== this.registries.size;
    let loaded = 0;
    await Promise.all(
      registries.map(async (r) => {
        const current = this.registries.get(r.id);
        if ((current?.generation ?? -1) >= r.generation) {
          next.set(r.id, current!);
          return;
        }
        try {
          const value = await this.load(r.id, r.generation);
          if (value) {
            next.set(r.id, value);
            changed = true;
            loaded++;
            return;
          }
        } catch {
          // The database away: the next warm loads it.
        }
        // Moved on or gone meanwhile, or the database away: kept as it was, the next warm loads it.
        if (current) next.set(r.id, current);
      }),
    );
    if (!changed) return;
    // The name order and the names' trigram index follow the held rows: made aside in slices,
    // once the loads are in (not per registry loaded nor on a query), then held with them.
    const byId = new Map([...next].sort(([a], [b]) => a - b));
    const arranged = this.warmed ? await inSlices(arrange(byId)) : atOnce(arrange(byId));
    const names = this.warmed ? await inSlices(indexNames(arranged.ordered)) : undefined;
    this.hold(arranged, names, loaded);
  }

  /** Every held row in name, collection and id order, each row's `order` its place there. */
  private orderedRows(): HeldRow[] {
    return this.ordered;
  }

  /**
   * Matched held rows (`match`) in the search's order (store/search.ts `rankHeld`: exact name, name
   * prefix, by-field score, then name, collection and id).
   */
  rank(rows: readonly HeldRow[], q: string, words: readonly string[]): HeldRow[] {
    return rankHeld(rows, this.orderedRows(), q, words);
  }

  /**
   * The first `bound` + 1 templates (by name, collection and id) of the registries the caller may
   * read and asked for: the empty query's listing.
   */
  listed(
    registries: readonly PgRegistryRow[],
    options: { reader: Reader; registry?: string | undefined; collection?: string | undefined },
    bound: number,
  ): HeldRow[] {
    const ordered = this.orderedRows();
    const visible = new Set(registries.filter((r) => visibleTo(r, options)).map((r) => r.id));
    const listed: HeldRow[] = [];
    for (const row of ordered) {
      if (!visible.has(row.registryId)) continue;
      if (options.collection !== undefined && row.collection !== options.collection) continue;
      listed.push(row);
      if (listed.length > bound) break;
    }
    return listed;
  }

  /** marks[row.order] === mark: the row is found by the search running now (`match`). */
  private marks = new Int32Array(0);
  private mark = 0;

  /**
   * The templates of the registries the caller may read (and asked for) whose lexemes every word
   * starts, in registry and id order, at most `bound`; the exactly named ones (lower-cased
   * `exact`) are added however far the bound is. `bounded` says more matched than `bound`.
   * Allocates only the rows found (docs/server.md, "Search"): the counts per row and the marks
   * of the rows found are held arrays, reused by each search.
   */
  match(
    registries: readonly PgRegistryRow[],
    options: {
      words: readonly string[];
      exact: string;
      reader: Reader;
      registry?: string | undefined;
      collection?: string | undefined;
    },
    bound: number,
  ): { rows: HeldRow[]; bounded: boolean } {
    // Room for the bound made at the first row found (not grown push by push), cut to what was found.
    let found: HeldRow[] = [];
    let count = 0;
    const { words, collection } = options;
    let bounded = false;
    if (this.marks.length < this.ordered.length) this.marks = new Int32Array(this.ordered.length);
    const { marks } = this;
    if (++this.mark === 0x7fffffff) {
      marks.fill(0);
      this.mark = 1;
    }
    const mark = this.mark;
    // In registry id order (the registries are read by id; sorted here when they were not).
    const inOrder = registries.every((r, i) => i === 0 || registries[i - 1]!.id < r.id)
      ? registries
      : [...registries].sort((a, b) => a.id - b.id);
    for (const r of inOrder) {
      if (!visibleTo(r, options)) continue;
      const held = this.registries.get(r.id);
      // No words left (a query of `_` only): nothing matches, as `to_tsquery` finds nothing.
      if (!held || bounded || words.length === 0) continue;
      const { lexemes, postingStart, postings, seen } = held;
      // seen[i] - base counts the words row i matched so far (each word counted once per row).
      // Each search's counts start above the last one's (the array is cleared once in 2^31 counts).
      if (held.seenBase > 0x7fffffff - 2 * (words.length + 1)) {
        seen.fill(0);
        held.seenBase = 1;
      }
      const base = held.seenBase;
      held.seenBase += words.length + 1;
      let none = false;
      for (let k = 0; k < words.length && !none; k++) {
        const word = words[k]!;
        const first = lowerBound(lexemes, word);
        const start = postingStart[first]!;
        const end = postingStart[prefixEnd(lexemes, word, first)]!;
        // A word no lexeme starts: no row matches every word.
        if (start === end) none = true;
        // A row at base or below (a count of an earlier search) has matched no word of this one.
        const counted = base + k;
        if (k === 0) {
          for (let j = start; j < end; j++) if (seen[postings[j]!]! <= base) seen[postings[j]!] = base + 1;
        } else {
          for (let j = start; j < end; j++)
            if (seen[postings[j]!] === counted) seen[postings[j]!] = counted + 1;
        }
      }
      if (none) continue;
      const all = base + words.length;
      for (let i = 0; i < seen.length; i++) {
        if (seen[i] !== all) continue;
        const row = held.rows[i]!;
        if (collection !== undefined && row.collection !== collection) continue;
        if (count === bound) {
          bounded = true;
          break;
        }
        if (count === 0) found = new Array<HeldRow>(Math.min(bound, this.ordered.length));
        found[count++] = row;
        marks[row.order] = mark;
      }
    }
    found.length = count;
    // The exactly named (held-rows.ts `named`, in name order), where not found already.
    for (const row of this.named(options.exact)) {
      if (marks[row.order] === mark || (collection !== undefined && row.collection !== collection)) continue;
      const r = registries.find((r) => r.id === row.registryId);
      if (r && visibleTo(r, options)) found.push(row);
    }
    return { rows: found, bounded };
  }

  /**
   * The held templates whose name is similar to `query` (pg_trgm's `name % query`, similar-names.ts)
   * in the registries the caller may read (and asked for), most similar first, then by name and
   * collection, at most `limit`.
   */
  similar(
    registries: readonly PgRegistryRow[],
    options: { reader: Reader; registry?: string | undefined; collection?: string | undefined },
    query: string,
    limit: number,
  ): HeldRow[] {
    const visible = new Set<number>();
    for (const r of registries) {
      if (visibleTo(r, options)) visible.add(r.id);
    }
    return this.names.similar(
      query,
      (row) =>
        visible.has(row.registryId) &&
        (options.collection === undefined || row.collection === options.collection),
      limit,
    );
  }
}

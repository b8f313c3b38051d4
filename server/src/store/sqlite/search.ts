// SQLite only: full-text candidates from FTS5 (migrations 0001/0002) and the rows held per generation; the ranking is ../search.ts's.
/**
 * Template search (docs/server.md "HTTP API", "Read path") over the FTS5 table (migrations 0001/0002): every word
 * of the query must match, as a prefix, a word of the name, collection, schema title/description
 * or property names. The prefix index (`prefix='2 3'`) finds matches; the candidate set is
 * bounded (CANDIDATES, read from the FTS table alone, no join) and ranked here — exact name, name
 * prefix, then by where the words match (name words, title, collection, then the rest), then
 * name, the order PostgreSQL's search has as far as FTS5 allows (postgres/reads.ts) — because
 * bm25 over a large match set is what makes the tail slow (§7: 55 ms p99). Templates named
 * exactly like the query always come first, even beyond the bound. Facets and `total` count the
 * candidate set; `totalIsLowerBound` says when more matched. What the caller may not read is
 * excluded inside the scan (store/visibility.ts), before the bound, totals and facets. The rows
 * the ranking reads are held in memory per registry generation (TemplateRows), loaded in the
 * background of an index swap; a search during that load is answered from SQLite alone.
 */
import type Database from 'better-sqlite3';
import type { RegistryGeneration, SearchCounters, SearchOptions, SearchPage } from '../contract.js';
import {
  arrange,
  type HeldGeneration,
  type HeldRow,
  HeldRowMaker,
  HeldRows,
  type ReadRow,
  Warming,
} from '../held-rows.js';
import { CANDIDATES, type PageExtra, queryWords, rankCandidates, rankHeld, searchPage } from '../search.js';
import { indexNames } from '../similar-names.js';
import { atOnce, byCodeUnits, inSlices, nextTurn, type Steps, sortInSlices, takeASlice } from '../slices.js';
import { EVERY_REGISTRY, mayRead, visibleRegistriesSqlite } from '../visibility.js';
import type { Store } from './open.js';

/** `redis clus` → `"redis"* AND "clus"*`. */
export function ftsQuery(words: readonly string[]): string | null {
  return words.length ? words.map((w) => `"${w}"*`).join(' AND ') : null;
}

/** Most terms a query word is written out as (more: left a prefix query). */
const MAX_TERMS = 8;

/**
 * The FTS5 query of `words` over the index's terms (`terms`, sorted): a word of four or more ASCII
 * letters and digits — beyond the prefix index (`prefix='2 3'`), where FTS5 merges the posting
 * lists of every term with the prefix before it can answer — is written as the few terms it is a
 * prefix of, `("zookeeper" OR "zookeepersize")`, which FTS5 reads lazily: the same matches, a
 * third of the time for a rare word at 100,000 templates. Other words stay prefixes (FTS5 folds
 * diacritics of non-ASCII ones). `false`: a word is the prefix of no term, so nothing matches.
 */
export function expandedFtsQuery(words: readonly string[], terms: readonly string[]): string | false | null {
  if (words.length === 0) return null;
  const parts: string[] = [];
  for (const w of words) {
    if (w.length < 4 || !/^[a-z0-9]+$/.test(w)) {
      parts.push(`"${w}"*`);
      continue;
    }
    const found: string[] = [];
    for (let at = lowerBound(terms, w); at < terms.length && terms[at]!.startsWith(w); at++) {
      if (found.length === MAX_TERMS) break;
      found.push(terms[at]!);
    }
    if (found.length === 0) return false;
    if (found.length === MAX_TERMS) parts.push(`"${w}"*`);
    else parts.push(`(${found.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ')})`);
  }
  return parts.join(' AND ');
}

/** The first index in sorted `list` whose entry is not below `word`. */
function lowerBound(list: readonly string[], word: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < word) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Terms read per step of the terms' load at most (a step also ends after about a slice). */
const TERMS_STEP = 5000;

interface RegistryRow {
  id: number;
  name: string;
  visibility: string;
  organisation: string | null;
  generation: number;
}

/** Rows read per step of a load at most (a step also ends after about a slice). */
const LOAD_STEP = 2000;

/** The rows by id, made in steps. */
function* indexById(rows: readonly HeldRow[]): Steps<Map<number, HeldRow>> {
  const byId = new Map<number, HeldRow>();
  for (let i = 0; i < rows.length; i++) {
    byId.set(rows[i]!.id, rows[i]!);
    if (i % 2048 === 2047) yield;
  }
  return byId;
}

/**
 * Every template's name, collection, title and registry, in memory by id, loaded per registry
 * generation (every index swap or added version bumps it) in the background (`warm`): a search
 * then reads only the matching ids from SQLite, and the names' trigram index (similar-names.ts) is
 * built from the same rows. The rows, their order, the maps and the trigram index are made aside
 * in slices (slices.ts, held-rows.ts) and held in one step once every registry's new generation
 * has been read whole, so no search sees half of one and no request waits behind the work.
 */
class TemplateRows extends HeldRows<HeldGeneration<HeldRow>> {
  byId = new Map<number, HeldRow>();
  /** Whether `warm` was ever called (a service runs): then no load is made on a request. */
  private warmed = false;
  /** One warm at a time, going on with the generations last asked for. */
  private readonly warming = new Warming<readonly RegistryGeneration[]>((wanted) => this.bringUpTo(wanted));
  private readonly step: Database.Statement;
  private readonly generationOf: Database.Statement;
  /**
   * Every term of the FTS index, sorted (`expandedFtsQuery`), and the registries' generations
   * (`version`'s form) it was read at; used only when that is the held rows' `version`.
   */
  terms: string[] = [];
  termsVersion: string | undefined;
  private readonly termsStep: Database.Statement | undefined;
  private readonly generations: Database.Statement;

  constructor(sqlite: Database.Database) {
    super();
    this.generations = sqlite.prepare('SELECT id, generation FROM registries ORDER BY id');
    try {
      // The index's own terms (fts5vocab, a table of this connection only: nothing is written).
      sqlite.exec(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.templates_terms USING fts5vocab(main, templates_fts, 'row')",
      );
      this.termsStep = sqlite
        .prepare(`SELECT term FROM temp.templates_terms WHERE term > ? LIMIT ${TERMS_STEP}`)
        .pluck();
    } catch {
      // No vocabulary table: every word stays a prefix query.
      this.termsStep = undefined;
    }
    // By the (registry, collection, name) index, from where the last step stopped.
    this.step = sqlite.prepare(
      `SELECT id, name, collection, title, registry_id AS registryId FROM templates
       WHERE registry_id = ? AND (collection, name) > (?, ?) ORDER BY collection, name LIMIT ${LOAD_STEP}`,
    );
    this.generationOf = sqlite.prepare('SELECT generation FROM registries WHERE id = ?').pluck();
  }

  /**
   * Whether every registry is held at the generation `registries` says; when not, the missing
   * ones are loaded in the background and the caller answers from the database meanwhile.
   */
  ready(registries: readonly RegistryGeneration[]): boolean {
    let ready = registries.length === this.registries.size;
    for (const r of registries) if (this.registries.get(r.id)?.generation !== r.generation) ready = false;
    if (!ready) void this.kick(registries);
    return ready;
  }

  /**
   * Brings the rows up to `registries`' generations (every registry: the others are dropped), one
   * load at a time, in steps of about a slice (LOAD_STEP rows at most) between which requests are served. Never rejects:
   * a failed load is started again by the next swap, watch tick or search.
   */
  warm(registries: readonly RegistryGeneration[]): Promise<void> {
    this.warmed = true;
    return this.kick(registries);
  }

  /** Starts (or asks the warm in flight to go on with) bringing the rows up to `registries`. */
  private kick(registries: readonly RegistryGeneration[]): Promise<void> {
    return this.warming.kick(registries);
  }

  private async bringUpTo(registries: readonly RegistryGeneration[]): Promise<void> {
    const next = new Map<number, HeldGeneration<HeldRow>>();
    let changed = registries.length !== this.registries.size;
    let loaded = 0;
    for (const r of registries) {
      const current = this.registries.get(r.id);
      if (current?.generation === r.generation) {
        next.set(r.id, current);
        continue;
      }
      try {
        // Begun after the current request is answered (the search that found the rows stale).
        await nextTurn();
        const value = await inSlices(this.load(r.id));
        if (value && (current?.generation ?? -1) < value.generation) {
          next.set(r.id, value);
          changed = true;
          loaded++;
          continue;
        }
      } catch {
        // SQLite busy or the registry gone meanwhile: the next warm loads it.
      }
      if (current) next.set(r.id, current);
    }
    if (changed) {
      // Ordered, mapped by id and indexed by trigram aside, in slices; then held in one step.
      const arranged = await inSlices(arrange(next));
      const byId = await inSlices(indexById(arranged.ordered));
      const names = await inSlices(indexNames(arranged.ordered));
      this.byId = byId;
      this.hold(arranged, names, loaded);
    }
    if (this.termsVersion === this.version) return;
    try {
      await inSlices(this.loadTerms());
    } catch {
      // SQLite busy: the next warm loads them; meanwhile words stay prefix queries.
    }
  }

  /** The registries' generations now, in `version`'s form. */
  private generationsNow(): string {
    return (this.generations.all() as RegistryGeneration[]).map((r) => `${r.id}:${r.generation}`).join(',');
  }

  /**
   * Reads the index's terms in steps (the generator pauses between them) and keeps them when the
   * registries' generations were the held rows' before the first step and after the last (a swap
   * meanwhile bumps one: the terms are dropped and the warm that swap starts reads them again).
   */
  private *loadTerms(): Generator<void, void> {
    const version = this.version;
    if (!this.termsStep || this.generationsNow() !== version) return;
    const terms: string[] = [];
    let after = '';
    // A row costs what its term's list of documents does (fts5vocab counts them): a common word
    // thousands of times a number's, so a step reads for about a slice, not a count of terms
    // (5,000 at once cost 30 ms where the common words were).
    const take = (term: string) => {
      terms.push(term);
      after = term;
    };
    while (takeASlice(this.termsStep.iterate(after) as IterableIterator<string>, TERMS_STEP, take)) yield;
    // FTS5 orders terms by their UTF-8 bytes, lowerBound compares UTF-16 code units: the same
    // order but for astral letters, so the sort is one pass over one run (in slices: a sort at
    // once of 100,000 terms was the warm's longest stretch without a turn of the event loop).
    const sorted = yield* sortInSlices(terms, byCodeUnits);
    if (this.generationsNow() !== version || this.version !== version) return;
    this.terms = sorted;
    this.termsVersion = version;
  }

  /** The FTS5 query of `words` for the held rows: over the index's terms when they are of them. */
  ftsQueryOf(words: readonly string[]): string | false | null {
    return this.termsVersion === this.version ? expandedFtsQuery(words, this.terms) : ftsQuery(words);
  }

  /**
   * A registry's rows at its current generation, read in steps (the generator pauses between
   * them); undefined when the generation moved on meanwhile (another swap: the warm it starts
   * loads that one) or the registry went.
   */
  private *load(registryId: number): Generator<void, { generation: number; rows: HeldRow[] } | undefined> {
    const generation = this.generationOf.get(registryId) as number | undefined;
    if (generation === undefined) return undefined;
    const rows: HeldRow[] = [];
    const maker = new HeldRowMaker();
    let after = { collection: '', name: '' };
    const take = (row: ReadRow) => {
      rows.push(maker.of(row));
      after = row;
    };
    for (;;) {
      const more = takeASlice(
        this.step.iterate(registryId, after.collection, after.name) as IterableIterator<ReadRow>,
        LOAD_STEP,
        take,
      );
      if (this.generationOf.get(registryId) !== generation) return undefined;
      if (!more) break;
      yield;
    }
    return { generation, rows };
  }

  /**
   * Loads, on the request, the registries never held yet where nothing has asked for a load in
   * the background (`warm`: a store read without a service, as in the benches): what the first
   * search did before loads were made in the background.
   */
  loadNew(registries: readonly RegistryGeneration[]): void {
    if (this.warmed) return;
    const next = new Map(this.registries);
    let loaded = 0;
    for (const r of registries) {
      if (next.has(r.id)) continue;
      const value = atOnce(this.load(r.id));
      if (value) {
        next.set(r.id, value);
        loaded++;
      }
    }
    if (loaded === 0) return;
    // The names' trigram index is built by the first misspelt query.
    const arranged = atOnce(arrange(next));
    this.byId = atOnce(indexById(arranged.ordered));
    this.hold(arranged, undefined, loaded);
    try {
      atOnce(this.loadTerms());
    } catch {
      // Words stay prefix queries.
    }
  }
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
  private readonly rows: TemplateRows;

  /** How searches were answered: from the held rows, or from the database while they loaded. */
  private readonly answered = { held: 0, database: 0 };

  constructor(private readonly store: Store) {
    this.rows = new TemplateRows(store.sqlite);
  }

  /** When no words matched: templates with names similar to the query, as on PostgreSQL. */
  private similarTo(q: string, visible: ReadonlySet<number>, collection: string | undefined): HeldRow[] {
    if (q.trim().length < 3) return [];
    return this.rows.names.similar(
      q.trim().toLowerCase(),
      (r) => visible.has(r.registryId) && (collection === undefined || r.collection === collection),
      CANDIDATES + 1,
    );
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

  /** Loads the held rows of the generations given, in the background (TemplateRows.warm). */
  warm(generations: readonly RegistryGeneration[]): Promise<void> {
    return this.rows.warm(generations);
  }

  counters(): SearchCounters {
    return { ...this.answered, loads: this.rows.loads };
  }

  search(options: SearchOptions): SearchPage {
    const words = queryWords(options.q);
    const match = ftsQuery(words);
    const registries = this.statement(
      'SELECT id, name, visibility, organisation, generation FROM registries',
    ).all() as RegistryRow[];
    // The held rows answer once every registry's generation is loaded; until then (just after an
    // index swap, while `warm` reads the new one) the database does: no request waits for a load,
    // but where nothing ever warms the rows (a store read without a service).
    this.rows.loadNew(registries);
    if (!this.rows.ready(registries)) {
      this.answered.database++;
      return this.searchDatabase(options, registries, words, match);
    }
    this.answered.held++;
    const registryNames = new Map<number, string>();
    // The registries the caller may read (the rule of store/visibility.ts) and asked for.
    const visible = new Set<number>();
    for (const r of registries) {
      registryNames.set(r.id, r.name);
      if (mayRead(options.reader, r) && (options.registry === undefined || r.name === options.registry)) {
        visible.add(r.id);
      }
    }
    // Visibility and the filters go inside the bounded FTS scan (docs/server.md, "Organisations and
    // visibility"), so the candidates, totals and facets hold only what the caller may see. When the
    // caller may read every registry and names none, the registry condition is left out.
    const narrowed = visible.size < registries.length;
    const { sql: filters, params } = searchFilters('', {
      ...options,
      reader: narrowed ? options.reader : EVERY_REGISTRY,
    });
    // The same matches as `match`, written over the index's terms where that is faster.
    const fts = match ? this.rows.ftsQueryOf(words) : null;
    const ids = (
      fts === false
        ? []
        : fts
          ? this.statement(
              `SELECT rowid FROM templates_fts WHERE templates_fts MATCH ?${filters} LIMIT ${CANDIDATES + 1}`,
            )
              .pluck()
              .all(fts, ...params)
          : this.statement(
              `SELECT id FROM templates WHERE 1${filters} ORDER BY name, collection LIMIT ${CANDIDATES + 1}`,
            )
              .pluck()
              .all(...params)
    ) as number[];
    const held = this.rows.byId;
    // Room for every id at once (not grown push by push), cut to the rows held.
    const rows = new Array<HeldRow>(ids.length);
    let count = 0;
    for (const id of ids) {
      const r = held.get(id);
      if (r) rows[count++] = r;
    }
    rows.length = count;
    // Nothing matched the words: names similar to the query are the answer (similar-names.ts).
    const similar = match && rows.length === 0 ? this.similarTo(options.q, visible, options.collection) : [];
    rows.push(...similar);
    const totalIsLowerBound = rows.length > CANDIDATES;
    if (totalIsLowerBound) rows.length = CANDIDATES;

    let ranked = rows;
    if (match && similar.length === 0) {
      const q = options.q.trim().toLowerCase();
      if (q) {
        // Exactly named templates (case-insensitive, the exact-name tier's rule) first, even when
        // the bound cut them off.
        const named = this.rows.named(q);
        const seen = named.length > 0 ? new Set(ids) : undefined;
        for (const r of named) {
          if (seen?.has(r.id) || !visible.has(r.registryId)) continue;
          if (options.collection === undefined || r.collection === options.collection) rows.push(r);
        }
      }
      // The order PostgreSQL's search has too (postgres/reads.ts): exact name, name prefix, rank, then
      // name (and collection).
      ranked = rankHeld(rows, this.rows.ordered, q, words);
    }

    return this.answer(options, ranked, {
      totalIsLowerBound,
      registryNames,
      didYouMean: similar[0]?.name ?? null,
    });
  }

  /** The page of `ranked`; only the shown rows read their version and description. */
  private answer(
    options: SearchOptions,
    ranked: readonly HeldRow[],
    how: {
      totalIsLowerBound: boolean;
      registryNames: ReadonlyMap<number, string>;
      didYouMean: string | null;
    },
  ): SearchPage {
    const page = this.statement(
      'SELECT latest_version AS latestVersion, description FROM templates WHERE id = ?',
    );
    return searchPage(options, ranked, { ...how, extra: (id) => page.get(id) as PageExtra | undefined });
  }

  /**
   * The answer the held rows would give, read from SQLite (while they load): the same bounded
   * candidates and exact names, ranked by `rankCandidates`; similar names as the held rows find
   * them (the previous generation's names for that moment), read again as they now are.
   */
  private searchDatabase(
    options: SearchOptions,
    registries: readonly RegistryRow[],
    words: readonly string[],
    match: string | null,
  ): SearchPage {
    const registryNames = new Map(registries.map((r) => [r.id, r.name]));
    const visible = registries.filter(
      (r) => mayRead(options.reader, r) && (options.registry === undefined || r.name === options.registry),
    );
    const { sql: filters, params } = searchFilters('', {
      ...options,
      reader: visible.length < registries.length ? options.reader : EVERY_REGISTRY,
    });
    const columns = 'id, name, collection, title, registry_id AS registryId';
    let rows: HeldRow[];
    if (match) {
      rows = this.statement(
        `SELECT ${columns} FROM templates WHERE id IN
           (SELECT rowid FROM templates_fts WHERE templates_fts MATCH ?${filters} LIMIT ${CANDIDATES + 1})`,
      ).all(match, ...params) as HeldRow[];
    } else {
      rows = this.statement(
        `SELECT ${columns} FROM templates WHERE 1${filters} ORDER BY name, collection LIMIT ${CANDIDATES + 1}`,
      ).all(...params) as HeldRow[];
    }
    // Nothing matched the words: names similar to the query among the rows held, of the previous
    // generation where one is being loaded, each read again as it now is (gone ones left out).
    let didYouMean: string | null = null;
    if (match && rows.length === 0) {
      const visibleIds = new Set(visible.map((r) => r.id));
      const now = this.statement(
        `SELECT ${columns} FROM templates WHERE registry_id = ? AND collection = ? AND name = ?`,
      );
      for (const r of this.similarTo(options.q, visibleIds, options.collection)) {
        const current = now.get(r.registryId, r.collection, r.name) as HeldRow | undefined;
        if (current) rows.push(current);
      }
      didYouMean = rows[0]?.name ?? null;
    }
    const totalIsLowerBound = rows.length > CANDIDATES;
    if (totalIsLowerBound) rows.length = CANDIDATES;
    let ranked: readonly HeldRow[] = rows;
    const exactName = options.q.trim().toLowerCase();
    if (match && exactName && didYouMean === null) {
      const seen = new Set(rows.map((r) => r.id));
      // Template names are ASCII (the reference grammar): SQLite's lower() folds them as JS does.
      const exact = this.statement(`SELECT ${columns} FROM templates WHERE lower(name) = ?${filters}`).all(
        exactName,
        ...params,
      ) as HeldRow[];
      for (const r of exact) if (!seen.has(r.id)) rows.push(r);
      for (const r of rows) {
        r.lowerName = r.name.toLowerCase();
        r.lowerTitle = (r.title ?? '').toLowerCase();
        r.lowerCollection = r.collection.toLowerCase();
      }
      ranked = rankCandidates(rows, exactName, words);
    }
    return this.answer(options, ranked, { totalIsLowerBound, registryNames, didYouMean });
  }
}

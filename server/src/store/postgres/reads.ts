// PostgreSQL only: the ReadStore's search (tsvector lexemes held per registry, pg_trgm) added to the reads written once (../read-queries.ts).
/**
 * The search on PostgreSQL (docs/server.md, "Store"); every other read is ../read-queries.ts over
 * postgres/runner.ts. The search runs over the generated `templates.search` vector: every word of
 * the query must match as a prefix (`word:*`) a lexeme of it. The words are matched in memory
 * against each registry's held lexemes (postgres/search.ts, loaded again in the background when the
 * registry's generation changes, the GIN prefix scan answering meanwhile; it was most of each
 * query's time). Like SQLite's, the candidate set is bounded (CANDIDATES, plus the exactly named
 * templates), then ranked in the process by the rule SQLite's search has (search.ts
 * `rankCandidates`: exact name, name prefix, by-field score, name). When nothing matches, names
 * within trigram distance of the query (pg_trgm) are the answer, so `rediss` still finds `redis`,
 * with the most similar name as `didYouMean` (SQLite: similar-names.ts, the same rule). The
 * caller's visible registries (store/visibility.ts) are applied before the bound, so totals and
 * facets count only what the caller may see.
 */

import type {
  RegistryGeneration,
  SearchCounters,
  SearchOptions,
  SearchPage,
  TemplateMatch,
} from '../contract.js';
import { SqlReads } from '../read-queries.js';
import { CANDIDATES, type PageExtra, queryWords, rankCandidates, searchPage } from '../search.js';
import { visibleRegistriesPg } from '../visibility.js';
import type { PostgresStore } from './open.js';
import { postgresRunner } from './runner.js';
import { type PgMatchRow, type PgRegistryRow, PgTemplateWords } from './search.js';

interface Candidate extends Pick<TemplateMatch, 'collection' | 'name' | 'title'> {
  id: number;
  registryId: number;
}

/** A search's ranked candidates. */
interface Found {
  rows: readonly Candidate[];
  totalIsLowerBound: boolean;
  didYouMean: string | null;
}

/** The registries a search reads (their generations say whether the held rows are current). */
const REGISTRIES_SQL = 'SELECT id, name, visibility, organisation, generation FROM registries ORDER BY id';

/** REGISTRIES_SQL and the shown page's rows (`page`), in one statement. */
const REGISTRIES_AND_PAGE_SQL = `
  SELECT id, name, visibility, organisation, generation, NULL AS description, NULL AS "latestVersion", FALSE AS page
  FROM registries
  UNION ALL
  SELECT id, NULL, NULL, NULL, NULL, description, latest_version, TRUE FROM templates WHERE id = ANY($1::int[])
  ORDER BY page, id`;

/**
 * The ids of the ranked rows the page shows, as an `int[]` literal (`{3,5,8}`): written at once,
 * where the driver quotes and escapes each number of an array (a few KB a search).
 */
function shownIds(options: SearchOptions, ranked: readonly { id: number }[]): string {
  const first = (options.page - 1) * options.limit;
  let literal = '';
  for (let i = first; i < Math.min(ranked.length, first + options.limit); i++) {
    literal += literal ? `,${ranked[i]!.id}` : `${ranked[i]!.id}`;
  }
  return `{${literal}}`;
}

/** Whether two reads of the registries (by id) say the same. */
function sameRegistries(a: readonly PgRegistryRow[], b: readonly PgRegistryRow[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (
      x.id !== y.id ||
      x.name !== y.name ||
      x.visibility !== y.visibility ||
      x.organisation !== y.organisation ||
      x.generation !== y.generation
    )
      return false;
  }
  return true;
}

export class PostgresReads extends SqlReads {
  /** The search's word match, held per registry generation (postgres/search.ts). */
  private readonly words: PgTemplateWords;

  constructor(private readonly store: PostgresStore) {
    super(postgresRunner(store));
    this.words = new PgTemplateWords(store);
  }

  private async rows<T>(text: string, values: unknown[]): Promise<T[]> {
    return (await this.store.pool.query({ text, values })).rows as T[];
  }

  /**
   * The registries the last search read: the next one is ranked from the held rows by them and
   * reads them again with its page's rows, one round trip (checked: when they changed, it is
   * answered again with them as they are).
   */
  private known: PgRegistryRow[] | undefined;

  async search(options: SearchOptions): Promise<SearchPage> {
    const words = queryWords(options.q);
    const q = options.q.trim().toLowerCase();
    const known = this.known;
    if (known && this.words.holds(known)) {
      const found = this.fromHeld(options, known, words, q);
      const read = await this.store.pool.query<PgRegistryRow & PageExtra & { page: boolean }>({
        name: 'search-registries-page',
        text: REGISTRIES_AND_PAGE_SQL,
        values: [shownIds(options, found.rows)],
      });
      const registries = read.rows.filter((r) => !r.page);
      if (sameRegistries(registries, known)) {
        this.counters.held++;
        const extra = new Map(read.rows.filter((r) => r.page).map((r) => [r.id, r]));
        return this.answer(options, found, registries, extra);
      }
    }
    const { rows: registries } = await this.store.pool.query<PgRegistryRow>({
      name: 'search-registries',
      text: REGISTRIES_SQL,
    });
    this.known = registries;
    // The held rows answer once every registry's generation is loaded (postgres/search.ts); until then
    // (just after an index swap, while `warm` reads the new one) the database answers, as the held
    // rows would: no request waits for a load.
    await this.words.loadNew(registries);
    const held = this.words.ready(registries);
    if (held) this.counters.held++;
    else this.counters.database++;
    const found = held
      ? this.fromHeld(options, registries, words, q)
      : await this.fromDatabase(options, words, q);
    return this.answer(options, found, registries, await this.pageExtras(options, found.rows));
  }

  private answer(
    options: SearchOptions,
    found: Found,
    registries: readonly PgRegistryRow[],
    extra: ReadonlyMap<number, PageExtra>,
  ): SearchPage {
    return searchPage(options, found.rows, {
      totalIsLowerBound: found.totalIsLowerBound,
      registryNames: new Map(registries.map((r) => [r.id, r.name])),
      extra: (id) => extra.get(id),
      didYouMean: found.didYouMean,
    });
  }

  /**
   * The ranked candidates from the held rows (postgres/search.ts), in the registries the caller may
   * read: the words matched in memory against each registry's held lexemes (the GIN prefix scan was
   * most of each query's time), a bounded candidate set plus the exactly named templates however
   * far the bound is, ranked by the rule SQLite's search has (rankHeld: exact name, name prefix,
   * by-field score, name); the empty query lists by name; when nothing matches, the names within
   * trigram distance of the query (pg_trgm's rule, similar-names.ts).
   */
  private fromHeld(
    options: SearchOptions,
    registries: readonly PgRegistryRow[],
    words: readonly string[],
    q: string,
  ): Found {
    if (words.length === 0) {
      const listed: Candidate[] = this.words.listed(registries, options, CANDIDATES);
      const totalIsLowerBound = listed.length > CANDIDATES;
      if (totalIsLowerBound) listed.length = CANDIDATES;
      return { rows: listed, totalIsLowerBound, didYouMean: null };
    }
    const found = this.words.match(
      registries,
      { words, exact: q, reader: options.reader, registry: options.registry, collection: options.collection },
      CANDIDATES,
    );
    const rows = this.words.rank(found.rows, q, words);
    if (rows.length > 0 || q.length < 3) return { rows, totalIsLowerBound: found.bounded, didYouMean: null };
    const similar: Candidate[] = this.words.similar(registries, options, q, CANDIDATES + 1);
    const totalIsLowerBound = similar.length > CANDIDATES;
    if (totalIsLowerBound) similar.length = CANDIDATES;
    return { rows: similar, totalIsLowerBound, didYouMean: similar[0]?.name ?? null };
  }

  /** The candidates `fromHeld` finds, read from the database while the held rows load. */
  private async fromDatabase(options: SearchOptions, words: readonly string[], q: string): Promise<Found> {
    // Visibility: a condition of each statement, the rule the held rows apply (store/visibility.ts).
    const values: unknown[] = [];
    const conditions = ['TRUE'];
    const visible = visibleRegistriesPg('t.registry_id', options.reader, values);
    if (visible) conditions.push(visible);
    if (options.registry !== undefined) {
      values.push(options.registry);
      conditions.push(`t.registry_id IN (SELECT id FROM registries WHERE name = $${values.length})`);
    }
    if (options.collection !== undefined) {
      values.push(options.collection);
      conditions.push(`t.collection = $${values.length}`);
    }
    const where = conditions.join(' AND ');
    const columns = 't.id, t.name, t.collection, t.title, t.registry_id AS "registryId"';
    const at = values.length;
    if (words.length === 0) {
      // The empty query lists the templates in name order.
      const listed = await this.rows<Candidate>(
        `SELECT ${columns} FROM templates t WHERE ${where}
         ORDER BY t.name COLLATE "C", t.collection COLLATE "C", t.id LIMIT ${CANDIDATES + 1}`,
        values,
      );
      const totalIsLowerBound = listed.length > CANDIDATES;
      if (totalIsLowerBound) listed.length = CANDIDATES;
      return { rows: listed, totalIsLowerBound, didYouMean: null };
    }
    const found = await this.databaseMatch(words, q, where, values);
    const rows = rankCandidates(found.rows, q, words);
    if (rows.length > 0 || q.length < 3) return { rows, totalIsLowerBound: found.bounded, didYouMean: null };
    // Nothing matched: names within trigram distance of the query (pg_trgm's rule), visible ones only.
    const similar = await this.rows<Candidate>(
      `SELECT ${columns} FROM templates t WHERE ${where} AND t.name % $${at + 1}
       ORDER BY similarity(t.name, $${at + 1}) DESC, t.name COLLATE "C", t.collection COLLATE "C"
       LIMIT ${CANDIDATES + 1}`,
      [...values, q],
    );
    const totalIsLowerBound = similar.length > CANDIDATES;
    if (totalIsLowerBound) similar.length = CANDIDATES;
    return { rows: similar, totalIsLowerBound, didYouMean: similar[0]?.name ?? null };
  }

  /**
   * The held match's answer read from the database (the GIN prefix scan, `word:*` for every word),
   * while a registry's held lexemes are being loaded: at most CANDIDATES matches, plus the exactly
   * named templates. Unordered, as the scan finds them (ordering every match was the slow part):
   * when more than CANDIDATES match, the bounded set may not be the held match's.
   */
  private async databaseMatch(
    words: readonly string[],
    exact: string,
    where: string,
    values: readonly unknown[],
  ): Promise<{ rows: PgMatchRow[]; bounded: boolean }> {
    const columns = 't.id, t.name, t.collection, t.title, t.registry_id AS "registryId"';
    const at = values.length;
    const found =
      words.length === 0
        ? []
        : await this.rows<Candidate>(
            `SELECT ${columns} FROM templates t
             WHERE t.search @@ to_tsquery('simple', $${at + 1}) AND ${where} LIMIT ${CANDIDATES + 1}`,
            [...values, words.map((w) => `${w}:*`).join(' & ')],
          );
    const bounded = found.length > CANDIDATES;
    if (bounded) found.length = CANDIDATES;
    const ids = new Set(found.map((r) => r.id));
    const named = await this.rows<Candidate>(
      `SELECT ${columns} FROM templates t WHERE lower(t.name) = $${at + 1} AND ${where}`,
      [...values, exact],
    );
    for (const r of named) if (!ids.has(r.id)) found.push(r);
    return {
      rows: found.map((r) => ({
        ...r,
        lowerName: r.name.toLowerCase(),
        lowerTitle: (r.title ?? '').toLowerCase(),
        lowerCollection: r.collection.toLowerCase(),
      })),
      bounded,
    };
  }

  /** How searches were answered: from the held rows, or from the database while they loaded. */
  readonly counters = { held: 0, database: 0 };

  warm(generations: readonly RegistryGeneration[]): Promise<void> {
    return this.words.warm(generations);
  }

  searchCounters(): SearchCounters {
    return { ...this.counters, loads: this.words.loads };
  }

  /** The version and description of the ranked rows the page shows, by id. */
  private async pageExtras(
    options: SearchOptions,
    ranked: readonly { id: number }[],
  ): Promise<Map<number, PageExtra>> {
    const shown = shownIds(options, ranked);
    if (shown === '{}') return new Map();
    const { rows } = await this.store.pool.query<PageExtra & { id: number }>({
      name: 'search-page',
      text: 'SELECT id, description, latest_version AS "latestVersion" FROM templates WHERE id = ANY($1::int[])',
      values: [shown],
    });
    return new Map(rows.map((e) => [e.id, e]));
  }
}

// PostgreSQL only: the ReadStore over the pool, with the tsvector/pg_trgm search; the SQL text both dialects run is in ../reads.ts.
/**
 * The read queries on PostgreSQL (the ReadStore of reads.ts; docs/server.md, "Store"): the same
 * rows in the same order as SQLite's (text ordered `COLLATE "C"`, byte order like SQLite's), and the
 * search over the generated `templates.search` vector: every word of the query must match as a
 * prefix (`word:*`) a lexeme of it. The words are matched in memory against each registry's held
 * lexemes (postgres/search.ts, loaded again in the background when the registry's generation changes,
 * the GIN prefix scan answering meanwhile; it was most of each query's time). Like SQLite's, the candidate set is bounded (CANDIDATES, plus
 * the exactly named templates), then ranked in the process by the rule SQLite's search has
 * (search.ts `rankCandidates`: exact name, name prefix, by-field score, name). When nothing
 * matches, names within trigram distance of the query (pg_trgm) are the answer, so `rediss` still
 * finds `redis`, with the most similar name as `didYouMean` (SQLite: similar-names.ts, the same
 * rule). The caller's visible registries (store/visibility.ts) are applied before the bound, so
 * totals and facets count only what the caller may see.
 */

import type { MerkleHashStore } from '../../../../client/src/integrity/index.js';
import { SqlHashStore } from '../checksum-log.js';
import type {
  CheckpointRow,
  FindingRow,
  FirstSeenRow,
  ListedVersionRow,
  QuarantineRow,
  ReadStore,
  RegistryGeneration,
  RegistryTemplateRow,
  SearchCounters,
  SearchOptions,
  SearchPage,
  StoredFile,
  SyncRow,
  TemplateMatch,
  TemplateRow,
  VersionRow,
} from '../contract.js';
import {
  FIRST_SEEN_AT_SQL,
  LATEST_CHECKPOINT_SQL,
  MAX_INLINE_BYTES,
  NEWEST_RECORD_SQL,
  newestFirst,
  OPEN_QUARANTINES_SQL,
  quarantineRows,
  SYNC_HISTORY,
} from '../reads.js';
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

/** The ids of the ranked rows the page shows. */
function shownIds(options: SearchOptions, ranked: readonly { id: number }[]): number[] {
  const first = (options.page - 1) * options.limit;
  return ranked.slice(first, first + options.limit).map((r) => r.id);
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

export class PostgresReads implements ReadStore {
  /** The search's word match, held per registry generation (postgres/search.ts). */
  private readonly words: PgTemplateWords;

  constructor(private readonly store: PostgresStore) {
    this.words = new PgTemplateWords(store);
  }

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
      (
        await this.rows<Omit<VersionRow, 'firstSeenAt'> & { firstSeenAt: string | null }>(
          `SELECT v.id, v.version, v.kind, v.digest, v.dir, v.template_file AS "templateFile",
                v.schema_file AS "schemaFile", v.has_example AS "hasExample",
                v.removed_upstream_at IS NOT NULL AS "removedUpstream", ${FIRST_SEEN_AT_SQL} AS "firstSeenAt"
         FROM versions v JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
         WHERE t.registry_id = $1 AND t.collection = $2 AND t.name = $3`,
          [registryId, collection, name],
        )
      ).map((r) => ({ ...r, firstSeenAt: r.firstSeenAt === null ? null : Number(r.firstSeenAt) })),
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

  async versionList(registryId: number): Promise<ListedVersionRow[]> {
    return this.rows<ListedVersionRow>(
      `SELECT t.collection, t.name AS template, v.version, v.digest
       FROM versions v JOIN templates t ON t.id = v.template_id
       WHERE t.registry_id = $1 ORDER BY t.collection COLLATE "C", t.name COLLATE "C", v.version COLLATE "C"`,
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
  logHashes(): MerkleHashStore {
    return new SqlHashStore(postgresRunner(this.store));
  }

  async latestCheckpoint(): Promise<CheckpointRow | undefined> {
    const [row] = await this.rows<{ size: string; note: string }>(LATEST_CHECKPOINT_SQL, []);
    return row ? { size: Number(row.size), note: row.note } : undefined;
  }

  async newestRecord(template: string, version: string): Promise<FirstSeenRow | undefined> {
    const [row] = await this.rows<FirstSeenRow>(NEWEST_RECORD_SQL, [template, version]);
    return row ? { ...row, logIndex: Number(row.logIndex), registryId: Number(row.registryId) } : undefined;
  }

  async openQuarantines(registryId: number): Promise<QuarantineRow[]> {
    return quarantineRows(await this.rows(OPEN_QUARANTINES_SQL, [registryId]));
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
    if (shown.length === 0) return new Map();
    const { rows } = await this.store.pool.query<PageExtra & { id: number }>({
      name: 'search-page',
      text: 'SELECT id, description, latest_version AS "latestVersion" FROM templates WHERE id = ANY($1::int[])',
      values: [shown],
    });
    return new Map(rows.map((e) => [e.id, e]));
  }
}

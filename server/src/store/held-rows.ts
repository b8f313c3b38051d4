/**
 * The search's rows held in memory, arranged for queries the same way on both dialects
 * (docs/server.md, "Search after an index swap"): every held row in name, collection and id order
 * (a row's `order` is its place there, what `rankHeld` in search.ts sorts by), the rows by
 * lower-cased name (the exact-name tier), and the fingerprint of the registry generations they
 * are of. An arrangement is made aside in slices (slices.ts), then held in one step: a query sees
 * the previous arrangement or the next one, never half of one.
 */
import { type NameIndex, SimilarNames } from './similar-names.js';
import { type Steps, sortInSlices } from './slices.js';

/** What a held row has on both dialects. */
export interface HeldRowBase {
  id: number;
  name: string;
  collection: string;
  registryId: number;
  lowerName: string;
  /** Position of the row in the order by name, collection and id of every held row. */
  order: number;
}

/** A matched template, the same on both dialects: what the ranking and the facets read. */
export interface MatchRow {
  id: number;
  name: string;
  collection: string;
  title: string | null;
  registryId: number;
  lowerName: string;
  lowerTitle: string;
  lowerCollection: string;
}

/** A held template (sqlite/search.ts, postgres/search.ts). */
export interface HeldRow extends MatchRow, HeldRowBase {}

/** A template row as read for holding. */
export type ReadRow = Pick<HeldRow, 'id' | 'name' | 'collection' | 'title' | 'registryId'>;

/**
 * Makes read rows held rows, with their lower-cased forms. Collections are few: each is held as
 * one string (less memory; counting facets hashes the same few), so one of these serves a load.
 */
export class HeldRowMaker {
  private readonly collections = new Map<string, { collection: string; lower: string }>();

  of(r: ReadRow): HeldRow {
    let c = this.collections.get(r.collection);
    if (!c) {
      c = { collection: r.collection, lower: r.collection.toLowerCase() };
      this.collections.set(r.collection, c);
    }
    return {
      id: r.id,
      name: r.name,
      collection: c.collection,
      title: r.title,
      registryId: r.registryId,
      lowerName: r.name.toLowerCase(),
      lowerTitle: (r.title ?? '').toLowerCase(),
      lowerCollection: c.lower,
      order: 0,
    };
  }
}

/** A registry's held rows at one generation. */
export interface HeldGeneration<R> {
  generation: number;
  rows: R[];
}

export interface Arranged<R extends HeldRowBase, H extends HeldGeneration<R>> {
  /** By registry id. */
  registries: Map<number, H>;
  /** Every held row by name, collection and id. */
  ordered: R[];
  /** The held rows by lower-cased name (ByLowerName). */
  byLowerName: ByLowerName<R>;
  /** The registries' ids and generations, e.g. `1:4,2:7`. */
  version: string;
}

/**
 * Rows by lower-cased name, in `ordered`'s order: the row itself where it is the only one so
 * named (nearly every name), an array where more are (one array per name would be as many
 * objects as rows in the heap, for the collector to trace).
 */
export type ByLowerName<R> = Map<string, R | R[]>;

/** Name, collection, then id, in code-unit order. */
export function byNameOrder(a: HeldRowBase, b: HeldRowBase): number {
  return (
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
    (a.collection < b.collection ? -1 : a.collection > b.collection ? 1 : 0) ||
    a.id - b.id
  );
}

/** The registries' ids and generations, e.g. `1:4,2:7`. */
export function heldVersion(registries: ReadonlyMap<number, { generation: number }>): string {
  return [...registries].map(([id, h]) => `${id}:${h.generation}`).join(',');
}

/** Rows between two pauses. */
const STEP = 2048;

/** The arrangement of `registries`' rows, made in steps; the rows are not changed (`hold` numbers them). */
export function* arrange<H extends HeldGeneration<HeldRowBase>>(
  registries: Map<number, H>,
): Steps<Arranged<H['rows'][number], H>> {
  type R = H['rows'][number];
  const all: R[] = [];
  for (const held of registries.values()) {
    for (let i = 0; i < held.rows.length; i++) {
      all.push(held.rows[i]!);
      if (i % STEP === STEP - 1) yield;
    }
  }
  const ordered = yield* sortInSlices(all, byNameOrder);
  const byLowerName: ByLowerName<R> = new Map();
  for (let i = 0; i < ordered.length; i++) {
    const row = ordered[i]!;
    const named = byLowerName.get(row.lowerName);
    if (named === undefined) byLowerName.set(row.lowerName, row);
    else if (Array.isArray(named)) named.push(row);
    else byLowerName.set(row.lowerName, [named, row]);
    if (i % STEP === STEP - 1) yield;
  }
  return { registries, ordered, byLowerName, version: heldVersion(registries) };
}

/**
 * Numbers the arrangement's rows by their place: done in the step that holds it (a row shared
 * with the arrangement held before keeps that one's number until then).
 */
export function numberRows(arranged: { ordered: readonly HeldRowBase[] }): void {
  const { ordered } = arranged;
  for (let i = 0; i < ordered.length; i++) ordered[i]!.order = i;
}

/**
 * The arrangement every search reads now (both dialects), and the names' trigram index
 * (similar-names.ts) of its rows, built with it or on first use. `hold` replaces it in one step: a
 * query sees the previous arrangement or the next one, never half of one.
 */
export class HeldRows<H extends HeldGeneration<HeldRow>> {
  /** Each registry's rows, by registry id. */
  registries = new Map<number, H>();
  /** Every held row by `order`. */
  ordered: HeldRow[] = [];
  /** The held rows by lower-cased name (the exact-name tier), in `order` (read with `named`). */
  byLowerName: ByLowerName<HeldRow> = new Map();
  /** The registries' ids and generations the rows are of, e.g. `1:4,2:7`. */
  version = '';
  /** Registry generations loaded (each read once), for the tests and the bench. */
  loads = 0;
  readonly names = new SimilarNames<HeldRow>(
    () => this.version,
    // In name, collection and id order (the order similar names are ranked in).
    () => this.ordered,
  );

  /** The held rows whose lower-cased name is `lowerName`, in `order`. */
  named(lowerName: string): readonly HeldRow[] {
    const named = this.byLowerName.get(lowerName);
    return named === undefined ? [] : Array.isArray(named) ? named : [named];
  }

  /** Holds an arrangement made aside, `loaded` registry generations of it new. */
  hold(arranged: Arranged<HeldRow, H>, names: NameIndex<HeldRow> | undefined, loaded: number): void {
    numberRows(arranged);
    this.registries = arranged.registries;
    this.ordered = arranged.ordered;
    this.byLowerName = arranged.byLowerName;
    this.version = arranged.version;
    this.loads += loaded;
    if (names) this.names.hold(names, arranged.version);
  }
}

/**
 * One warm at a time (both dialects): `kick` asks for `registries`' generations; the run in
 * flight goes on with the last ones asked for once it is done, so arrangements are held in the
 * order they were asked for. The promise never rejects: what failed is loaded by the next kick.
 */
export class Warming<G> {
  private wanted: G | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly bringUpTo: (wanted: G) => Promise<void>) {}

  kick(wanted: G): Promise<void> {
    this.wanted = wanted;
    this.running ??= (async () => {
      try {
        while (this.wanted !== undefined) {
          const next = this.wanted;
          this.wanted = undefined;
          await this.bringUpTo(next);
        }
      } catch {
        // Whatever failed is loaded again by the next warm; a background load never rejects.
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }
}

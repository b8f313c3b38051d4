/**
 * Work of one index swap done in slices between which the event loop turns (docs/server.md,
 * "Search after an index swap"): the search's held rows ordered, the names' trigram index built,
 * PostgreSQL's lexemes sorted. Such work is a generator that yields wherever it may pause;
 * `inSlices` runs it for about SLICE_MS at a time, then lets other requests in; `atOnce` runs it
 * through (a store read without a service, where the first search loads what it needs).
 */

/** A piece of work that pauses at each `yield` and returns a `T`. */
export type Steps<T> = Generator<void, T, void>;

/** The longest a slice runs before the event loop turns (other requests wait at most about this). */
export const SLICE_MS = 4;

/** Resolves on the event loop's next turn (after the I/O waiting now). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs `steps` in slices of about SLICE_MS, the event loop turning between them. */
export async function inSlices<T>(steps: Steps<T>): Promise<T> {
  let started = performance.now();
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    if (performance.now() - started >= SLICE_MS) {
      await nextTurn();
      started = performance.now();
    }
  }
}

/**
 * Takes rows of `rows` (a statement's open iterator: nothing else runs on its connection meanwhile)
 * for about a slice, at most `most`; whether it stopped before their end (the iterator is then
 * closed, and the caller goes on after the last row taken, in its next step). For reads whose rows
 * cost unevenly, where a count of rows per step would be milliseconds one time and tens the next.
 */
export function takeASlice<T>(rows: Iterable<T>, most: number, take: (row: T) => void): boolean {
  const started = performance.now();
  let taken = 0;
  for (const row of rows) {
    take(row);
    if (++taken === most || performance.now() - started >= SLICE_MS) return true;
  }
  return false;
}

/** Runs `steps` through without pausing. */
export function atOnce<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** Strings in code-unit order, as `<` compares them (what Array#sort does without a compare). */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Comparisons or moves between two pauses of `sortInSlices`. */
const SORT_STEP = 2048;

/**
 * `items` sorted by `compare` (stable), pausing every SORT_STEP comparisons: a natural merge sort,
 * so rows that come in sorted runs (each registry's, each collection's) cost a few merges. `items`
 * may be reordered; the sorted array is the one returned.
 */
export function* sortInSlices<T>(items: T[], compare: (a: T, b: T) => number): Steps<T[]> {
  const n = items.length;
  let bounds: number[] = [0];
  for (let i = 1; i < n; i++) {
    if (compare(items[i - 1]!, items[i]!) > 0) bounds.push(i);
    if (i % SORT_STEP === 0) yield;
  }
  bounds.push(n);
  let from = items;
  let to = new Array<T>(n);
  let work = 0;
  while (bounds.length > 2) {
    const merged = [0];
    for (let r = 0; r + 1 < bounds.length; r += 2) {
      const lo = bounds[r]!;
      const mid = bounds[r + 1]!;
      const hi = r + 2 < bounds.length ? bounds[r + 2]! : mid;
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        to[k++] = compare(from[j]!, from[i]!) < 0 ? from[j++]! : from[i++]!;
        if (++work === SORT_STEP) {
          work = 0;
          yield;
        }
      }
      while (i < mid) to[k++] = from[i++]!;
      while (j < hi) to[k++] = from[j++]!;
      merged.push(hi);
    }
    bounds = merged;
    [from, to] = [to, from];
    yield;
  }
  return from;
}

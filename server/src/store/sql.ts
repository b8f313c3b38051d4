/**
 * The one place SQL placeholders are converted (docs/server.md "The store"). SQL both dialects run
 * is written once, with PostgreSQL's numbered `$1, $2, …` placeholders, each used once and in
 * order; SQLite (better-sqlite3) takes `?` in the same order.
 */

/** `$1`-style placeholders as SQLite's `?`, in order. */
export const sqlite = (sql: string): string => sql.replace(/\$\d+/g, '?');

/**
 * One statement and its parameters (`$n` placeholders). With `each`, made only by SQLite's dialect
 * (`insertRows`, `lookup`): the statement runs once per row of `each`, its parameters, in-process,
 * each run answering at most one row (a one-row insert, a read by key), and the step's rows and
 * changes are theirs together (one step, not one a row through the flow: bench/add-versions-cpu.ts).
 */
export type Step = readonly [sql: string, params: readonly unknown[], each?: readonly (readonly unknown[])[]];

/** What a statement answered: its rows (a read, or RETURNING) and how many rows it changed. */
export interface StepResult {
  rows: unknown[];
  changes: number;
}

/**
 * A read–decide–write flow written once for both dialects (docs/server.md "Flows, written once"):
 * a generator that yields each statement and receives its result. sqlite/runner.ts drives it
 * synchronously inside a better-sqlite3 transaction, postgres/runner.ts with awaits inside its
 * transaction, so the rules between the statements exist once.
 */
export type Flow<T> = Generator<Step, T, StepResult>;

/** The rows of one statement of a flow (`yield* rowsOf(…)`), typed by the caller. */
export function* rowsOf<T>(sql: string, params: readonly unknown[] = []): Flow<T[]> {
  return (yield [sql, params]).rows as T[];
}

/** The type of a column of a list parameter (`SqlDialect.list`). */
export type ListType = 'text' | 'int' | 'bigint' | 'bool' | 'bytes' | 'blob';

/**
 * The value of a list parameter: its rows as one JSON text, the same on both dialects (a column of
 * type `bytes` is given as hex, a `bool` as true/false).
 */
export const listParam = (rows: readonly (readonly unknown[])[]): string => JSON.stringify(rows);

/**
 * What the shared SQL text needs from its dialect: small fragments, no I/O. Everything else in a
 * statement is the same text on both.
 */
export interface SqlDialect {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * `expr` compared as bytes, for an ORDER BY (docs/server.md "Text is compared as bytes"):
   * `expr COLLATE "C"` on PostgreSQL, whose default collation follows the locale; SQLite's BINARY
   * default already is.
   */
  byteOrder(expr: string): string;
  /**
   * A list parameter as a table, for a FROM or JOIN: `param` (a `$n`) holds `listParam(rows)`, and
   * the table `alias` has the named, typed `columns` in that order (json_each on SQLite,
   * jsonb_array_elements on PostgreSQL). One statement for a batch: on PostgreSQL a round trip per
   * batch, not per row. Put the list first and the tables after it with `CROSS JOIN … WHERE`:
   * SQLite then loops over the list and finds each row by the table's index; with `JOIN … ON` it
   * may loop over the table and scan the whole list for each of its rows (re-importing a
   * 10,000-version bundle took 146 s that way, against 0.8 s). PostgreSQL plans both alike.
   */
  list(param: string, alias: string, columns: readonly (readonly [name: string, type: ListType])[]): string;
  /**
   * The statements inserting `rows` (values in `columns` order) into `table`; their rows together
   * are the RETURNING rows. SQLite: one prepared statement run per row, in-process (reading the
   * rows from a JSON list instead cost 1.3× the CPU for 20,000 hashes and 10,000 first_seen rows);
   * PostgreSQL: a statement per LIST_ROWS rows over a list parameter, a round trip per batch.
   * Give a `bytes` or `blob` value as a Buffer and a `bool` as a boolean; `suffix` follows the
   * statement (`RETURNING …`, `ON CONFLICT DO NOTHING`). A `blob` column (file content) makes
   * PostgreSQL's statements multi-row VALUES with one binary parameter per value instead: in a
   * list its bytes would travel as hex, twice the bytes, encoded here and decoded there (on the
   * 10,000-version bundle import the binary form measured 8.2 s against 9.9 s, median of 4 pairs).
   */
  insertRows(
    table: string,
    columns: readonly (readonly [name: string, type: ListType])[],
    rows: readonly (readonly unknown[])[],
    suffix?: string,
  ): Step[];
  /**
   * Appended to a SELECT whose rows the transaction will update: ` FOR UPDATE [OF table]` on
   * PostgreSQL (replicas serialise on the row lock until COMMIT); nothing on SQLite, whose write
   * transaction already holds the database's one write lock.
   */
  /**
   * The statements of a read by key (`KeyedRead`) for each of `keys` (values in `read.keys` order),
   * `params` being the statement's further parameters; their rows together answer the read.
   * SQLite: the statement run once per key, prepared, in-process (the list form cost 1.1× the CPU
   * of adding 10,000 versions: bench/add-versions-cpu.ts); PostgreSQL: a statement per LIST_ROWS
   * keys over a list parameter, a round trip per batch.
   */
  lookup(read: KeyedRead, keys: readonly (readonly unknown[])[], params?: readonly unknown[]): Step[];
  forUpdate(table?: string): string;
  /**
   * A statement taking a lock on the key `$1` until the transaction ends (PostgreSQL: a
   * transaction-scoped advisory lock, never a session-level one), or null on SQLite, whose write
   * transaction already is the only writer.
   */
  readonly keyLock: string | null;
}

/**
 * A read by key, written once for both dialects (`SqlDialect.lookup`): `sql` is the statement given
 * its table of keys, which comes first in its FROM (see `list`) and whose parameter is `$1`; the
 * statement's further parameters are `$2`, `$3`, …; it answers at most one row per key. The
 * table is named `k`; its columns are `at`,
 * the key's position in the keys given (select it to tell which key a row answers: cheaper than
 * the key's own columns), then `keys`.
 */
export interface KeyedRead {
  readonly keys: readonly (readonly [name: string, type: ListType])[];
  readonly sql: (keys: string) => string;
}

/** Runs the dialect's lookup statements; answers their rows together. */
export function* lookupFlow<T>(
  d: SqlDialect,
  read: KeyedRead,
  keys: readonly (readonly unknown[])[],
  params: readonly unknown[] = [],
): Flow<T[]> {
  const out: T[] = [];
  for (const step of d.lookup(read, keys, params)) {
    const { rows } = yield step;
    for (const row of rows) out.push(row as T);
  }
  return out;
}

/** Rows per statement of a list parameter: a statement's size stays bounded whatever the batch. */
export const LIST_ROWS = 1000;

/** `items` in slices of at most `size`. */
export function* batchesOf<T>(items: readonly T[], size = LIST_ROWS): Generator<readonly T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** Runs `flow` to its end with `step` running each statement, synchronously (SQLite). */
export function driveSync<T>(flow: Flow<T>, step: (s: Step) => StepResult): T {
  let next = flow.next();
  while (!next.done) next = flow.next(step(next.value));
  return next.value;
}

/** Runs `flow` to its end with `step` running each statement (PostgreSQL). */
export async function driveAsync<T>(flow: Flow<T>, step: (s: Step) => Promise<StepResult>): Promise<T> {
  let next = flow.next();
  while (!next.done) next = flow.next(await step(next.value));
  return next.value;
}

/**
 * The small per-dialect adapter the store's shared SQL runs on (docs/server.md "The store"):
 * sqlite/runner.ts over better-sqlite3 (statements prepared once per text), postgres/runner.ts over
 * the pool. Only what truly differs between the two is here; the SQL and its rules are written once
 * (crud.ts, quarantine.ts, …). Values come back as the driver gives them: a PostgreSQL bigint or
 * count(*) is text, an SQLite boolean is 0 or 1, so shared code converts with Number() / Boolean().
 */
export interface SqlRunner extends SqlDialect {
  /** The rows of a read. */
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * Writes `steps` in order, all in one transaction (on SQLite after an index swap in progress
   * has finished: sqlite/swap-index-thread.ts); answers each step's rows and changes.
   */
  write(steps: readonly Step[]): Promise<StepResult[]>;
  /** Runs a flow in one transaction (on SQLite after an index swap in progress has finished). */
  transaction<T>(flow: Flow<T>): Promise<T>;
  /** Runs a flow of reads, outside a transaction. */
  read<T>(flow: Flow<T>): Promise<T>;
}

/** Runs the dialect's insertRows statements; answers their RETURNING rows. */
export function* insertRowsFlow<T = never>(
  d: SqlDialect,
  table: string,
  columns: readonly (readonly [name: string, type: ListType])[],
  rows: readonly (readonly unknown[])[],
  suffix?: string,
): Flow<T[]> {
  const out: T[] = [];
  for (const step of d.insertRows(table, columns, rows, suffix)) out.push(...((yield step).rows as T[]));
  return out;
}

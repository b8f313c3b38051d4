/**
 * The one place SQL placeholders are converted (docs/server.md "The store"). SQL both dialects run
 * is written once, with PostgreSQL's numbered `$1, $2, …` placeholders, each used once and in
 * order; SQLite (better-sqlite3) takes `?` in the same order.
 */

/** `$1`-style placeholders as SQLite's `?`, in order. */
export const sqlite = (sql: string): string => sql.replace(/\$\d+/g, '?');

/** One statement and its parameters (`$n` placeholders). */
export type Step = readonly [sql: string, params: readonly unknown[]];

/** What a statement answered: its rows (a read, or RETURNING) and how many rows it changed. */
export interface StepResult {
  rows: unknown[];
  changes: number;
}

/**
 * The small per-dialect adapter the store's shared SQL runs on (docs/server.md "The store"):
 * sqlite/runner.ts over better-sqlite3 (statements prepared once per text), postgres/runner.ts over
 * the pool. Only what truly differs between the two is here; the SQL and its rules are written once
 * (crud.ts, quarantine.ts, …). Values come back as the driver gives them: a PostgreSQL bigint or
 * count(*) is text, an SQLite boolean is 0 or 1, so shared code converts with Number() / Boolean().
 */
export interface SqlRunner {
  readonly dialect: 'sqlite' | 'postgres';
  /** The rows of a read. */
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * Writes `steps` in order, all in one transaction (on SQLite after an index swap in progress
   * has finished: sqlite/swap-index-thread.ts); answers each step's rows and changes.
   */
  write(steps: readonly Step[]): Promise<StepResult[]>;
  /**
   * `expr` compared as bytes, for an ORDER BY (docs/server.md "Text is compared as bytes"):
   * `expr COLLATE "C"` on PostgreSQL, whose default collation follows the locale; SQLite's BINARY
   * default already is.
   */
  byteOrder(expr: string): string;
}

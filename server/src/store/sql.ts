/**
 * The one place SQL placeholders are converted (docs/server.md "The store"). SQL both dialects run
 * is written once, with PostgreSQL's numbered `$1, $2, …` placeholders, each used once and in
 * order; SQLite (better-sqlite3) takes `?` in the same order.
 */

/** `$1`-style placeholders as SQLite's `?`, in order. */
export const sqlite = (sql: string): string => sql.replace(/\$\d+/g, '?');

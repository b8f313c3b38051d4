// SQLite only: the shared SQL's runner over better-sqlite3, whose statements are synchronous (prepared once per text) and whose writes wait out the swap thread.
/**
 * The SqlRunner of sql.ts on SQLite (docs/server.md "The store"): `$n` placeholders become `?`,
 * each statement is prepared once per text and kept, and a list of writes runs in one synchronous
 * transaction, so nothing else on this connection runs between its statements. The index swap, in
 * its own synchronous transaction on the worker's connection, runs the same steps with `runSteps`.
 */
import type Database from 'better-sqlite3';
import { type SqlRunner, type Step, type StepResult, sqlite } from '../sql.js';
import type { Store } from './open.js';

/** Statement texts kept per connection: the store's SQL is a fixed set; a bound all the same. */
const MAX_PREPARED = 256;
const prepared = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/** The prepared statement of a `$n` text on `db`, prepared once. */
export function statementOf(db: Database.Database, text: string): Database.Statement {
  let cache = prepared.get(db);
  if (!cache) {
    cache = new Map();
    prepared.set(db, cache);
  }
  let statement = cache.get(text);
  if (!statement) {
    if (cache.size >= MAX_PREPARED) cache.clear();
    statement = db.prepare(sqlite(text));
    cache.set(text, statement);
  }
  return statement;
}

function runStep(db: Database.Database, [text, params]: Step): StepResult {
  const statement = statementOf(db, text);
  if (statement.reader) {
    const rows = statement.all(...params) as unknown[];
    return { rows, changes: rows.length };
  }
  return { rows: [], changes: statement.run(...params).changes };
}

/** Runs `steps` in order inside the caller's transaction (the swap's), synchronously. */
export function runSteps(db: Database.Database, steps: readonly Step[]): StepResult[] {
  return steps.map((step) => runStep(db, step));
}

/** `settled`: resolves once no index swap is in progress (sqlite/swap-index-thread.ts). */
export function sqliteRunner(store: Store, settled: () => Promise<void>): SqlRunner {
  const db = store.sqlite;
  const inTransaction = db.transaction((steps: readonly Step[]) => runSteps(db, steps));
  return {
    dialect: 'sqlite',
    async all<T>(text: string, params: readonly unknown[] = []) {
      return statementOf(db, text).all(...params) as T[];
    },
    async write(steps) {
      await settled();
      return steps.length === 1 ? [runStep(db, steps[0]!)] : inTransaction(steps);
    },
    byteOrder: (expr) => expr,
  };
}

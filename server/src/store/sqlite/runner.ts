// SQLite only: the shared SQL's runner over better-sqlite3, whose statements are synchronous (prepared once per text) and whose writes wait out the swap thread.
/**
 * The SqlRunner of sql.ts on SQLite (docs/server.md "The store"): `$n` placeholders become `?`,
 * each statement is prepared once per text and kept, and a list of writes runs in one synchronous
 * transaction, so nothing else on this connection runs between its statements. The index swap, in
 * its own synchronous transaction on the worker's connection, runs the same steps with `runSteps`.
 */
import type Database from 'better-sqlite3';
import {
  driveSync,
  type Flow,
  type ListType,
  type SqlDialect,
  type SqlRunner,
  type Step,
  type StepResult,
  sqlite,
} from '../sql.js';
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

/** Runs `flow` inside the caller's transaction (the swap's, or the runner's), synchronously. */
export function runFlow<T>(db: Database.Database, flow: Flow<T>): T {
  return driveSync(flow, (step) => runStep(db, step));
}

const LIST_COLUMN: Record<ListType, (at: string) => string> = {
  text: (at) => at,
  int: (at) => at,
  bigint: (at) => at,
  bool: (at) => at, // JSON true/false read as 1/0, SQLite's booleans
  bytes: (at) => `unhex(${at})`,
  blob: (at) => `unhex(${at})`,
};

/** The SQL fragments of SQLite (sql.ts SqlDialect). */
export const sqliteDialect: SqlDialect = {
  dialect: 'sqlite',
  byteOrder: (expr) => expr,
  list: (param, alias, columns) =>
    `(SELECT ${columns.map(([name, type], i) => `${LIST_COLUMN[type](`value->>${i}`)} AS ${name}`).join(', ')} FROM json_each(${param})) AS ${alias}`,
  insertRows(table, columns, rows, suffix) {
    const sql = `INSERT INTO ${table} (${columns.map(([name]) => name).join(', ')}) VALUES (${columns
      .map((_, i) => `$${i + 1}`)
      .join(', ')})${suffix ? ` ${suffix}` : ''}`;
    const bools = columns.flatMap(([, type], i) => (type === 'bool' ? [i] : []));
    return rows.map((row): Step => {
      if (bools.length === 0) return [sql, row];
      const values = [...row];
      for (const i of bools) values[i] = values[i] === null ? null : values[i] ? 1 : 0;
      return [sql, values];
    });
  },
  forUpdate: () => '',
  keyLock: null,
};

/** `settled`: resolves once no index swap is in progress (sqlite/swap-index-thread.ts). */
export function sqliteRunner(store: Store, settled: () => Promise<void>): SqlRunner {
  const db = store.sqlite;
  const inTransaction = db.transaction((steps: readonly Step[]) => runSteps(db, steps));
  return {
    ...sqliteDialect,
    async all<T>(text: string, params: readonly unknown[] = []) {
      return statementOf(db, text).all(...params) as T[];
    },
    async write(steps) {
      await settled();
      return steps.length === 1 ? [runStep(db, steps[0]!)] : inTransaction(steps);
    },
    async transaction(flow) {
      await settled();
      // IMMEDIATE: the write lock first, so what the flow read cannot change before it writes.
      return db.transaction(() => runFlow(db, flow)).immediate();
    },
    async read(flow) {
      return runFlow(db, flow);
    },
  };
}

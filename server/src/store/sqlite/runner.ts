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
  type KeyedRead,
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

function runStep(db: Database.Database, [text, params, each]: Step): StepResult {
  const statement = statementOf(db, text);
  if (each) return runEach(statement, each);
  if (statement.reader) {
    const rows = statement.all(...params) as unknown[];
    return { rows, changes: rows.length };
  }
  return { rows: [], changes: statement.run(...params).changes };
}

/**
 * `statement` run once per row of parameters (sql.ts Step, `each`), each run answering at most one
 * row (a one-row insert's RETURNING, a read by key): `get`, which measured 0.6× the CPU of `all`.
 */
function runEach(statement: Database.Statement, each: readonly (readonly unknown[])[]): StepResult {
  if (statement.reader) {
    const rows: unknown[] = [];
    for (let i = 0; i < each.length; i++) {
      const row = statement.get(...each[i]!);
      if (row !== undefined) rows.push(row);
    }
    return { rows, changes: rows.length };
  }
  let changes = 0;
  for (const params of each) changes += statement.run(...params).changes;
  return { rows: [], changes };
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

/** A row's values as better-sqlite3 binds them: a `bool` column as 1 or 0, SQLite's booleans. */
function boundValues(columns: readonly (readonly [name: string, type: ListType])[]) {
  const bools = columns.flatMap(([, type], i) => (type === 'bool' ? [i] : []));
  if (bools.length === 0) return (row: readonly unknown[]) => row;
  return (row: readonly unknown[]) => {
    const values = [...row];
    for (const i of bools) values[i] = values[i] === null ? null : values[i] ? 1 : 0;
    return values;
  };
}

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
    const values = boundValues(columns);
    return rows.length === 0 ? [] : [[sql, [], rows.map(values)]];
  },
  lookup(read: KeyedRead, keys, params = []) {
    // One row of bound keys as the table k; better-sqlite3 binds `?` in order, so the key columns
    // all read `$1` (converted with the rest) and the statement's own `$2`, `$3`, … follow them.
    const sql = read.sql(`(SELECT $1 AS at${read.keys.map(([name]) => `, $1 AS ${name}`).join('')}) AS k`);
    const values = boundValues(read.keys);
    if (keys.length === 0) return [];
    return [[sql, [], keys.map((key, at) => [at, ...values(key), ...params])]];
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
      return steps.length === 1 && !steps[0]![2] ? [runStep(db, steps[0]!)] : inTransaction(steps);
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

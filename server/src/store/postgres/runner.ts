// PostgreSQL only: the shared SQL's runner over the pg pool, a list of writes in one transaction on one pooled client.
/**
 * The SqlRunner of sql.ts on PostgreSQL (docs/server.md "The store"): reads on the pool, one write
 * as its own statement, several in one transaction on one client (nothing session-level, so it
 * works behind PgBouncer in transaction mode). The index swap runs the same steps on its
 * transaction's client with `runStepsOn`.
 */
import type pg from 'pg';
import {
  batchesOf,
  driveAsync,
  type Flow,
  type KeyedRead,
  type ListType,
  listParam,
  type SqlDialect,
  type SqlRunner,
  type Step,
  type StepResult,
} from '../sql.js';
import { type PostgresStore, pgTransaction } from './open.js';

/** Runs `steps` in order on `client` (inside the caller's transaction, or one statement alone). */
export async function runStepsOn(
  client: pg.Pool | pg.PoolClient,
  steps: readonly Step[],
): Promise<StepResult[]> {
  const results: StepResult[] = [];
  for (const step of steps) results.push(await runStepOn(client, step));
  return results;
}

/** One statement on `client` (a Step's `each` is SQLite's alone: this dialect never makes one). */
async function runStepOn(client: pg.Pool | pg.PoolClient, [text, values]: Step): Promise<StepResult> {
  const res = await client.query({ text, values: values as unknown[] });
  return { rows: res.rows, changes: res.rowCount ?? 0 };
}

/** Runs `flow` on `client`, inside the caller's transaction (or statement by statement on the pool). */
export function runFlowOn<T>(client: pg.Pool | pg.PoolClient, flow: Flow<T>): Promise<T> {
  return driveAsync(flow, (step) => runStepOn(client, step));
}

const LIST_COLUMN: Record<ListType, (at: string) => string> = {
  text: (at) => at,
  int: (at) => `(${at})::int`,
  bigint: (at) => `(${at})::bigint`,
  bool: (at) => `(${at})::boolean`,
  bytes: (at) => `decode(${at}, 'hex')`,
  blob: (at) => `decode(${at}, 'hex')`,
};

/** Rows of content per statement at most, and bytes: a statement stays well under PostgreSQL's limits. */
const VALUES_ROWS = 256;
const VALUES_BYTES = 8 * 1024 * 1024;

/**
 * Multi-row VALUES statements, one binary parameter per value (sql.ts `insertRows`, a `blob`
 * column). A batch of n rows is sent as statements of power-of-two sizes, so the statement texts
 * stay a small fixed set.
 */
function valuesSteps(
  table: string,
  names: readonly string[],
  rows: readonly (readonly unknown[])[],
  tail: string,
) {
  const steps: Step[] = [];
  const width = names.length;
  const flush = (batch: readonly (readonly unknown[])[]) => {
    let at = 0;
    while (at < batch.length) {
      let n = 1;
      while (n * 2 <= batch.length - at) n *= 2;
      const part = batch.slice(at, at + n);
      at += n;
      const tuples = part.map((_, r) => `(${names.map((_, c) => `$${r * width + c + 1}`).join(', ')})`);
      steps.push([
        `INSERT INTO ${table} (${names.join(', ')}) VALUES ${tuples.join(', ')}${tail}`,
        part.flat(),
      ]);
    }
  };
  let batch: (readonly unknown[])[] = [];
  let bytes = 0;
  for (const row of rows) {
    batch.push(row);
    for (const v of row) if (Buffer.isBuffer(v)) bytes += v.length;
    if (batch.length >= VALUES_ROWS || bytes >= VALUES_BYTES) {
      flush(batch);
      batch = [];
      bytes = 0;
    }
  }
  flush(batch);
  return steps;
}

/** `row` with the values at `at` (bytes) as hex, as a list parameter carries them. */
function hexBytes(row: readonly unknown[], at: readonly number[]): unknown[] {
  const out = [...row];
  for (const i of at) {
    const v = out[i];
    if (v !== null && v !== undefined) out[i] = Buffer.from(v as Uint8Array).toString('hex');
  }
  return out;
}

/** `sql` run once per LIST_ROWS `rows`, given as the list parameter `$1`, `params` after it. */
function listSteps(
  sql: string,
  columns: readonly (readonly [name: string, type: ListType])[],
  rows: readonly (readonly unknown[])[],
  params: readonly unknown[],
): Step[] {
  const bytes = columns.flatMap(([, type], i) => (type === 'bytes' ? [i] : []));
  const steps: Step[] = [];
  for (const batch of batchesOf(rows)) {
    const values = bytes.length === 0 ? batch : batch.map((row) => hexBytes(row, bytes));
    steps.push([sql, [listParam(values), ...params]]);
  }
  return steps;
}

/** The SQL fragments of PostgreSQL (sql.ts SqlDialect). */
export const postgresDialect: SqlDialect = {
  dialect: 'postgres',
  byteOrder: (expr) => `${expr} COLLATE "C"`,
  list: (param, alias, columns) =>
    `(SELECT ${columns.map(([name, type], i) => `${LIST_COLUMN[type](`e.v->>${i}`)} AS ${name}`).join(', ')} FROM jsonb_array_elements(${param}::jsonb) AS e(v)) AS ${alias}`,
  insertRows(table, columns, rows, suffix) {
    const names = columns.map(([name]) => name);
    const tail = suffix ? ` ${suffix}` : '';
    if (columns.some(([, type]) => type === 'blob')) return valuesSteps(table, names, rows, tail);
    const sql = `INSERT INTO ${table} (${names.join(', ')}) SELECT ${names.map((n) => `r.${n}`).join(', ')}
      FROM ${postgresDialect.list('$1', 'r', columns)}${tail}`;
    return listSteps(sql, columns, rows, []);
  },
  lookup(read: KeyedRead, keys, params = []) {
    const columns = [['at', 'int'] as const, ...read.keys];
    const sql = read.sql(postgresDialect.list('$1', 'k', columns));
    return listSteps(
      sql,
      columns,
      keys.map((key, at) => [at, ...key]),
      params,
    );
  },
  forUpdate: (table) => (table ? ` FOR UPDATE OF ${table}` : ' FOR UPDATE'),
  keyLock: 'SELECT pg_advisory_xact_lock(hashtext($1))',
};

export function postgresRunner(store: PostgresStore): SqlRunner {
  const { pool } = store;
  return {
    ...postgresDialect,
    async all<T>(text: string, params: readonly unknown[] = []) {
      return (await pool.query({ text, values: params as unknown[] })).rows as T[];
    },
    write: (steps) =>
      steps.length === 1
        ? runStepsOn(pool, steps)
        : pgTransaction(pool, (client) => runStepsOn(client, steps)),
    transaction: (flow) => pgTransaction(pool, (client) => runFlowOn(client, flow)),
    read: (flow) => runFlowOn(pool, flow),
  };
}

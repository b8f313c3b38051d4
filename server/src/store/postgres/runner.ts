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
  for (const [text, values] of steps) {
    const res = await client.query({ text, values: values as unknown[] });
    results.push({ rows: res.rows, changes: res.rowCount ?? 0 });
  }
  return results;
}

/** Runs `flow` on `client`, inside the caller's transaction (or statement by statement on the pool). */
export function runFlowOn<T>(client: pg.Pool | pg.PoolClient, flow: Flow<T>): Promise<T> {
  return driveAsync(flow, async ([text, values]) => {
    const res = await client.query({ text, values: values as unknown[] });
    return { rows: res.rows, changes: res.rowCount ?? 0 };
  });
}

const LIST_COLUMN: Record<ListType, (at: string) => string> = {
  text: (at) => at,
  int: (at) => `(${at})::int`,
  bigint: (at) => `(${at})::bigint`,
  bool: (at) => `(${at})::boolean`,
  bytes: (at) => `decode(${at}, 'hex')`,
};

/** `row` with the values at `at` (bytes) as hex, as a list parameter carries them. */
function hexBytes(row: readonly unknown[], at: readonly number[]): unknown[] {
  const out = [...row];
  for (const i of at) {
    const v = out[i];
    if (v !== null && v !== undefined) out[i] = Buffer.from(v as Uint8Array).toString('hex');
  }
  return out;
}

/** The SQL fragments of PostgreSQL (sql.ts SqlDialect). */
export const postgresDialect: SqlDialect = {
  dialect: 'postgres',
  byteOrder: (expr) => `${expr} COLLATE "C"`,
  list: (param, alias, columns) =>
    `(SELECT ${columns.map(([name, type], i) => `${LIST_COLUMN[type](`e.v->>${i}`)} AS ${name}`).join(', ')} FROM jsonb_array_elements(${param}::jsonb) AS e(v)) AS ${alias}`,
  insertRows(table, columns, rows, returning) {
    const names = columns.map(([name]) => name);
    const sql = `INSERT INTO ${table} (${names.join(', ')}) SELECT ${names.map((n) => `r.${n}`).join(', ')}
      FROM ${postgresDialect.list('$1', 'r', columns)}${returning ? ` RETURNING ${returning}` : ''}`;
    const bytes = columns.flatMap(([, type], i) => (type === 'bytes' ? [i] : []));
    const steps: Step[] = [];
    for (const batch of batchesOf(rows)) {
      const values = bytes.length === 0 ? batch : batch.map((row) => hexBytes(row, bytes));
      steps.push([sql, [listParam(values)]]);
    }
    return steps;
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

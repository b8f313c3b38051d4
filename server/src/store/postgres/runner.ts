// PostgreSQL only: the shared SQL's runner over the pg pool, a list of writes in one transaction on one pooled client.
/**
 * The SqlRunner of sql.ts on PostgreSQL (docs/server.md "The store"): reads on the pool, one write
 * as its own statement, several in one transaction on one client (nothing session-level, so it
 * works behind PgBouncer in transaction mode). The index swap runs the same steps on its
 * transaction's client with `runStepsOn`.
 */
import type pg from 'pg';
import type { SqlRunner, Step, StepResult } from '../sql.js';
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

export function postgresRunner(store: PostgresStore): SqlRunner {
  const { pool } = store;
  return {
    dialect: 'postgres',
    async all<T>(text: string, params: readonly unknown[] = []) {
      return (await pool.query({ text, values: params as unknown[] })).rows as T[];
    },
    write: (steps) =>
      steps.length === 1
        ? runStepsOn(pool, steps)
        : pgTransaction(pool, (client) => runStepsOn(client, steps)),
    byteOrder: (expr) => `${expr} COLLATE "C"`,
  };
}

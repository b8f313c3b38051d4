// PostgreSQL only: the quarantine writes outside a swap over the pool, each in one transaction with row locks across replicas; the SQL text and rules are ../quarantine.ts's.
/** Quarantines outside a swap on PostgreSQL (docs/integrity-store.md §2, §4). */
import type { Pool } from 'pg';
import type { LogSigner } from '../../../../client/src/integrity/index.js';
import { INSERT_CHECKPOINT_SQL } from '../checksum-log.js';
import type {
  Accepted,
  AcceptInput,
  FirstSeenRow,
  OpenQuarantineCount,
  QuarantineEvent,
} from '../contract.js';
import {
  ACCEPTANCES_SQL,
  type AcceptanceRow,
  acceptancesOf,
  acceptedOf,
  acceptPlan,
  acceptRequest,
  acceptWrites,
  currentCheckpointOf,
  MARK_NOTIFIED_SQL,
  OPEN_COUNTS_SQL,
  OPEN_OF_VERSION_SQL,
  type OpenOfVersion,
  openCountsOf,
  UNDELIVERED_SQL,
  type UndeliveredRow,
  undeliveredEvents,
} from '../quarantine.js';
import { LATEST_CHECKPOINT_SQL, NEWEST_RECORD_SQL } from '../reads.js';
import { appendRecordsPg, PgHashStore } from './checksum-log.js';
import { pgTransaction } from './open.js';

/** acceptQuarantine on PostgreSQL: one transaction, the log's row lock serialising appenders. */
export async function acceptQuarantinePg(pool: Pool, input: AcceptInput): Promise<Accepted> {
  const request = acceptRequest(input);
  return pgTransaction(pool, async (client) => {
    const open = await client.query<OpenOfVersion>(`${OPEN_OF_VERSION_SQL} FOR UPDATE`, [
      input.registryId,
      request.template,
      request.version,
    ]);
    const current = await client.query<FirstSeenRow>(NEWEST_RECORD_SQL, [request.template, request.version]);
    const { open: row, record } = acceptPlan(request, open.rows[0], current.rows[0]?.digest);
    const { fromSize } = await appendRecordsPg(client, [record], input.signer, input.now);
    for (const [sql, params] of acceptWrites(input, request.reason, row.id, record, fromSize)) {
      await client.query(sql, params);
    }
    return acceptedOf(input, request.reason, record, fromSize);
  });
}

export async function markNotifiedPg(pool: Pool, id: number, now: number): Promise<void> {
  await pool.query(MARK_NOTIFIED_SQL, [now, id]);
}

export async function undeliveredPg(pool: Pool): Promise<QuarantineEvent[]> {
  return undeliveredEvents((await pool.query<UndeliveredRow>(UNDELIVERED_SQL)).rows);
}

export async function currentCheckpointPg(
  pool: Pool,
  signer: LogSigner,
  now: number,
): Promise<{ size: number; note: string }> {
  const [stored] = (await pool.query<{ size: string; note: string }>(LATEST_CHECKPOINT_SQL)).rows;
  return currentCheckpointOf(
    new PgHashStore(pool),
    stored ? { size: Number(stored.size), note: stored.note } : undefined,
    signer,
    async (size, root, note) => {
      await pool.query(INSERT_CHECKPOINT_SQL, [size, root, note, now]);
    },
  );
}

export async function acceptancesPg(pool: Pool, registryId: number, limit: number): Promise<Accepted[]> {
  return acceptancesOf((await pool.query<AcceptanceRow>(ACCEPTANCES_SQL, [registryId, limit])).rows);
}

export async function openQuarantineCountsPg(pool: Pool): Promise<OpenQuarantineCount[]> {
  return openCountsOf((await pool.query<OpenQuarantineCount>(OPEN_COUNTS_SQL)).rows);
}

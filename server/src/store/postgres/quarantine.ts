// PostgreSQL only: the acceptance's transaction takes row locks that serialise it across replicas; the SQL text and rules are ../quarantine.ts's.
/** Accepting changed content on PostgreSQL (docs/integrity-store.md §2, §4). */
import type { Pool } from 'pg';
import type { Accepted, AcceptInput, FirstSeenRow } from '../contract.js';
import {
  acceptedOf,
  acceptPlan,
  acceptRequest,
  acceptWrites,
  OPEN_OF_VERSION_SQL,
  type OpenOfVersion,
} from '../quarantine.js';
import { NEWEST_RECORD_SQL } from '../reads.js';
import { appendRecordsPg } from './checksum-log.js';
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

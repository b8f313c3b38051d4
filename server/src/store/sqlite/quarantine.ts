// SQLite only: the acceptance's transaction is synchronous, as the log's hash store must be inside a better-sqlite3 transaction; the SQL text and rules are ../quarantine.ts's.
/** Accepting changed content on SQLite (docs/integrity-store.md §2, §4). */
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
import { sqlite } from '../sql.js';
import { appendRecordsSqlite } from './checksum-log.js';
import type { Store } from './open.js';

/**
 * Closes the open quarantine of a version and records its new digest as superseding the old
 * one: a first_seen row and a log record `… <new> supersedes <old>`, with a signed checkpoint, in
 * one transaction. The next sync then serves the new content.
 */
export function acceptQuarantine(store: Store, input: AcceptInput): Accepted {
  const request = acceptRequest(input);
  const db = store.sqlite;
  return db.transaction((): Accepted => {
    const { open, record } = acceptPlan(
      request,
      db.prepare(sqlite(OPEN_OF_VERSION_SQL)).get(input.registryId, request.template, request.version) as
        | OpenOfVersion
        | undefined,
      (
        db.prepare(sqlite(NEWEST_RECORD_SQL)).get(request.template, request.version) as
          | FirstSeenRow
          | undefined
      )?.digest,
    );
    const { fromSize } = appendRecordsSqlite(db, [record], input.signer, input.now);
    for (const [sql, params] of acceptWrites(input, request.reason, open.id, record, fromSize)) {
      db.prepare(sqlite(sql)).run(...params);
    }
    return acceptedOf(input, request.reason, record, fromSize);
  })();
}

// SQLite only: the quarantine writes outside a swap as synchronous better-sqlite3 transactions; the SQL text and rules are ../quarantine.ts's.
/** Quarantines outside a swap on SQLite (docs/integrity-store.md §2, §4). */
import type { LogSigner } from '../../../../client/src/integrity/index.js';
import { INSERT_CHECKPOINT_SQL } from '../checksum-log.js';
import type {
  Accepted,
  AcceptInput,
  CheckpointRow,
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
import { sqlite } from '../sql.js';
import { appendRecordsSqlite, SqliteHashStore } from './checksum-log.js';
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

/** Records that every configured URL received a quarantine's notification. */
export function markNotified(store: Store, id: number, now: number): void {
  store.sqlite.prepare(sqlite(MARK_NOTIFIED_SQL)).run(now, id);
}

/** Open quarantines whose notification was never delivered (resent at start). */
export function undelivered(store: Store): QuarantineEvent[] {
  return undeliveredEvents(store.sqlite.prepare(UNDELIVERED_SQL).all() as UndeliveredRow[]);
}

export function currentCheckpoint(
  store: Store,
  signer: LogSigner,
  now: number,
): Promise<{ size: number; note: string }> {
  const db = store.sqlite;
  return currentCheckpointOf(
    new SqliteHashStore(db),
    db.prepare(LATEST_CHECKPOINT_SQL).get() as CheckpointRow | undefined,
    signer,
    (size, root, note) => {
      db.prepare(sqlite(INSERT_CHECKPOINT_SQL)).run(size, root, note, now);
    },
  );
}

export function acceptances(store: Store, registryId: number, limit: number): Accepted[] {
  return acceptancesOf(
    store.sqlite.prepare(sqlite(ACCEPTANCES_SQL)).all(registryId, limit) as AcceptanceRow[],
  );
}

export function openQuarantineCounts(store: Store): OpenQuarantineCount[] {
  return openCountsOf(store.sqlite.prepare(OPEN_COUNTS_SQL).all() as OpenQuarantineCount[]);
}

// SQLite only: the first-seen step's reads and writes on a better-sqlite3 connection, synchronous, inside the caller's transaction; the decisions are ../first-seen.ts's.
/**
 * The first-seen record on SQLite (docs/integrity-store.md §2, §6): loads what ../first-seen.ts
 * decides on and writes what it decided, inside the index swap's or the added versions'
 * transaction.
 */
import type Database from 'better-sqlite3';
import type { LogRecord } from '../../../../client/src/integrity/index.js';
import type { BuiltIndex, IndexedFile } from '../../indexer/build-index.js';
import type { QuarantineEvent } from '../contract.js';
import {
  type AddedKey,
  type AddedPlan,
  CLOSE_ACCEPTED_SQL,
  FIRST_SEEN_SQL,
  type FirstSeenMeta,
  type FirstSeenPlan,
  keepFirstSeen,
  NEWEST_FIRST_SEEN_SQL,
  OPEN_OF_SQL,
  OPEN_SQL,
  openingEvent,
  planAdded,
  planFirstSeen,
  type QuarantineOpening,
  REVERTED_REASON,
  SERVED_FILES_SQL,
  SERVED_SQL,
  SERVED_VERSION_SQL,
  type ServedVersion,
  servedKey,
  stateOf,
  templateRange,
} from '../first-seen.js';
import { sqlite } from '../sql.js';
import { appendRecordsSqlite } from './checksum-log.js';

/**
 * The first-seen step of the SQLite swap, inside its transaction and before the old index is
 * deleted: decides (planFirstSeen), keeps the served rows of quarantined versions in `built`,
 * writes first_seen rows, quarantines and closes reverted ones. Returns the records to append to
 * the log (their first_seen rows take log indexes from `logSize`) and the events to announce.
 */
export function firstSeenSqlite(
  db: Database.Database,
  built: BuiltIndex,
  meta: FirstSeenMeta,
  appendLog: (records: readonly LogRecord[]) => number,
): FirstSeenPlan {
  const [lo, hi] = templateRange(meta.registry);
  const state = stateOf(
    db.prepare(sqlite(SERVED_SQL)).all(meta.registryId) as never,
    db.prepare(sqlite(FIRST_SEEN_SQL)).all(lo, hi) as never,
    db.prepare(sqlite(OPEN_SQL)).all(lo, hi) as never,
  );
  const plan = planFirstSeen(built, state, meta);
  if (plan.quarantinedKeys.size > 0) {
    const versionRow = db.prepare(sqlite(SERVED_VERSION_SQL));
    const fileRows = db.prepare(sqlite(SERVED_FILES_SQL));
    keepFirstSeen(
      built,
      meta,
      plan.quarantinedKeys,
      (collection, template, version) => {
        const id = state.served.get(servedKey(collection, template, version))?.id;
        const row = id === undefined ? undefined : (versionRow.get(id) as ServedVersion | undefined);
        if (!row) return undefined;
        return { ...row, hasExample: Boolean(row.hasExample), files: fileRows.all(id) as IndexedFile[] };
      },
      plan.quarantined,
    );
  }
  if (plan.records.length > 0) {
    const first = appendLog(plan.records);
    const insert = db.prepare(
      `INSERT INTO first_seen (template, version, digest, supersedes, log_index, registry_id, sync_id, seen_at)
       VALUES (?, ?, ?, NULL, ?, ?, ?, ?)`,
    );
    plan.records.forEach((r, i) => {
      insert.run(r.template, r.version, r.digest, first + i, meta.registryId, meta.syncId, meta.now);
    });
  }
  const insertQ = db.prepare(
    `INSERT INTO quarantines (registry_id, template, version, first_digest, new_digest, changed_files, tree_sha, since)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  );
  const refreshQ = db.prepare(
    'UPDATE quarantines SET new_digest = ?, changed_files = ?, tree_sha = ?, notified_at = NULL WHERE id = ?',
  );
  for (const q of plan.quarantined) {
    const files = JSON.stringify(q.changedFiles);
    if (q.openId === undefined) {
      q.id = (
        insertQ.get(
          q.registryId,
          q.template,
          q.version,
          q.firstDigest,
          q.newDigest,
          files,
          q.treeSha,
          q.since,
        ) as {
          id: number;
        }
      ).id;
    } else {
      refreshQ.run(q.newDigest, files, q.treeSha, q.openId);
      q.id = q.openId;
    }
  }
  const close = db.prepare(
    "UPDATE quarantines SET accepted_at = ?, accepted_by = 'sync', reason = ? WHERE id = ? AND accepted_at IS NULL",
  );
  for (const id of plan.reverted) close.run(meta.now, REVERTED_REASON, id);
  return plan;
}

/**
 * The first-seen step of adding versions without a swap (a mirror's pull-through or sync, a bundle
 * import; docs/integrity-store.md §6), inside add-versions.ts's transaction: a version never seen
 * is recorded (at its first-seen time from elsewhere when earlier) and appended to the log; one
 * whose digest differs from its first-seen digest is quarantined and left out.
 */
export function firstSeenOfAdded<V extends AddedKey>(
  db: Database.Database,
  meta: FirstSeenMeta,
  versions: readonly V[],
): AddedPlan<V> {
  const newest = db.prepare(sqlite(NEWEST_FIRST_SEEN_SQL));
  const plan = planAdded(
    meta,
    versions,
    (template, version) => (newest.get(template, version) as { digest: string } | undefined)?.digest,
  );
  if (plan.records.length > 0) {
    const { fromSize } = appendRecordsSqlite(db, plan.records, undefined, meta.now);
    const insert = db.prepare(
      `INSERT INTO first_seen (template, version, digest, supersedes, log_index, registry_id, sync_id, seen_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    plan.records.forEach((r, i) => {
      const supersedes = r.supersedes ?? null;
      insert.run(
        r.template,
        r.version,
        r.digest,
        supersedes,
        fromSize + i,
        meta.registryId,
        meta.syncId,
        r.seenAt,
      );
    });
  }
  const close = db.prepare(sqlite(CLOSE_ACCEPTED_SQL));
  for (const a of plan.accepted) close.run(meta.now, a.reason, a.template, a.version);
  const quarantined: QuarantineEvent[] = [];
  for (const q of plan.openings) {
    const event = openQuarantine(db, q);
    if (event) quarantined.push(event);
  }
  return { kept: plan.kept, quarantined };
}

/**
 * Opens (or refreshes) the quarantine of a version whose new digest is known (a mirror's upstream
 * disagreeing with its first-seen record, or quarantining it itself). The event to announce, or
 * undefined when the open quarantine already says so.
 */
export function openQuarantine(db: Database.Database, q: QuarantineOpening): QuarantineEvent | undefined {
  const open = db.prepare(sqlite(OPEN_OF_SQL)).get(q.template, q.version) as
    | { id: number; newDigest: string }
    | undefined;
  if (open?.newDigest === q.newDigest) return undefined;
  const files = JSON.stringify(q.changedFiles ?? []);
  if (open) {
    db.prepare(
      'UPDATE quarantines SET new_digest = ?, changed_files = ?, notified_at = NULL WHERE id = ?',
    ).run(q.newDigest, files, open.id);
    return openingEvent(q, open.id, open.id);
  }
  const row = db
    .prepare(
      `INSERT INTO quarantines (registry_id, template, version, first_digest, new_digest, changed_files, since)
       VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    )
    .get(q.registryId, q.template, q.version, q.firstDigest, q.newDigest, files, q.since) as { id: number };
  return openingEvent(q, undefined, row.id);
}

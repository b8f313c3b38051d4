/**
 * Quarantine writes outside a swap (docs/integrity-store.md §2, §4): an admin accepting changed
 * content (audited: who, when, reason, old → new; the acceptance is itself a log record), the
 * delivery mark of notifications, and the checkpoint an API read needs when the newest stored
 * one is older than the log (a swap without a signer): the SQL text (`$n` placeholders, sql.ts),
 * the rules and the acceptance's flow, the same for both dialects over their runners (the
 * contract's `checksums`). The swap's own writes are in first-seen.ts.
 */
import { DmError } from '../../../client/src/error.js';
import {
  type LogRecord,
  type LogSigner,
  type MerkleHashStore,
  MerkleLog,
  signCheckpoint,
} from '../../../client/src/integrity/index.js';
import type { ChangedFile, QuarantineInfo } from '../../../client/src/wire/registry-api.js';
import { appendRecordsFlow, INSERT_CHECKPOINT_SQL, SqlHashStore } from './checksum-log.js';
import type {
  Accepted,
  AcceptInput,
  CheckpointRow,
  ChecksumQueries,
  FirstSeenRow,
  OpenQuarantineCount,
  QuarantineEvent,
} from './contract.js';
import { canonicalTemplate } from './first-seen.js';
import { LATEST_CHECKPOINT_SQL, NEWEST_RECORD_SQL } from './reads.js';
import { type Flow, rowsOf, type SqlDialect, type SqlRunner } from './sql.js';

/** The longest accepted reason. */
export const MAX_REASON_LENGTH = 1000;

/** Splits `[<collection>/]<template>@<version>`; throws INVALID_REQUEST naming the part. */
export function parseVersionRef(ref: string): { collection: string; template: string; version: string } {
  const at = ref.lastIndexOf('@');
  const path = at > 0 ? ref.slice(0, at) : '';
  const parts = path.split('/');
  if (at <= 0 || at === ref.length - 1 || parts.length > 2 || parts.some((p) => p === '')) {
    throw new DmError(
      'INVALID_REQUEST',
      `'${ref.slice(0, 200)}' is not [<collection>/]<template>@<version>`,
      { category: 'invalid-input' },
    );
  }
  return {
    collection: parts.length === 2 ? parts[0]! : '',
    template: parts[parts.length - 1]!,
    version: ref.slice(at + 1),
  };
}

export const OPEN_OF_VERSION_SQL = `SELECT id, first_digest AS "firstDigest", new_digest AS "newDigest" FROM quarantines
  WHERE registry_id = $1 AND template = $2 AND version = $3 AND accepted_at IS NULL`;
export const SUPERSEDE_SQL = `INSERT INTO first_seen (template, version, digest, supersedes, log_index, registry_id, sync_id, seen_at)
  VALUES ($1, $2, $3, $4, $5, $6, NULL, $7)`;
export const CLOSE_SQL =
  'UPDATE quarantines SET accepted_at = $1, accepted_by = $2, reason = $3 WHERE id = $4';
// The source has not changed since: forget the conditional-request state so the next sync
// rebuilds the index (and serves the accepted content) instead of answering `unchanged`.
export const FORGET_SOURCE_STATE_SQL = 'UPDATE registries SET etag = NULL, "commit" = NULL WHERE id = $1';
export const MARK_NOTIFIED_SQL =
  'UPDATE quarantines SET notified_at = $1 WHERE id = $2 AND notified_at IS NULL';
export const UNDELIVERED_SQL = `SELECT q.id, q.registry_id AS "registryId", r.name AS registry, q.template, q.version,
    q.first_digest AS "firstDigest", q.new_digest AS "newDigest", q.changed_files AS "changedFiles",
    q.tree_sha AS "treeSha", q.since
  FROM quarantines q JOIN registries r ON r.id = q.registry_id
  WHERE q.accepted_at IS NULL AND q.notified_at IS NULL ORDER BY q.id`;

/** An accept request checked: its reason, version and canonical template name. */
export function acceptRequest(input: AcceptInput): { reason: string; template: string; version: string } {
  if (
    typeof input.reason !== 'string' ||
    input.reason.trim() === '' ||
    input.reason.length > MAX_REASON_LENGTH
  ) {
    throw new DmError(
      'INVALID_REQUEST',
      `reason must be a string of 1 to ${MAX_REASON_LENGTH} characters saying why the changed content is accepted`,
      { category: 'invalid-input' },
    );
  }
  const ref = parseVersionRef(input.ref);
  return {
    reason: input.reason,
    template: canonicalTemplate(input.registry, ref.collection, ref.template),
    version: ref.version,
  };
}

export type OpenOfVersion = { id: number; firstDigest: string; newDigest: string };

/** What the accept transaction reads: the open quarantine and the newest first-seen digest. */
export function acceptPlan(
  request: { reason: string; template: string; version: string },
  open: OpenOfVersion | undefined,
  current: string | undefined,
) {
  if (!open || current === undefined) {
    throw new DmError('QUARANTINE_NOT_FOUND', `${request.template}@${request.version} is not quarantined`, {
      category: 'not-found',
      details: { template: request.template, version: request.version },
    });
  }
  return {
    open,
    record: {
      template: request.template,
      version: request.version,
      digest: open.newDigest,
      supersedes: current,
    },
  };
}

export function acceptedOf(
  input: AcceptInput,
  reason: string,
  record: LogRecord & { supersedes: string },
  logIndex: number,
): Accepted {
  return {
    template: record.template,
    version: record.version,
    oldDigest: record.supersedes,
    newDigest: record.digest,
    acceptedAt: input.now,
    acceptedBy: input.by,
    reason,
    logIndex,
  };
}

/**
 * The accept's writes once its log record took index `fromSize` (`$n` statements with their
 * parameters): the superseding first_seen row, the closed quarantine, the forgotten source state.
 */
export function acceptWrites(
  input: AcceptInput,
  reason: string,
  openId: number,
  record: LogRecord & { supersedes: string },
  fromSize: number,
): [string, unknown[]][] {
  return [
    [
      SUPERSEDE_SQL,
      [
        record.template,
        record.version,
        record.digest,
        record.supersedes,
        fromSize,
        input.registryId,
        input.now,
      ],
    ],
    [CLOSE_SQL, [input.now, input.by, reason, openId]],
    [FORGET_SOURCE_STATE_SQL, [input.registryId]],
  ];
}

export type UndeliveredRow = Omit<QuarantineEvent, 'changedFiles' | 'openId' | 'since'> & {
  id: number;
  changedFiles: string;
  since: number | string;
};

export function undeliveredEvents(rows: readonly UndeliveredRow[]): QuarantineEvent[] {
  return rows.map((r) => ({
    ...r,
    since: Number(r.since),
    openId: r.id,
    changedFiles: JSON.parse(r.changedFiles) as ChangedFile[],
  }));
}

/**
 * The newest checkpoint, signing one of the log's current size first when the newest stored one
 * is older (or there is none: the empty log's). `hashes` and `stored` read the store; `insert`
 * keeps the new checkpoint (a concurrent signer of the same size wins: ON CONFLICT DO NOTHING).
 */
export async function currentCheckpointOf(
  hashes: MerkleHashStore,
  stored: CheckpointRow | undefined,
  signer: LogSigner,
  insert: (size: number, root: string, note: string) => Promise<void> | void,
): Promise<{ size: number; note: string }> {
  const size = await hashes.size();
  if (stored && stored.size >= size) return stored;
  const log = await MerkleLog.open(hashes);
  const root = await log.root();
  const note = signCheckpoint({ size: log.size, root }, signer);
  await insert(log.size, root.toString('base64'), note);
  return { size: log.size, note };
}

/** The open quarantine of a version (by canonical template name and version), for the catalog. */
export const OPEN_QUARANTINE_OF_SQL = `SELECT since, new_digest AS "newDigest", changed_files AS "changedFiles"
  FROM quarantines WHERE template = $1 AND version = $2 AND accepted_at IS NULL`;

/** `{quarantined: …}` for a stored open quarantine row, or nothing. */
export function quarantineField(
  row: { since: number | string; newDigest: string; changedFiles: string | ChangedFile[] } | undefined,
): { quarantined?: QuarantineInfo } {
  if (!row) return {};
  return {
    quarantined: {
      since: new Date(Number(row.since)).toISOString(),
      newDigest: row.newDigest,
      changedFiles: typeof row.changedFiles === 'string' ? JSON.parse(row.changedFiles) : row.changedFiles,
    },
  };
}

/** The most acceptances one audit answer lists (newest first). */
export const MAX_AUDIT_ENTRIES = 1000;

/**
 * An admin's acceptances of changed content in a registry, newest first: who, when, why, the
 * digest replaced and the one accepted, and the superseding record's log index. Quarantines a
 * sync closed itself (the source went back, `accepted_by = 'sync'`) accepted nothing: not listed.
 */
export const ACCEPTANCES_SQL = `SELECT q.template, q.version, q.first_digest AS "oldDigest", q.new_digest AS "newDigest",
    q.accepted_at AS "acceptedAt", q.accepted_by AS "acceptedBy", q.reason,
    (SELECT fs.log_index FROM first_seen fs WHERE fs.template = q.template AND fs.version = q.version
       AND fs.digest = q.new_digest AND fs.supersedes = q.first_digest ORDER BY fs.id DESC LIMIT 1) AS "logIndex"
  FROM quarantines q
  WHERE q.registry_id = $1 AND q.accepted_at IS NOT NULL AND q.accepted_by <> 'sync'
  ORDER BY q.accepted_at DESC, q.id DESC LIMIT $2`;

export type AcceptanceRow = Omit<Accepted, 'acceptedAt' | 'logIndex'> & {
  acceptedAt: number | string;
  logIndex: number | string | null;
};

export const acceptancesOf = (rows: readonly AcceptanceRow[]): Accepted[] =>
  rows.map((r) => ({ ...r, acceptedAt: Number(r.acceptedAt), logIndex: Number(r.logIndex ?? -1) }));

export const OPEN_COUNTS_SQL = `SELECT r.name AS registry, r.visibility, count(*) AS open
  FROM quarantines q JOIN registries r ON r.id = q.registry_id
  WHERE q.accepted_at IS NULL GROUP BY r.name, r.visibility`;

export const openCountsOf = (
  rows: readonly (Omit<OpenQuarantineCount, 'open'> & { open: number | string })[],
) => rows.map((r) => ({ ...r, open: Number(r.open) }));

/**
 * Closes the open quarantine of a version and records its new digest as superseding the old
 * one: a first_seen row and a log record `… <new> supersedes <old>`, with a signed checkpoint, in
 * the caller's transaction (on PostgreSQL the quarantine's and the log's row locks serialise it
 * across replicas). The next sync then serves the new content.
 */
export function* acceptFlow(d: SqlDialect, input: AcceptInput): Flow<Accepted> {
  const request = acceptRequest(input);
  const [open] = yield* rowsOf<OpenOfVersion>(`${OPEN_OF_VERSION_SQL}${d.forUpdate()}`, [
    input.registryId,
    request.template,
    request.version,
  ]);
  const [current] = yield* rowsOf<FirstSeenRow>(NEWEST_RECORD_SQL, [request.template, request.version]);
  const { open: row, record } = acceptPlan(request, open, current?.digest);
  const { fromSize } = yield* appendRecordsFlow(d, [record], input.signer, input.now);
  for (const step of acceptWrites(input, request.reason, row.id, record, fromSize)) yield step;
  return acceptedOf(input, request.reason, record, fromSize);
}

/** The contract's `checksums`, over the dialect's runner. */
export function checksumQueriesOf(sql: SqlRunner): ChecksumQueries {
  const hashes = new SqlHashStore(sql);
  return {
    accept: (input) => sql.transaction(acceptFlow(sql, input)),
    async markNotified(id, now) {
      await sql.write([[MARK_NOTIFIED_SQL, [now, id]]]);
    },
    async undelivered() {
      return undeliveredEvents(await sql.all<UndeliveredRow>(UNDELIVERED_SQL));
    },
    async checkpoint(signer, now) {
      const [stored] = await sql.all<{ size: number | string; note: string }>(LATEST_CHECKPOINT_SQL);
      return currentCheckpointOf(
        hashes,
        stored && { size: Number(stored.size), note: stored.note },
        signer,
        async (size, root, note) => {
          await sql.write([[INSERT_CHECKPOINT_SQL, [size, root, note, now]]]);
        },
      );
    },
    async acceptances(registryId, limit) {
      return acceptancesOf(await sql.all<AcceptanceRow>(ACCEPTANCES_SQL, [registryId, limit]));
    },
    async openCounts() {
      return openCountsOf(await sql.all<OpenQuarantineCount>(OPEN_COUNTS_SQL));
    },
  };
}

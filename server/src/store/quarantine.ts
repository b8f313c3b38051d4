/**
 * Quarantine writes outside a swap (docs/integrity-store.md §2, §4): an admin accepting changed
 * content (audited: who, when, reason, old → new; the acceptance is itself a log record), the
 * delivery mark of notifications, and the checkpoint an API read needs when the newest stored
 * one is older than the log (a swap without a signer). SQLite; the swap's own writes are in
 * first-seen.ts for both dialects.
 */
import { DmError } from '../../../client/src/error.js';
import { type LogSigner, MerkleLog, signCheckpoint } from '../../../client/src/integrity/index.js';
import { appendRecordsSqlite, SqliteHashStore } from './checksum-log.js';
import type { Store } from './db.js';
import { type ChangedFile, canonicalTemplate, type QuarantineEvent } from './first-seen.js';

/** The longest accepted reason. */
export const MAX_REASON_LENGTH = 1000;

export interface AcceptInput {
  registryId: number;
  /** `host/owner/repo`. */
  registry: string;
  /** `[<collection>/]<template>@<version>`, as in the route. */
  ref: string;
  reason: unknown;
  /** Who accepts (`token:<id>`, `admin`). */
  by: string;
  now: number;
  signer: LogSigner | undefined;
}

export interface Accepted {
  template: string;
  version: string;
  oldDigest: string;
  newDigest: string;
  acceptedAt: number;
  acceptedBy: string;
  reason: string;
  logIndex: number;
}

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

/**
 * Closes the open quarantine of a version and records its new digest as superseding the old
 * one: a first_seen row and a log record `… <new> supersedes <old>`, with a signed checkpoint, in
 * one transaction. The next sync then serves the new content.
 */
export function acceptQuarantine(store: Store, input: AcceptInput): Accepted {
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
  const reason = input.reason;
  const ref = parseVersionRef(input.ref);
  const template = canonicalTemplate(input.registry, ref.collection, ref.template);
  const db = store.sqlite;
  return db.transaction((): Accepted => {
    const open = db
      .prepare(
        `SELECT id, first_digest AS firstDigest, new_digest AS newDigest FROM quarantines
         WHERE registry_id = ? AND template = ? AND version = ? AND accepted_at IS NULL`,
      )
      .get(input.registryId, template, ref.version) as
      | { id: number; firstDigest: string; newDigest: string }
      | undefined;
    if (!open) {
      throw new DmError('QUARANTINE_NOT_FOUND', `${template}@${ref.version} is not quarantined`, {
        category: 'not-found',
        details: { template, version: ref.version },
      });
    }
    const current = db
      .prepare('SELECT digest FROM first_seen WHERE template = ? AND version = ? ORDER BY id DESC LIMIT 1')
      .pluck()
      .get(template, ref.version) as string;
    const record = { template, version: ref.version, digest: open.newDigest, supersedes: current };
    const { fromSize } = appendRecordsSqlite(db, [record], input.signer, input.now);
    db.prepare(
      `INSERT INTO first_seen (template, version, digest, supersedes, log_index, registry_id, sync_id, seen_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL, ?)`,
    ).run(template, ref.version, open.newDigest, current, fromSize, input.registryId, input.now);
    db.prepare('UPDATE quarantines SET accepted_at = ?, accepted_by = ?, reason = ? WHERE id = ?').run(
      input.now,
      input.by,
      reason,
      open.id,
    );
    // The source has not changed since: forget the conditional-request state so the next sync
    // rebuilds the index (and serves the accepted content) instead of answering `unchanged`.
    db.prepare('UPDATE registries SET etag = NULL, "commit" = NULL WHERE id = ?').run(input.registryId);
    return {
      template,
      version: ref.version,
      oldDigest: current,
      newDigest: open.newDigest,
      acceptedAt: input.now,
      acceptedBy: input.by,
      reason,
      logIndex: fromSize,
    };
  })();
}

/** Records that every configured URL received a quarantine's notification. */
export function markNotified(store: Store, id: number, now: number): void {
  store.sqlite
    .prepare('UPDATE quarantines SET notified_at = ? WHERE id = ? AND notified_at IS NULL')
    .run(now, id);
}

/** Open quarantines whose notification was never delivered (resent at start). */
export function undelivered(store: Store): QuarantineEvent[] {
  const rows = store.sqlite
    .prepare(
      `SELECT q.id, q.registry_id AS registryId, r.name AS registry, q.template, q.version,
              q.first_digest AS firstDigest, q.new_digest AS newDigest, q.changed_files AS changedFiles,
              q.tree_sha AS treeSha, q.since
       FROM quarantines q JOIN registries r ON r.id = q.registry_id
       WHERE q.accepted_at IS NULL AND q.notified_at IS NULL ORDER BY q.id`,
    )
    .all() as (Omit<QuarantineEvent, 'changedFiles' | 'openId'> & { changedFiles: string })[];
  return rows.map((r) => ({ ...r, openId: r.id, changedFiles: JSON.parse(r.changedFiles) }));
}

/**
 * The newest checkpoint, signing one of the log's current size first when the newest stored one
 * is older (or there is none: the empty log's).
 */
export async function currentCheckpoint(
  store: Store,
  signer: LogSigner,
  now: number,
): Promise<{ size: number; note: string }> {
  const db = store.sqlite;
  const hashes = new SqliteHashStore(db);
  const size = hashes.size();
  const stored = db.prepare('SELECT size, note FROM log_checkpoints ORDER BY size DESC LIMIT 1').get() as
    | { size: number; note: string }
    | undefined;
  if (stored && stored.size >= size) return stored;
  const log = await MerkleLog.open(hashes);
  const root = await log.root();
  const note = signCheckpoint({ size: log.size, root }, signer);
  db.prepare(
    'INSERT INTO log_checkpoints (size, root, note, signed_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
  ).run(log.size, root.toString('base64'), note, now);
  return { size: log.size, note };
}

/** The open quarantine of a version (by canonical template name and version), for the catalog. */
export const OPEN_QUARANTINE_OF_SQL = `SELECT since, new_digest AS newDigest, changed_files AS changedFiles
  FROM quarantines WHERE template = ? AND version = ? AND accepted_at IS NULL`;

/** What answers show of a quarantine (docs/integrity-store.md §4). */
export interface QuarantineInfo {
  since: string;
  newDigest: string;
  changedFiles: ChangedFile[];
}

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

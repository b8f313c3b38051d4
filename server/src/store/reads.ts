/**
 * What both dialects' reads share (docs/server.md "The store"): the SQL text they both run (with
 * `$n` placeholders; sql.ts converts them for SQLite), the rows' conversions and the version order.
 * read-queries.ts answers the contract's ReadStore with them; quarantine.ts and the pages use a few.
 */

import { compareVersions, tryParseVersion } from '../../../client/src/reference/index.js';
import type { ChangedFile } from '../../../client/src/wire/registry-api.js';
import type { QuarantineRow } from './contract.js';

/**
 * The version's first sight, by its canonical full template name (`host/owner/repo/[collection/]template`),
 * for the versions queries (`v`, `t`, `r`: versions, templates, registries).
 */
export const FIRST_SEEN_AT_SQL = `(SELECT fs.seen_at FROM first_seen fs
  WHERE fs.template = r.name || '/' || CASE WHEN t.collection = '' THEN '' ELSE t.collection || '/' END || t.name
    AND fs.version = v.version ORDER BY fs.id LIMIT 1)`;

/** Open quarantines as stored (changed_files as JSON text, times maybe as text on PostgreSQL). */
export function quarantineRows(
  rows: readonly (Omit<QuarantineRow, 'changedFiles' | 'since'> & {
    changedFiles: string;
    since: number | string;
  })[],
): QuarantineRow[] {
  return rows.map((r) => ({
    ...r,
    since: Number(r.since),
    changedFiles: JSON.parse(r.changedFiles) as ChangedFile[],
  }));
}

const QUARANTINE_COLUMNS = `id, template, version, first_digest AS "firstDigest", new_digest AS "newDigest",
  changed_files AS "changedFiles", since`;

/** Open quarantines of a registry, by template and version. */
export const OPEN_QUARANTINES_SQL = `SELECT ${QUARANTINE_COLUMNS} FROM quarantines
  WHERE registry_id = $1 AND accepted_at IS NULL ORDER BY template, version`;

/** The newest first-seen row of a key. */
export const NEWEST_RECORD_SQL = `SELECT digest, supersedes, log_index AS "logIndex", registry_id AS "registryId" FROM first_seen
  WHERE template = $1 AND version = $2 ORDER BY id DESC LIMIT 1`;

export const LATEST_CHECKPOINT_SQL = 'SELECT size, note FROM log_checkpoints ORDER BY size DESC LIMIT 1';

/** How many syncs the history answers (the store keeps as many: KEEP_SYNCS). */
export const SYNC_HISTORY = 100;

/** Largest file `inlineText` returns (example.yaml on the pages); bigger ones are linked only. */
export const MAX_INLINE_BYTES = 64 * 1024;

/**
 * Version strings newest first in semver order; names that are not versions sort last. Each string
 * is parsed once, not once per comparison (2,000 versions sorted: 11.5 ms of CPU was the parsing).
 */
export function newestFirst<T extends { version: string }>(rows: T[]): T[] {
  const keyed = rows.map((row) => ({ row, parsed: tryParseVersion(row.version) }));
  keyed.sort((a, b) => {
    const va = a.parsed;
    const vb = b.parsed;
    if (!va || !vb) return a.row.version < b.row.version ? 1 : -1;
    return compareVersions(vb, va) || (a.row.version < b.row.version ? 1 : -1);
  });
  for (const [i, k] of keyed.entries()) rows[i] = k.row;
  return rows;
}

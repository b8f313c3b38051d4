/**
 * The records of the checksum log (docs/integrity.md §2): one leaf per first-seen version digest,
 * one text line, so the leaf's bytes are the same wherever they are computed:
 *
 *   <template> <version> <digest>\n
 *   <template> <version> <digest> supersedes <old digest>\n     (an accepted change, issue 11)
 *
 * `<template>` is the canonical full template name (`github.com/o/r/[c/]t`, formatTemplateName),
 * `<version>` the version directory's name as published (`v1.0.3`, not a request), `<digest>` the
 * version digest (`sha256:` + 64 lowercase hex, docs/registry-layout.md). A client that locked a
 * digest recomputes the leaf from what it has and checks it against the log; it never needs the
 * server's copy of the bytes. The lookup key `<template>@<version>` names a record in the API.
 */
import type { DmError } from '../error.js';
import { formatTemplateName, parseReference } from '../reference/reference.js';
import { tryParseVersion } from '../reference/version.js';
import { integrityError } from './errors.js';

export interface LogRecord {
  template: string;
  version: string;
  digest: string;
  /** The digest this record replaces, for a change an admin accepted. */
  supersedes?: string | undefined;
}

/** Longer than any valid record (a reference is at most 1,024 characters). */
export const MAX_RECORD_BYTES = 2048;

const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

function checkTemplate(template: string, version: string, where: string): void {
  let canonical: string | undefined;
  try {
    const ref = parseReference(`${template}:${version}`);
    if (ref.kind === 'registry') canonical = formatTemplateName(ref);
  } catch (error) {
    throw integrityError('CHECKSUM_RECORD_INVALID', `${where}: ${(error as DmError).message}`);
  }
  if (canonical !== template) {
    throw integrityError(
      'CHECKSUM_RECORD_INVALID',
      `${where}: '${template}' is not a canonical full template name (github.com/<owner>/<repo>/[<collection>/]<template>)`,
    );
  }
}

function checkRecord(record: LogRecord, where: string): void {
  const v = tryParseVersion(record.version);
  if (v === undefined || v.raw !== record.version) {
    throw integrityError('CHECKSUM_RECORD_INVALID', `${where}: '${record.version}' is not a version`);
  }
  checkTemplate(record.template, record.version, where);
  for (const [what, digest] of [
    ['digest', record.digest],
    ['superseded digest', record.supersedes],
  ] as const) {
    if (digest !== undefined && !DIGEST_RE.test(digest)) {
      throw integrityError(
        'CHECKSUM_RECORD_INVALID',
        `${where}: the ${what} '${digest}' is not sha256:<64 hex digits>`,
      );
    }
  }
  if (record.supersedes === record.digest) {
    throw integrityError('CHECKSUM_RECORD_INVALID', `${where}: a digest cannot supersede itself`);
  }
}

/** The record's leaf data (UTF-8 text, one line); throws CHECKSUM_RECORD_INVALID for a bad record. */
export function encodeRecord(record: LogRecord): string {
  checkRecord(record, 'log record');
  const tail = record.supersedes === undefined ? '' : ` supersedes ${record.supersedes}`;
  return `${record.template} ${record.version} ${record.digest}${tail}\n`;
}

/** Parses a record's leaf data; `encodeRecord(parseRecord(s)) === s` for every valid s. */
export function parseRecord(data: string | Uint8Array): LogRecord {
  const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
  const shown = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
  if (text.length > MAX_RECORD_BYTES || !text.endsWith('\n') || text.indexOf('\n') !== text.length - 1) {
    throw integrityError(
      'CHECKSUM_RECORD_INVALID',
      `log record ${shown} is not one line ending in a newline`,
    );
  }
  const fields = text.slice(0, -1).split(' ');
  if (!(fields.length === 3 || (fields.length === 5 && fields[3] === 'supersedes'))) {
    throw integrityError(
      'CHECKSUM_RECORD_INVALID',
      `log record ${shown} is not '<template> <version> <digest>[ supersedes <digest>]'`,
    );
  }
  const record: LogRecord = { template: fields[0]!, version: fields[1]!, digest: fields[2]! };
  if (fields.length === 5) record.supersedes = fields[4]!;
  checkRecord(record, `log record ${shown}`);
  return record;
}

/** The lookup key of a record: `<template>@<version>`. */
export function recordKey(record: Pick<LogRecord, 'template' | 'version'>): string {
  return `${record.template}@${record.version}`;
}

/** Parses a lookup key (the API path after `/checksums/lookup/`); throws CHECKSUM_RECORD_INVALID. */
export function parseRecordKey(key: string): Pick<LogRecord, 'template' | 'version'> {
  const at = key.lastIndexOf('@');
  if (at <= 0 || key.length > MAX_RECORD_BYTES) {
    throw integrityError('CHECKSUM_RECORD_INVALID', `'${key.slice(0, 80)}' is not <template>@<version>`);
  }
  const found = { template: key.slice(0, at), version: key.slice(at + 1) };
  const v = tryParseVersion(found.version);
  if (v === undefined || v.raw !== found.version) {
    throw integrityError('CHECKSUM_RECORD_INVALID', `'${key}': '${found.version}' is not a version`);
  }
  checkTemplate(found.template, found.version, `'${key}'`);
  return found;
}

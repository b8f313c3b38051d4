/**
 * The error codes of the checksum log (docs/integrity.md §6). Declared here as one list so they
 * merge into the project's union of error codes in one line; `integrityError` keeps each code's
 * category in one place, so the CLI's exit code and the server's HTTP status never disagree.
 */
import { DmError, type DmErrorOptions, type ErrorCategory } from '../error.js';

export const INTEGRITY_ERROR_CATEGORIES = {
  /** A log key (verifier or signer key text) is malformed. */
  CHECKSUM_KEY_INVALID: 'invalid-input',
  /** A log record (`<template> <version> <digest>`) or a leaf hash to append is malformed. */
  CHECKSUM_RECORD_INVALID: 'invalid-input',
  /** A checkpoint or signed note is malformed (not a signature failure). */
  CHECKSUM_CHECKPOINT_INVALID: 'invalid-input',
  /** The checkpoint carries no signature by the trusted key (unsigned, or signed by another key). */
  CHECKSUM_CHECKPOINT_UNTRUSTED: 'invalid-input',
  /** The trusted key's signature on the checkpoint does not verify: the checkpoint was altered. */
  CHECKSUM_SIGNATURE_INVALID: 'invalid-input',
  /** A proof is malformed (bad base64, wrong hash length, too many hashes). */
  CHECKSUM_PROOF_INVALID: 'invalid-input',
  /** An inclusion proof does not lead to the checkpoint's root: the record is not in the log as shown. */
  CHECKSUM_INCLUSION_FAILED: 'conflict',
  /** A consistency proof fails: the log's history was rewritten (or the server shows a fork). */
  CHECKSUM_LOG_INCONSISTENT: 'conflict',
  /** The log's record for a version has another digest than the one the client has. */
  CHECKSUM_MISMATCH: 'conflict',
  /** An index or tree size outside the log (a proof asked beyond its end, sizes out of order). */
  CHECKSUM_RANGE_INVALID: 'invalid-input',
  /** The hash store changed under a writer (two writers appended at once). */
  CHECKSUM_STORE_CONFLICT: 'conflict',
} as const satisfies Record<string, ErrorCategory>;

export type IntegrityErrorCode = keyof typeof INTEGRITY_ERROR_CATEGORIES;

/** A DmError with one of this module's codes and that code's category. */
export function integrityError(
  code: IntegrityErrorCode,
  message: string,
  options: Omit<DmErrorOptions, 'category'> = {},
): DmError {
  return new DmError(code, message, { ...options, category: INTEGRITY_ERROR_CATEGORIES[code] });
}

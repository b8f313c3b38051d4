/**
 * The error codes of the checksum log (docs/integrity.md §6). Their categories and meanings are in
 * the project's one table of codes (client/src/error-codes.ts), so the CLI's exit code and the
 * server's HTTP status never disagree.
 */
import { DmError, type DmErrorOptions } from '../error.js';
import type { ErrorCode } from '../error-codes.js';

export type IntegrityErrorCode = Extract<ErrorCode, `CHECKSUM_${string}`>;

/** A DmError with one of this module's codes and that code's category. */
export function integrityError(
  code: IntegrityErrorCode,
  message: string,
  options: Omit<DmErrorOptions, 'category'> = {},
): DmError {
  return new DmError(code, message, options);
}

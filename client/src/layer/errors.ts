/**
 * Deckhand's error kinds (docs/layering.md "Errors and exit codes"), as stable DmError codes. Every failure of the
 * renderer is one of these; messages name the document (schema, name, layer) and the path
 * involved. Each kind's category (and so its exit code) is in client/src/error-codes.ts: a document
 * failing the format checks is a validation failure (exit 4), Deckhand's 409 kinds are conflicts,
 * everything else is bad input (exit 1).
 */
import { DmError } from '../error.js';

export const LAYERING_ERROR_KINDS = [
  'InvalidDocumentFormat',
  'LayeringPolicyNotFound',
  'InvalidDocumentLayer',
  'InvalidDocumentParent',
  'IndeterminateDocumentParent',
  'InvalidDocumentReplacement',
  'SubstitutionDependencyCycle',
  'UnsupportedActionMethod',
  'MissingDocumentKey',
  'SubstitutionSourceNotFound',
  'SubstitutionSourceDataNotFound',
  'UnknownSubstitutionError',
  'EncryptionSourceNotFound',
  'MissingDocumentPattern',
] as const;

export type LayeringErrorKind = (typeof LAYERING_ERROR_KINDS)[number];

export function layeringError(
  kind: LayeringErrorKind,
  message: string,
  details: Record<string, unknown> = {},
  hint?: string,
): DmError {
  return new DmError(kind, message, {
    details,
    ...(hint === undefined ? {} : { hint }),
  });
}

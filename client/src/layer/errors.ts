/**
 * The error kinds of spec/layering.md §15, as stable DmError codes. Every failure of the renderer
 * is one of these; messages name the document (schema, name, layer) and the path involved.
 */
import { DmError, type ErrorCategory } from '../error.js';

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

/**
 * Categories decide exit codes (client/src/error.ts): a document that fails the format checks is a
 * validation failure (exit 4); Deckhand's 409 kinds are conflicts; everything else is bad input (exit 1).
 */
const CATEGORIES: Record<LayeringErrorKind, ErrorCategory> = {
  InvalidDocumentFormat: 'validation',
  LayeringPolicyNotFound: 'conflict',
  InvalidDocumentLayer: 'invalid-input',
  InvalidDocumentParent: 'invalid-input',
  IndeterminateDocumentParent: 'invalid-input',
  InvalidDocumentReplacement: 'invalid-input',
  SubstitutionDependencyCycle: 'invalid-input',
  UnsupportedActionMethod: 'invalid-input',
  MissingDocumentKey: 'invalid-input',
  SubstitutionSourceNotFound: 'conflict',
  SubstitutionSourceDataNotFound: 'invalid-input',
  UnknownSubstitutionError: 'invalid-input',
  EncryptionSourceNotFound: 'invalid-input',
  MissingDocumentPattern: 'invalid-input',
};

export function layeringError(
  kind: LayeringErrorKind,
  message: string,
  details: Record<string, unknown> = {},
  hint?: string,
): DmError {
  return new DmError(kind, message, {
    category: CATEGORIES[kind],
    details,
    ...(hint === undefined ? {} : { hint }),
  });
}

/**
 * Merge errors carry cloud-init's exception class as their DmError code (docs/merging.md):
 * `ValueError` (a merge specification that cannot be parsed, an empty or non-mapping user-data
 * part), `ImportError` (an unknown merger), `KeyError`, `TypeError`, and, for malformed list-form
 * specifications only, `IndexError` and `AttributeError`, which cloud-init raises there too.
 * The message is dm's own; the kinds' categories are in client/src/error-codes.ts.
 */
import { DmError } from '../error.js';
import { keyToString, type MergeKey } from './value.js';

export type MergeErrorKind =
  | 'ValueError'
  | 'ImportError'
  | 'KeyError'
  | 'TypeError'
  | 'IndexError'
  | 'AttributeError';

export const MERGE_ERROR_KINDS: readonly MergeErrorKind[] = [
  'ValueError',
  'ImportError',
  'KeyError',
  'TypeError',
  'IndexError',
  'AttributeError',
];

/**
 * Thrown inside the engine; `path` is filled in while the error travels up through the mergers,
 * and the entry points turn it into a DmError whose message names that path.
 */
export class MergeFailure extends DmError<MergeErrorKind> {
  readonly kind: MergeErrorKind;
  readonly reason: string;
  /** Where in the incoming document it happened, outermost first. */
  readonly path: MergePathPart[] = [];

  constructor(kind: MergeErrorKind, reason: string) {
    super(kind, reason, { category: 'invalid-input' });
    this.kind = kind;
    this.reason = reason;
  }
}

/** A mapping key, or a list index. */
export type MergePathPart = { key: MergeKey } | { index: number };

export function mergeFailure(kind: MergeErrorKind, reason: string): MergeFailure {
  return new MergeFailure(kind, reason);
}

/** `a.b[2]` for a path of keys and list indexes (`$` for the root). */
export function formatMergePath(path: readonly MergePathPart[]): string {
  let out = '';
  for (const part of path) {
    if ('index' in part) out += `[${part.index}]`;
    else out += out === '' ? keyToString(part.key) : `.${keyToString(part.key)}`;
  }
  return out === '' ? '$' : out;
}

/** Records, on a MergeFailure passing through, the key or index it passed through. */
export function addPathPart(error: unknown, part: MergePathPart): void {
  if (error instanceof MergeFailure) error.path.unshift(part);
}

export interface MergeErrorContext {
  /** Where the document came from, e.g. `b.yaml` or `b.yaml (document 2)`. */
  source?: string;
}

/** The DmError an entry point throws or reports: kind as code, message naming source and path. */
export function toMergeDmError(failure: MergeFailure, context: MergeErrorContext = {}): DmError {
  const where = [
    context.source,
    failure.path.length > 0 ? `at ${formatMergePath(failure.path)}` : undefined,
  ].filter((s) => s !== undefined);
  const message = where.length > 0 ? `${where.join(', ')}: ${failure.reason}` : failure.reason;
  return new DmError(failure.kind, message, {
    category: 'invalid-input',
    details: {
      kind: failure.kind,
      ...(context.source === undefined ? {} : { source: context.source }),
      ...(failure.path.length > 0 ? { path: formatMergePath(failure.path) } : {}),
    },
  });
}

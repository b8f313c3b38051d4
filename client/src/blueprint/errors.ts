/**
 * Blueprint errors carry the phase in which they occur (docs/blueprints.md "Commands"):
 * the phase is the DmError's `code` and is repeated in `details.phase`. Each phase's default
 * category (validation for the checking phases, invalid input for executions) is in
 * client/src/error-codes.ts.
 */
import { DmError } from '../error.js';
import type { CategoryOf } from '../error-codes.js';

export type Phase =
  | 'schema'
  | 'imports'
  | 'importExecutions'
  | 'subinstallationExecutions'
  | 'deployExecutions'
  | 'exportExecutions'
  | 'template'
  | 'subinstallations'
  | 'deployItems'
  | 'exports';

export const PHASES: readonly Phase[] = [
  'schema',
  'imports',
  'importExecutions',
  'subinstallationExecutions',
  'deployExecutions',
  'exportExecutions',
  'template',
  'subinstallations',
  'deployItems',
  'exports',
];

export class BlueprintError extends DmError<Phase> {
  readonly phase: Phase;

  constructor(
    phase: Phase,
    message: string,
    options: { category?: CategoryOf<Phase>; details?: Record<string, unknown>; hint?: string } = {},
  ) {
    super(phase, message, {
      ...(options.category ? { category: options.category } : {}),
      details: { phase, ...options.details },
      ...(options.hint ? { hint: options.hint } : {}),
    });
    this.name = 'BlueprintError';
    this.phase = phase;
  }
}

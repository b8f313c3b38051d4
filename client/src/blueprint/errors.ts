/**
 * Blueprint errors carry the phase in which they occur (docs/blueprints.md "Commands"):
 * the phase is the DmError's `code` and is repeated in `details.phase`.
 */
import { DmError, type ErrorCategory } from '../error.js';

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

const VALIDATION: ReadonlySet<Phase> = new Set([
  'schema',
  'imports',
  'subinstallations',
  'deployItems',
  'exports',
]);

export class BlueprintError extends DmError {
  readonly phase: Phase;

  constructor(
    phase: Phase,
    message: string,
    options: { category?: ErrorCategory; details?: Record<string, unknown>; hint?: string } = {},
  ) {
    super(phase, message, {
      category: options.category ?? (VALIDATION.has(phase) ? 'validation' : 'invalid-input'),
      details: { phase, ...options.details },
      ...(options.hint ? { hint: options.hint } : {}),
    });
    this.name = 'BlueprintError';
    this.phase = phase;
  }
}

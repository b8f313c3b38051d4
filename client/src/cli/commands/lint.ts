import type { Command } from 'commander';
import { registerPlanned } from './not-implemented.js';

export function registerLintCommand(program: Command): void {
  registerPlanned(program, 'lint', 'check a registry directory against the registry layout rules');
}

import type { Command } from 'commander';
import { registerPlanned } from './not-implemented.js';

export function registerMergeCommand(program: Command): void {
  registerPlanned(program, 'merge', 'merge documents with cloud-init merge strategies');
}

import type { Command } from 'commander';
import { registerPlanned } from './not-implemented.js';

export function registerResolveCommands(program: Command): void {
  registerPlanned(program, 'search', 'search templates on a registry server');
  registerPlanned(program, 'versions', 'list the versions of a template');
  registerPlanned(program, 'resolve', 'resolve references to exact versions and digests');
}

import type { Command } from 'commander';
import { registerPlanned } from './not-implemented.js';

export function registerBlueprintCommands(program: Command): void {
  registerPlanned(program, 'blueprint', 'render or apply a Landscaper-style blueprint');
}

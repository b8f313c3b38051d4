import type { Command } from 'commander';
import { registerPlanned } from './not-implemented.js';

export function registerExpandCommands(program: Command): void {
  registerPlanned(program, 'expand', 'expand a configuration into resources and a layout');
  registerPlanned(program, 'template', 'render one template to text (template render)');
}

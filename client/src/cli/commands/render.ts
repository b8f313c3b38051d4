import type { Command } from 'commander';
import { registerPlanned } from './not-implemented.js';

export function registerRenderCommand(program: Command): void {
  registerPlanned(program, 'render', 'render layered documents (Deckhand-style layering and substitution)');
}

import type { Command } from 'commander';
import { DmError } from '../../error.js';

/** Registers a command that exists in spec/cli.md but is not built yet: it says so and exits 1. */
export function registerPlanned(program: Command, name: string, description: string): void {
  program
    .command(name)
    .description(`${description} (not implemented yet)`)
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .action(() => {
      throw new DmError('NOT_IMPLEMENTED', `'dm ${name}' is not implemented yet in this version of dm`);
    });
}

import type { Command } from 'commander';
import { registerPlanned } from './not-implemented.js';

export function registerPackageCommands(program: Command): void {
  registerPlanned(program, 'pull', 'fetch a template version into the cache or a directory');
  registerPlanned(program, 'install', 'resolve every reference of a configuration and write dm.lock');
  registerPlanned(program, 'update', 'float locked references to the newest allowed patch');
  registerPlanned(program, 'outdated', 'list newer versions of locked references');
  registerPlanned(program, 'cache', 'list, verify and clean the content cache');
}

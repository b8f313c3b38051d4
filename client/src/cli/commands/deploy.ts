import type { Command } from 'commander';
import { registerPlanned } from './not-implemented.js';

export function registerDeployCommands(program: Command): void {
  registerPlanned(program, 'deploy', 'expand a configuration and apply it to a cluster');
  registerPlanned(program, 'deployments', 'list, get and delete deployments');
  registerPlanned(program, 'manifests', 'show the manifests of a deployment');
  registerPlanned(program, 'types', 'list types and their instances');
}

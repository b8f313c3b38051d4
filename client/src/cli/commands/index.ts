/** Every `dm` command, registered in the order `dm --help` lists them. */
import type { Command } from 'commander';
import { registerAgentCommands } from './agent.js';
import { registerBlueprintCommands } from './blueprint.js';
import { registerConfigCommands } from './config.js';
import { registerDeployCommands } from './deploy.js';
import { registerExpandCommands } from './expand.js';
import { registerGitopsCommands } from './gitops.js';
import { registerLintCommand } from './lint.js';
import { registerMergeCommand } from './merge.js';
import { registerPackageCommands } from './package.js';
import { registerReleaseCommands } from './release.js';
import { registerRenderCommand } from './render.js';
import { registerResolveCommands } from './resolve.js';

export function registerCommands(program: Command): void {
  registerResolveCommands(program); // search, versions, resolve
  registerPackageCommands(program); // pull, install, update, outdated, cache
  registerExpandCommands(program); // expand, template render
  registerRenderCommand(program); // render
  registerMergeCommand(program); // merge
  registerBlueprintCommands(program); // blueprint render|apply
  registerDeployCommands(program); // deploy, deployments, manifests, types
  registerReleaseCommands(program); // diff, drift, rollback, history
  registerLintCommand(program); // lint
  registerGitopsCommands(program); // argocd generate, fn
  registerConfigCommands(program); // config, completion, version
  registerAgentCommands(program); // agent status|stop
}

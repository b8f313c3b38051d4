/**
 * One run of a blueprint installation without a cluster (docs/blueprints.md "How a run works"):
 * each installation goes through the phases in order — imports (imports.ts), subinstallations
 * (subinstallations.ts), deploy items (deploy-items.ts), the subinstallations themselves
 * (recursively, here), exports (exports.ts) — each phase returning its piece, with Landscaper's
 * ordering, validation and error phases. Every template renders through the one execution
 * runner (executions.ts) and the run's TemplateRenderer (the sandbox in sandbox.ts).
 */

import { isMapping } from '../data.js';
import type { ErrorCategory } from '../error.js';
import { deployItemsPhase } from './deploy-items.js';
import { BlueprintError, type Phase } from './errors.js';
import { type ExportedObjects, exportedObjects, exportsPhase } from './exports.js';
import { importsPhase } from './imports.js';
import {
  type BlueprintInputs,
  type BlueprintSource,
  type Files,
  parseBlueprint,
  parseInstallation,
} from './model.js';
import type { TemplateRenderer } from './sandbox.js';
import type { SchemaScope } from './schema.js';
import { type InstallationNode, type Obj, type RunEnv, rootContext } from './scope.js';
import { subinstallationBlueprint, subinstallationsPhase } from './subinstallations.js';

/** The one deep merge (client/src/data.ts), under the name blueprints have always exported. */
export { mergeDeep as deepMerge } from '../data.js';
export type { BlueprintInputs, BlueprintSource, Files } from './model.js';

/** What `dm blueprint render` reports for one installation; a key is absent when its step was not reached. */
export interface InstallationResult {
  /** The imports as stored after the import executions (docs/blueprints.md, "Choices…"). */
  imports?: Obj;
  deployItems?: Obj[];
  deployOrder?: string[][];
  subinstallations?: string[];
  subinstallationOrder?: string[][];
  /** The blueprint's declared exports as the export executions produced them. */
  exports?: Obj;
  exportedDataObjects?: Obj;
  exportedTargets?: Obj;
}

export interface RenderResult {
  installations: Record<string, InstallationResult>;
  /** `category`: what kind of failure (a `limit`, `blocked`…), which decides the exit code. */
  error?: { phase: Phase; message: string; category: ErrorCategory };
}

export interface RenderOptions {
  renderer: TemplateRenderer;
  /** Blueprints by a reference that is neither in `blueprints` nor inline (registry references). */
  resolveBlueprintRef?: (ref: string) => Promise<BlueprintSource | undefined>;
  /** Subinstallation nesting limit, default 20. */
  maxDepth?: number;
}

/**
 * Runs one installation and, in their order, its subinstallations; records each step's result
 * in `results` as soon as the step has succeeded. Returns the objects it exports to its parent's
 * context.
 */
async function runInstallation(
  env: RunEnv,
  node: InstallationNode,
  results: Record<string, InstallationResult>,
): Promise<ExportedObjects> {
  if (node.depth > env.maxDepth) {
    throw new BlueprintError(
      'subinstallations',
      `${node.path}: subinstallations nested deeper than ${env.maxDepth}`,
    );
  }
  results[node.path] ??= {};
  const out = results[node.path] as InstallationResult;
  const bp = parseBlueprint(node.files, node.path);
  const scope: SchemaScope = {
    localTypes: bp.localTypes,
    files: node.files,
    cdSchemas: env.inputs.jsonSchemas ?? {},
  };

  // steps 2–6
  const { imports, context } = await importsPhase(env, node, bp, scope);
  out.imports = imports;

  // step 7
  const subs = await subinstallationsPhase(env, node, bp, imports);
  if (subs.templates.length > 0) {
    out.subinstallations = subs.templates.map((t) => t.name);
    out.subinstallationOrder = subs.order;
  }

  // step 8
  const deploy = await deployItemsPhase(env, node, bp, imports);
  out.deployItems = deploy.items;
  out.deployOrder = deploy.order;

  // step 9: the subinstallations in their order; their exports land in this installation's context
  const byName = new Map(subs.templates.map((t) => [t.name, t]));
  for (const name of subs.order.flat()) {
    const spec = byName.get(name);
    if (!spec) continue;
    const source = await subinstallationBlueprint(env, node, spec);
    const exported = await runInstallation(
      env,
      {
        path: `${node.path}/${name}`,
        namespace: node.namespace,
        spec,
        files: source.files,
        cd: source.componentDescriptor ?? node.cd,
        parent: context,
        depth: node.depth + 1,
      },
      results,
    );
    for (const [k, v] of Object.entries(exported.dataObjects)) context.data.set(k, v);
    for (const [k, v] of Object.entries(exported.targets)) context.targets.set(k, v);
  }

  // step 10
  const { exports, values } = await exportsPhase(env, node, bp, imports, deploy.items, context, scope);
  out.exports = exports;
  const exported = exportedObjects(node, values);
  if (node.spec.exports.data.length > 0) out.exportedDataObjects = exported.dataObjects;
  if (node.spec.exports.targets.length > 0) out.exportedTargets = exported.targets;
  return exported;
}

/**
 * Renders one installation of the blueprint in `files` (docs/blueprints.md). Blueprint errors
 * are returned in `error` with everything computed before them; other failures (a template
 * time limit…) also end up there, with the phase in which they happened.
 */
export async function renderBlueprint(
  files: Files,
  inputs: BlueprintInputs,
  options: RenderOptions,
): Promise<RenderResult> {
  const env: RunEnv = {
    inputs,
    renderer: options.renderer,
    resolveBlueprintRef: options.resolveBlueprintRef,
    maxDepth: options.maxDepth ?? 20,
  };
  const result: RenderResult = { installations: {} };
  const installation: Obj = isMapping(inputs.installation) ? inputs.installation : {};
  const name =
    typeof installation.name === 'string' && installation.name ? installation.name : 'installation';
  const namespace = typeof installation.namespace === 'string' ? installation.namespace : 'default';
  try {
    result.installations[name] = {};
    const spec = parseInstallation(installation, name, name, false);
    await runInstallation(
      env,
      {
        path: name,
        namespace,
        spec,
        files,
        cd: inputs.componentDescriptor,
        parent: rootContext(inputs),
        depth: 0,
      },
      result.installations,
    );
  } catch (error) {
    if (!(error instanceof BlueprintError)) throw error;
    result.error = { phase: error.phase, message: error.message, category: error.category };
  }
  return result;
}

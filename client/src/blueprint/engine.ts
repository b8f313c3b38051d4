import { deployItemsPhase } from './deploy-items.js';
import { BlueprintError, type Phase } from './errors.js';
import { evaluateMapping, runExecutions, standardBinding } from './executions.js';
import { importsPhase } from './imports.js';
import {
  type Blueprint,
  type BlueprintInputs,
  type BlueprintSource,
  type Files,
  isMapping,
  parseBlueprint,
  parseInstallation,
} from './model.js';
import { generateDataObjectName } from './names.js';
import type { TemplateRenderer } from './sandbox.js';
import { type SchemaScope, validateAgainst } from './schema.js';
import {
  type Context,
  clone,
  type InstallationNode,
  type Obj,
  type RunEnv,
  rootContext,
  str,
} from './scope.js';
import { subinstallationBlueprint, subinstallationsPhase } from './subinstallations.js';

export type { BlueprintInputs, BlueprintSource, Files } from './model.js';

/** What `dm blueprint render` reports for one installation; a key is absent when its step was not reached. */
export interface InstallationResult {
  /** The imports as stored after the import executions (docs/blueprints.md "Results"). */
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
  error?: { phase: Phase; message: string };
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
): Promise<ReturnType<typeof exportedObjects>> {
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
    result.error = { phase: error.phase, message: error.message };
  }
  return result;
}

// ------------------------------------------------------------------ exports

/** Deep merge for export executions: maps merge, everything else is replaced. */
export function deepMerge(into: Obj, from: Obj): Obj {
  const out: Obj = { ...into };
  for (const [k, v] of Object.entries(from)) {
    const prev = out[k];
    out[k] = isMapping(prev) && isMapping(v) ? deepMerge(prev, v) : v;
  }
  return out;
}

export interface ExportsResult {
  /** The blueprint's declared exports as the export executions produced them (validated). */
  exports: Obj;
  /** What the installation exports from: `exports` with its exportDataMappings applied. */
  values: Obj;
}

export interface ExportedObjects {
  /** DataObjects by key (`dataRef`) in the parent's context. */
  dataObjects: Obj;
  /** Targets by key (`target`, without a leading `#`) in the parent's context. */
  targets: Record<string, Obj>;
}

/** The bindings export executions get besides the standard ones. */
function exportBinding(env: RunEnv, node: InstallationNode, deployItems: readonly Obj[], ctx: Context): Obj {
  const reported = env.inputs.deployerExports?.[node.path];
  const known: Obj = isMapping(reported) ? reported : {};
  const deployitems: Obj = {};
  for (const d of deployItems) {
    const name = String(d.name);
    deployitems[name] = Object.hasOwn(known, name) ? clone(known[name]) : null;
  }
  const dataobjects = Object.fromEntries([...ctx.data].map(([k, v]) => [k, clone(v)]));
  const targets = Object.fromEntries([...ctx.targets].map(([k, v]) => [k, clone(v)]));
  return { deployitems, dataobjects, targets, values: { deployitems, dataobjects, targets } };
}

/** The merged exports, undeclared names dropped, each checked against its definition. */
function declaredExports(node: InstallationNode, bp: Blueprint, merged: Obj, scope: SchemaScope): Obj {
  const declared = new Map(bp.exports.map((e) => [e.name, e]));
  const kept: Obj = {};
  for (const [k, v] of Object.entries(merged)) {
    const def = declared.get(k);
    if (!def) continue;
    if (def.type === 'data') {
      const problems = validateAgainst(v, def.schema, scope, `export ${k}`);
      if (problems.length > 0)
        throw new BlueprintError('exports', `${node.path}: export ${k}: ${problems.join('; ')}`);
    } else {
      const type = isMapping(v) ? v.type : undefined;
      if (type !== def.targetType) {
        throw new BlueprintError(
          'exports',
          `${node.path}: target export ${k} has type '${str(type)}', expected '${def.targetType}'`,
        );
      }
    }
    kept[k] = v;
  }
  return kept;
}

/**
 * Step 10 up to the exportDataMappings: `ctx` is the installation's own context (its imports and
 * its subinstallations' exports), `deployItems` its rendered deploy items.
 */
export async function exportsPhase(
  env: RunEnv,
  node: InstallationNode,
  bp: Blueprint,
  imports: Obj,
  deployItems: readonly Obj[],
  ctx: Context,
  scope: SchemaScope,
): Promise<ExportsResult> {
  const extra = exportBinding(env, node, deployItems, ctx);
  const binding = () => ({ ...standardBinding(node, imports), ...extra });
  let merged: Obj = {};
  for await (const { output } of runExecutions(env, node, 'exportExecutions', bp.exportExecutions, binding)) {
    if (isMapping(output.exports)) merged = deepMerge(merged, output.exports);
  }
  const exports = declaredExports(node, bp, merged, scope);
  const values: Obj = { ...exports };
  const bindings: Obj = { ...exports, exports };
  for (const [k, v] of Object.entries(node.spec.exportDataMappings)) {
    values[k] = await evaluateMapping(env, node, v, bindings, `exportDataMappings.${k}`, 'exports');
  }
  return { exports, values };
}

/** The DataObjects and Targets the installation's `spec.exports` write to its parent's context. */
export function exportedObjects(node: InstallationNode, values: Obj): ExportedObjects {
  const value = (name: string, kind: string): unknown => {
    if (!Object.hasOwn(values, name)) {
      throw new BlueprintError('exports', `${node.path}: ${kind} export is not defined: '${name}'`);
    }
    return clone(values[name]);
  };
  const dataObjects: Obj = {};
  for (const d of node.spec.exports.data) dataObjects[d.dataRef] = value(d.name, 'data');
  const targets: Record<string, Obj> = {};
  for (const t of node.spec.exports.targets) {
    const spec = value(t.name, 'target');
    targets[t.target.startsWith('#') ? t.target.slice(1) : t.target] = {
      apiVersion: 'landscaper.gardener.cloud/v1alpha1',
      kind: 'Target',
      metadata: { name: generateDataObjectName(node.parent.name, t.target), namespace: node.namespace },
      spec,
    };
  }
  return { dataObjects, targets };
}

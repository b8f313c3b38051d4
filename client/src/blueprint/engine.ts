import { BlueprintError, type Phase } from './errors.js';
import { evaluateMapping, listOutput, runExecutions, standardBinding } from './executions.js';
import { importsPhase } from './imports.js';
import {
  allImports,
  type Blueprint,
  type BlueprintInputs,
  type BlueprintSource,
  type Files,
  isMapping,
  parseBlueprint,
  parseInstallation,
} from './model.js';
import { generateDataObjectName } from './names.js';
import { findCycleDfs, layers } from './order.js';
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

// ------------------------------------------------------------------ deploy-items

const LABEL_NAME = '[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?';
const LABEL_KEY = new RegExp(
  `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?${LABEL_NAME}$`,
);
const LABEL_VALUE = new RegExp(`^(${LABEL_NAME})?$`);
/** A Go duration (`10m`, `1h30m`, `500ms`) or `none`. */
const DURATION = /^(none|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$/;

export interface DeployItemsResult {
  /** The deploy item specifications in rendered order, targets resolved. */
  items: Obj[];
  /** Run order: layers of item names by `dependsOn`. */
  order: string[][];
}

/** A deploy item's `target` reference as `{name, namespace}` of the Target object. */
function resolveTarget(
  node: InstallationNode,
  bp: Blueprint,
  item: string,
  target: unknown,
  imports: Obj,
): Obj {
  const fail = (message: string): never => {
    throw new BlueprintError('deployItems', `deploy item ${item}: ${message}`);
  };
  if (!isMapping(target)) return fail('target must be a mapping');
  const toRef = (t: unknown): Obj => {
    const meta = isMapping(t) && isMapping(t.metadata) ? t.metadata : {};
    return { name: meta.name, namespace: meta.namespace ?? node.namespace };
  };
  if (typeof target.import === 'string' && target.import !== '') {
    const name = target.import;
    const def = allImports(bp.imports).find((d) => d.name === name);
    if (!def || def.type === 'data')
      return fail(`target import '${name}' is not a target import of the blueprint`);
    const value = imports[name];
    if (value === undefined) fail(`target import '${name}' is not satisfied`);
    if (target.key !== undefined) {
      if (def.type !== 'targetMap') fail(`target import '${name}' is not a targetMap`);
      const key = String(target.key);
      if (!isMapping(value) || !Object.hasOwn(value, key)) fail(`targetMap '${name}' has no key '${key}'`);
      return toRef((value as Obj)[key]);
    }
    if (target.index !== undefined) {
      if (def.type !== 'targetList') fail(`target import '${name}' is not a targetList`);
      const i = Number(target.index);
      if (!Array.isArray(value) || !Number.isInteger(i) || i < 0 || i >= value.length) {
        fail(`index ${str(target.index)} is out of range for targetList '${name}'`);
      }
      return toRef((value as unknown[])[i]);
    }
    if (def.type !== 'target') fail(`target import '${name}' needs a key or an index`);
    return toRef(value);
  }
  if (typeof target.name === 'string' && target.name !== '')
    return { name: target.name, namespace: node.namespace };
  return fail('the target reference is empty');
}

/** Validates the rendered items; copies of them with their targets resolved. */
function validateDeployItems(
  node: InstallationNode,
  bp: Blueprint,
  items: readonly unknown[],
  imports: Obj,
): Obj[] {
  const fail = (message: string): never => {
    throw new BlueprintError('deployItems', message, { details: { installation: node.path } });
  };
  const names = new Set<string>();
  const checked = items.map((item, i): Obj & { name: string } => {
    if (!isMapping(item)) return fail(`deployItems[${i}] is not a mapping`);
    if (typeof item.name !== 'string' || item.name === '') return fail(`deployItems[${i}].name is required`);
    const name = item.name;
    if (typeof item.type !== 'string' || item.type === '') fail(`deploy item ${name}: type is required`);
    if (names.has(name)) fail(`duplicate deploy item name '${name}'`);
    names.add(name);
    if (item.labels !== undefined && item.labels !== null) {
      if (!isMapping(item.labels)) fail(`deploy item ${name}: labels must be a mapping`);
      for (const [k, v] of Object.entries(item.labels as Obj)) {
        if (!LABEL_KEY.test(k) || typeof v !== 'string' || !LABEL_VALUE.test(v)) {
          fail(`deploy item ${name}: label ${k}=${str(v)} is not a valid Kubernetes label`);
        }
      }
    }
    if (item.timeout !== undefined && item.timeout !== null && !DURATION.test(String(item.timeout))) {
      fail(`deploy item ${name}: timeout '${str(item.timeout)}' is neither a duration nor none`);
    }
    return { ...item, name };
  });
  const out = checked.map((item) => {
    const copy: Obj = { ...item };
    if (item.target !== undefined && item.target !== null) {
      copy.target = resolveTarget(node, bp, item.name, item.target, imports);
    }
    if (item.dependsOn !== undefined && item.dependsOn !== null) {
      if (!Array.isArray(item.dependsOn)) fail(`deploy item ${item.name}: dependsOn must be a list`);
      for (const dep of item.dependsOn as unknown[]) {
        if (!names.has(String(dep))) fail(`${item.name} depends on undefined deploy item ${str(dep)}`);
      }
    }
    return copy;
  });
  const cycle = findCycleDfs(out.map((d) => ({ name: String(d.name), dependsOn: dependsOn(d) })));
  if (cycle) fail(`cycle found in dependencies: ${cycle.join(' -> ')}`);
  return out;
}

function dependsOn(item: Obj): string[] {
  return Array.isArray(item.dependsOn) ? item.dependsOn.map(String) : [];
}

/** Step 8 for one installation. */
export async function deployItemsPhase(
  env: RunEnv,
  node: InstallationNode,
  bp: Blueprint,
  imports: Obj,
): Promise<DeployItemsResult> {
  const rendered: unknown[] = [];
  const binding = () => standardBinding(node, imports);
  const phase = 'deployExecutions';
  for await (const { execution, output } of runExecutions(env, node, phase, bp.deployExecutions, binding)) {
    rendered.push(...listOutput(output, 'deployItems', execution, phase));
  }
  const items = validateDeployItems(node, bp, rendered, imports);
  return { items, order: layers(items.map((d) => ({ name: String(d.name), dependsOn: dependsOn(d) }))) };
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

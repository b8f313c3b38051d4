/**
 * The exports of one installation (docs/blueprints.md "How a run works", step 10): the export
 * executions' `exports`, deep-merged and limited to the blueprint's declared exports, validated;
 * then the installation's exportDataMappings and the DataObjects and Targets it writes to its
 * parent's context.
 */

import { isMapping, mergeDeep } from '../data.js';
import { BlueprintError } from './errors.js';
import { checkSchema, evaluateMapping, runExecutions, standardBinding } from './executions.js';
import type { Blueprint } from './model.js';
import { generateDataObjectName } from './names.js';
import type { SchemaScope } from './schema.js';
import { type Context, clone, type InstallationNode, type Obj, type RunEnv, str } from './scope.js';

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
async function declaredExports(
  env: RunEnv,
  node: InstallationNode,
  bp: Blueprint,
  merged: Obj,
  scope: SchemaScope,
): Promise<Obj> {
  const declared = new Map(bp.exports.map((e) => [e.name, e]));
  const kept: Obj = {};
  for (const [k, v] of Object.entries(merged)) {
    const def = declared.get(k);
    if (!def) continue;
    if (def.type === 'data') {
      await checkSchema(env, node, 'exports', `export ${k}`, v, def.schema, scope);
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
    if (isMapping(output.exports)) merged = mergeDeep(merged, output.exports);
  }
  const exports = await declaredExports(env, node, bp, merged, scope);
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

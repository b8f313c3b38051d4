/**
 * The imports of one installation (docs/blueprints.md "How a run works", steps 2–6): load the
 * objects the installation imports, evaluate its import data mappings, construct the blueprint's
 * imports in order, run the import executions, and store the imports in the installation's own
 * context.
 */

import { isMapping } from '../data.js';
import { BlueprintError } from './errors.js';
import { checkSchema, evaluateMapping, runExecutions, standardBinding } from './executions.js';
import { allImports, type Blueprint, type ImportDefinition } from './model.js';
import { installationContext } from './names.js';
import type { SchemaScope } from './schema.js';
import {
  type Context,
  clone,
  contextTarget,
  type InstallationNode,
  newContext,
  type Obj,
  type RunEnv,
  str,
} from './scope.js';

export interface ImportsResult {
  /**
   * The `imports` binding after the import executions: the constructed imports with the
   * executions' `bindings` added. This is what the installation's result records.
   */
  imports: Obj;
  /** The installation's own context, holding its declared imports (step 6). */
  context: Context;
}

/** The installation's import objects (step 2), by installation import name. */
interface LoadedImports {
  data: Obj;
  targets: Obj;
}

function where(ctx: Context): string {
  return ctx.name ? ` in context ${ctx.name}` : '';
}

/** Step 2: looks up every object the installation imports in its parent context. */
function loadImports(node: InstallationNode): LoadedImports {
  const { parent } = node;
  const fail = (message: string): never => {
    throw new BlueprintError('imports', `${node.path}: ${message}`);
  };
  const target = (key: string, importName: string): Obj => {
    const t = parent.targets.get(key.startsWith('#') ? key.slice(1) : key);
    return t ? clone(t) : fail(`target import '${importName}': Target '${key}' not found${where(parent)}`);
  };
  const data: Obj = {};
  for (const d of node.spec.imports.data) {
    if (d.dataRef !== undefined) {
      const key = d.dataRef.startsWith('#') ? d.dataRef.slice(1) : d.dataRef;
      if (!parent.data.has(key))
        fail(`data import '${d.name}': DataObject '${d.dataRef}' not found${where(parent)}`);
      data[d.name] = clone(parent.data.get(key));
      continue;
    }
    const secret = d.secretRef !== undefined;
    const ref = d.secretRef ?? d.configMapRef;
    if (!ref) continue; // parseInstallation guarantees one source
    const obj = (secret ? parent.secrets : parent.configMaps).get(ref.name);
    if (!obj) fail(`data import '${d.name}': ${secret ? 'Secret' : 'ConfigMap'} '${ref.name}' not found`);
    const decode = (v: unknown) =>
      secret && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v;
    const entries = obj as Obj;
    if (ref.key !== undefined) {
      if (!Object.hasOwn(entries, ref.key)) fail(`data import '${d.name}': key '${ref.key}' not found`);
      data[d.name] = decode(entries[ref.key]);
    } else {
      data[d.name] = Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, decode(v)]));
    }
  }
  const targets: Obj = {};
  for (const t of node.spec.imports.targets) {
    if (t.target !== undefined) targets[t.name] = target(t.target, t.name);
    else if (t.targets !== undefined) targets[t.name] = t.targets.map((k) => target(k, t.name));
    else if (t.targetMap !== undefined) {
      targets[t.name] = Object.fromEntries(
        Object.entries(t.targetMap).map(([k, v]) => [k, target(v, t.name)]),
      );
    } else if (t.targetMapRef !== undefined) {
      const m = parent.targetMaps.get(t.targetMapRef);
      targets[t.name] = m
        ? clone(m)
        : fail(`target import '${t.name}': targetMap '${t.targetMapRef}' not found`);
    } else if (t.targetListRef !== undefined) {
      const l = parent.targetLists.get(t.targetListRef);
      targets[t.name] = l
        ? clone(l)
        : fail(`target import '${t.name}': targetList '${t.targetListRef}' not found`);
    }
  }
  return { data, targets };
}

/** Step 3: the import data mappings, by blueprint import name. */
async function mapImports(env: RunEnv, node: InstallationNode, loaded: LoadedImports): Promise<Obj> {
  const values = { ...loaded.data, ...loaded.targets };
  const bindings: Obj = { ...values, imports: values };
  const mapped: Obj = {};
  for (const [k, v] of Object.entries(node.spec.importDataMappings)) {
    mapped[k] = await evaluateMapping(env, node, v, bindings, `importDataMappings.${k}`, 'imports');
  }
  return mapped;
}

function checkTargetType(node: InstallationNode, def: ImportDefinition, target: unknown, what: string): void {
  const type = isMapping(target) && isMapping(target.spec) ? target.spec.type : undefined;
  if (type !== def.targetType) {
    throw new BlueprintError(
      'imports',
      `${node.path}: import '${def.name}'${what}: target type is '${str(type)}', expected '${def.targetType}'`,
    );
  }
}

/** The value of one import definition (step 4), or `undefined` when it has none. */
async function importValue(
  env: RunEnv,
  node: InstallationNode,
  def: ImportDefinition,
  mapped: Obj,
  loaded: LoadedImports,
  scope: SchemaScope,
): Promise<{ value: unknown } | undefined> {
  if (def.type === 'data') {
    let found: { value: unknown } | undefined;
    if (Object.hasOwn(mapped, def.name)) found = { value: mapped[def.name] };
    else if (Object.hasOwn(loaded.data, def.name)) found = { value: loaded.data[def.name] };
    else if (!def.required && def.default) found = { value: clone(def.default.value) };
    if (found) await checkSchema(env, node, 'schema', `import ${def.name}`, found.value, def.schema, scope);
    return found;
  }
  if (!Object.hasOwn(loaded.targets, def.name)) return undefined;
  const value = loaded.targets[def.name];
  const fail = (expected: string): never => {
    throw new BlueprintError('imports', `${node.path}: import '${def.name}' expects ${expected}`);
  };
  if (def.type === 'target') {
    if (!isMapping(value)) fail('one target');
    checkTargetType(node, def, value, '');
  } else if (def.type === 'targetMap') {
    if (!isMapping(value) || 'spec' in value) return fail('a targetMap');
    for (const [k, t] of Object.entries(value)) checkTargetType(node, def, t, `[${k}]`);
  } else {
    if (!Array.isArray(value)) return fail('a target list');
    for (const [i, t] of value.entries()) checkTargetType(node, def, t, `[${i}]`);
  }
  return { value };
}

/** Step 4: the blueprint's imports in definition order (mapping > direct import > default). */
async function constructImports(
  env: RunEnv,
  node: InstallationNode,
  bp: Blueprint,
  mapped: Obj,
  loaded: LoadedImports,
  scope: SchemaScope,
): Promise<Obj> {
  const imports: Obj = {};
  const construct = async (defs: readonly ImportDefinition[]) => {
    for (const def of defs) {
      const found = await importValue(env, node, def, mapped, loaded, scope);
      if (!found) {
        if (def.required) {
          throw new BlueprintError(
            'imports',
            `blueprint defines import '${def.name}' of type ${def.type}, which is not satisfied`,
            { details: { installation: node.path } },
          );
        }
        continue;
      }
      imports[def.name] = found.value;
      // conditional imports count only when their owner got a value
      await construct(def.imports);
    }
  };
  await construct(bp.imports);
  return imports;
}

/** Step 5: the import executions; their `bindings` join the imports at once, `errors` stop. */
async function runImportExecutions(
  env: RunEnv,
  node: InstallationNode,
  bp: Blueprint,
  constructed: Obj,
): Promise<Obj> {
  const imports: Obj = { ...constructed };
  const binding = () => standardBinding(node, imports);
  for await (const { execution, output } of runExecutions(
    env,
    node,
    'importExecutions',
    bp.importExecutions,
    binding,
  )) {
    const errors = output.errors;
    if (Array.isArray(errors) ? errors.length > 0 : errors !== undefined && errors !== null) {
      const list = Array.isArray(errors) ? errors.map(str) : [str(errors)];
      throw new BlueprintError('importExecutions', `import validation failed: ${list.join(', ')}`, {
        details: { execution: execution.name },
      });
    }
    if (isMapping(output.bindings)) Object.assign(imports, output.bindings);
  }
  return imports;
}

/** Step 6: the declared imports, with their post-execution values, in the installation's own context. */
function storeImports(node: InstallationNode, bp: Blueprint, imports: Obj): Context {
  const ctx = newContext(installationContext(node.spec.name));
  for (const def of allImports(bp.imports)) {
    if (!Object.hasOwn(imports, def.name)) continue;
    const v = imports[def.name];
    if (def.type === 'data') ctx.data.set(def.name, clone(v));
    else if (def.type === 'target' && isMapping(v))
      ctx.targets.set(def.name, contextTarget(v, ctx.name, def.name, node.namespace));
    else if (def.type === 'targetMap' && isMapping(v)) ctx.targetMaps.set(def.name, clone(v));
    else if (Array.isArray(v)) ctx.targetLists.set(def.name, clone(v));
  }
  return ctx;
}

/** Steps 2–6 for one installation. */
export async function importsPhase(
  env: RunEnv,
  node: InstallationNode,
  bp: Blueprint,
  scope: SchemaScope,
): Promise<ImportsResult> {
  const loaded = loadImports(node);
  const mapped = await mapImports(env, node, loaded);
  const constructed = await constructImports(env, node, bp, mapped, loaded, scope);
  const imports = await runImportExecutions(env, node, bp, constructed);
  return { imports, context: storeImports(node, bp, imports) };
}

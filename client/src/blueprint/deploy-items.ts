/**
 * The deploy items of one installation (docs/blueprints.md "How a run works", step 8, and
 * "Order"): the deploy executions' `deployItems` in rendered order, validated (names,
 * types, labels, timeouts, dependsOn, cycles) and with their `target` references resolved to
 * `{name, namespace}`; and their run order.
 */

import { isMapping } from '../data.js';
import { BlueprintError } from './errors.js';
import { listOutput, runExecutions, standardBinding } from './executions.js';
import { allImports, type Blueprint } from './model.js';
import { findCycleDfs, layers } from './order.js';
import type { InstallationNode, Obj, RunEnv } from './scope.js';
import { str } from './scope.js';

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

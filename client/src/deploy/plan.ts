/**
 * Order of application (docs/deployments.md "Order and batching", docs/expansion.md "Value references"): Namespaces and
 * CustomResourceDefinitions first (level 0), then the other resources in levels of the dependency
 * graph that `$(ref.NAME.PATH)` references draw; a level holds resources whose references all point
 * to earlier levels, so each level can go to the cluster in one batch. A cycle, or a reference to a
 * name not in the configuration, is an error.
 */
import { DmError } from '../error.js';
import { findReferencesIn, referencePath, type ValueReference } from '../expand/value-references.js';
import type { Primitive } from './model.js';
import { parsePrimitiveType } from './objects.js';

export type { ValueReference };

/** Every `$(ref…)` in a value, resolved against the configuration's resource names (the one parser). */
export function findReferences(
  value: unknown,
  names: ReadonlySet<string>,
  resource: string,
): ValueReference[] {
  return findReferencesIn(value, names, resource);
}

export interface PlannedResource {
  primitive: Primitive;
  level: number;
  references: ValueReference[];
}

function isFirstClass(p: Primitive): boolean {
  const kind = parsePrimitiveType(p.type, p.name).kind;
  return kind === 'Namespace' || kind === 'CustomResourceDefinition';
}

/** Assigns levels; returns resources in configuration order with their level and references. */
export function planLevels(resources: Primitive[]): PlannedResource[] {
  const names = new Set(resources.map((r) => r.name));
  const byName = new Map(resources.map((r) => [r.name, r]));
  const refs = new Map(resources.map((r) => [r.name, findReferences(r.properties ?? {}, names, r.name)]));
  const levels = new Map<string, number>();
  const visiting: string[] = [];
  const levelOf = (name: string): number => {
    const known = levels.get(name);
    if (known !== undefined) return known;
    if (visiting.includes(name)) {
      const chain = [...visiting.slice(visiting.indexOf(name)), name];
      throw new DmError('REFERENCE_CYCLE', `references form a cycle: ${chain.join(' -> ')}`, {
        category: 'validation',
        details: { cycle: chain },
      });
    }
    visiting.push(name);
    const r = byName.get(name)!;
    const deps = [...new Set(refs.get(name)!.map((x) => x.name))];
    let level: number;
    if (isFirstClass(r)) {
      if (deps.some((d) => !isFirstClass(byName.get(d)!))) {
        throw new DmError(
          'INVALID_REFERENCE',
          `resource '${name}': a Namespace or CustomResourceDefinition is applied first and cannot reference other resources`,
          { category: 'validation' },
        );
      }
      level = 0;
    } else {
      level = 1 + Math.max(0, ...deps.map((d) => (isFirstClass(byName.get(d)!) ? 0 : levelOf(d))));
    }
    visiting.pop();
    levels.set(name, level);
    return level;
  };
  return resources.map((r) => ({ primitive: r, level: levelOf(r.name), references: refs.get(r.name)! }));
}

/** Value at a reference's path in a live object (the whole object for `$(ref.NAME)`); undefined when absent. */
export function valueAt(object: unknown, ref: Pick<ValueReference, 'path'>): unknown {
  let node = object;
  for (const part of referencePath(ref)) {
    if (Array.isArray(node)) node = node[Number(part)];
    else if (node !== null && typeof node === 'object') node = (node as Record<string, unknown>)[part];
    else return undefined;
  }
  return node;
}

/**
 * Replaces `$(ref…)` in a value: a string that is one reference becomes the referenced value (a
 * number stays a number); references inside longer strings are interpolated.
 */
export function substituteReferences(
  value: unknown,
  lookup: (ref: ValueReference) => unknown,
  names: ReadonlySet<string>,
  resource: string,
): unknown {
  if (typeof value === 'string') {
    const refs = findReferences(value, names, resource);
    if (refs.length === 0) return value;
    if (refs.length === 1 && refs[0]!.text === value) return lookup(refs[0]!);
    let out = value;
    for (const r of refs) {
      const v = lookup(r);
      out = out.replace(r.text, typeof v === 'string' ? v : JSON.stringify(v));
    }
    return out;
  }
  if (Array.isArray(value)) return value.map((v) => substituteReferences(v, lookup, names, resource));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, substituteReferences(v, lookup, names, resource)]),
    );
  }
  return value;
}

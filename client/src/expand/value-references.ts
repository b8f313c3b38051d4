/**
 * Value references `$(ref.NAME.PATH)` (docs/expansion.md, "Value references"): found in the expanded
 * configuration's property values, checked against the resource names there, and turned into a
 * dependency graph that deploy uses to order resources (apply a resource after those it
 * references). Unknown names and cycles are errors.
 */
import { DmError } from '../error.js';
import type { Resource } from './types.js';

export interface ValueReference {
  /** The resource that holds the reference. */
  from: string;
  /** The referenced resource name. */
  name: string;
  /** Dotted path into the referenced resource's live object as written; '' for the whole object (segments: referencePath). */
  path: string;
  /** Where the reference sits in the holder, e.g. `properties.spec.host`. */
  at: string;
  /** The reference as written, `$(ref.db.status.ip)`. */
  text: string;
}

export interface ReferenceGraph {
  /** Resource names in an order where each comes after everything it references. */
  order: string[];
  /** name → names it references (its dependencies). */
  dependsOn: Record<string, string[]>;
  references: ValueReference[];
}

const REF = /\$\(ref\.([^)]*)\)/g;
/** What every reference starts with: a string without it holds none. */
const REF_START = '$(ref.';

/** Where a value sits below the walk's start: `properties.ports[0].name` (keys joined by dots). */
function pathText(segments: readonly (string | number)[]): string {
  let at = '';
  for (const s of segments) {
    if (typeof s === 'number') at = `${at}[${s}]`;
    else at = at ? `${at}.${s}` : s;
  }
  return at;
}

/**
 * Calls `visit` for every string in a value (lists and mappings walked) that may hold a
 * reference, with where it sits. The path is written out only for those strings: most values
 * hold none.
 */
function walk(
  value: unknown,
  segments: (string | number)[],
  visit: (text: string, at: string) => void,
): void {
  if (typeof value === 'string') {
    if (value.includes(REF_START)) visit(value, pathText(segments));
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      segments.push(i);
      walk(value[i], segments, visit);
      segments.pop();
    }
  } else if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const k of Object.keys(record)) {
      segments.push(k);
      walk(record[k], segments, visit);
      segments.pop();
    }
  }
}

/**
 * The one `$(ref…)` parser (expansion and deploy both use it): every reference in one string, held
 * by resource `from` at `at`. NAME may itself contain dots: the longest dotted prefix that is a
 * resource name wins; the rest is the path ('' for the whole object). A reference to no known name
 * is an error naming it.
 */
export function parseValueReferences(
  text: string,
  names: ReadonlySet<string>,
  from: string,
  at = '',
): ValueReference[] {
  const out: ValueReference[] = [];
  for (const match of text.matchAll(REF)) {
    const body = match[1] ?? '';
    const parts = body.split('.');
    let found: number | undefined;
    for (let i = parts.length; i >= 1; i--) {
      if (names.has(parts.slice(0, i).join('.'))) {
        found = i;
        break;
      }
    }
    if (found === undefined) {
      throw new DmError(
        'UNKNOWN_REFERENCE',
        `resource '${from}'${at ? ` ${at}` : ''}: ${match[0]} references '${parts[0] ?? ''}', which is not a resource of this configuration`,
        { category: 'validation', details: { resource: from, at, reference: match[0] } },
      );
    }
    out.push({
      from,
      name: parts.slice(0, found).join('.'),
      path: parts.slice(found).join('.'),
      at,
      text: match[0],
    });
  }
  return out;
}

/** Every `$(ref…)` in a value (strings, lists and mappings, walked), held by resource `from`. */
export function findReferencesIn(value: unknown, names: ReadonlySet<string>, from: string): ValueReference[] {
  const out: ValueReference[] = [];
  walk(value, [], (text, at) => {
    for (const r of parseValueReferences(text, names, from, at)) out.push(r);
  });
  return out;
}

/** A reference's path as segments into the live object: `spec.ports[0].port` → spec, ports, 0, port. */
export function referencePath(ref: Pick<ValueReference, 'path'>): string[] {
  return ref.path
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter((p) => p !== '');
}

/** Every `$(ref.NAME.PATH)` in the resources' fields (name and type aside). */
export function findValueReferences(resources: readonly Resource[]): ValueReference[] {
  const names = new Set(resources.map((r) => r.name));
  const out: ValueReference[] = [];
  const segments: (string | number)[] = [];
  for (const resource of resources) {
    const from = resource.name;
    const visit = (text: string, at: string) => {
      for (const r of parseValueReferences(text, names, from, at)) out.push(r);
    };
    for (const key of Object.keys(resource)) {
      if (key === 'name' || key === 'type') continue;
      segments[0] = key;
      walk(resource[key], segments, visit);
    }
  }
  return out;
}

/** The dependency graph of the references, in topological order; a cycle is an error naming it. */
export function buildReferenceGraph(resources: readonly Resource[]): ReferenceGraph {
  const references = findValueReferences(resources);
  const dependsOn: Record<string, string[]> = {};
  for (const r of resources) dependsOn[r.name] ??= [];
  for (const ref of references) {
    const deps = dependsOn[ref.from]!;
    if (!deps.includes(ref.name)) deps.push(ref.name);
  }
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): void => {
    const s = state.get(name);
    if (s === 'done') return;
    if (s === 'visiting') {
      const cycle = [...stack.slice(stack.indexOf(name)), name];
      throw new DmError('REFERENCE_CYCLE', `value references form a cycle: ${cycle.join(' → ')}`, {
        category: 'validation',
        details: { cycle },
      });
    }
    state.set(name, 'visiting');
    stack.push(name);
    for (const dep of dependsOn[name] ?? []) visit(dep);
    stack.pop();
    state.set(name, 'done');
    order.push(name);
  };
  for (const r of resources) visit(r.name);
  return { order, dependsOn, references };
}

/**
 * Value references `$(ref.NAME.PATH)` (docs/expansion.md, "Value references"): found in the expanded
 * configuration's property values, checked against the resource names there, and turned into a
 * dependency graph that deploy uses to order resources (apply a resource after those it
 * references). Unknown names and cycles are errors.
 */
import { DmError } from '../error.js';
import { cloneData, isDict } from '../python/values.js';
import type { Resource } from './types.js';
import { checkNodeBudget } from './yaml-budget.js';

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

/** A template's output (docs/expansion.md, "Template outputs"): `outputs: [{name, value}]`. */
export interface TemplateOutput {
  name: string;
  value: unknown;
}

/** A template resource of the layout with the outputs it declared, in layout order (outer first). */
export interface TemplateOutputs {
  name: string;
  outputs: TemplateOutput[];
}

const MAX_OUTPUT_HOPS = 64;
/** Longest string that substituting outputs may make (outputs quoting outputs grow fast). */
const MAX_OUTPUT_TEXT = 1 << 20;

/**
 * Resolves `$(ref.<template resource>.<output>)` at expansion (docs/expansion.md, "Template
 * outputs"): the output's value replaces the reference, the value itself when the string is only
 * that reference, its text otherwise. A value that holds references to deployed resources keeps
 * them, so they are substituted at deploy time like any other. A name that is both a template and
 * a primitive (a template often names its main resource after itself) means the template when it
 * declares that output, but in that template's own outputs, where it means the resource. `outputs` entries are changed in place to their resolved values; returns
 * the primitives with references to outputs replaced (unchanged objects when there are none).
 */
export function resolveTemplateOutputs<T>(
  value: T,
  templates: readonly TemplateOutputs[],
  primitives: ReadonlySet<string>,
): T {
  const byName = new Map<string, TemplateOutputs[]>();
  for (const t of templates) {
    if (t.outputs.length === 0) continue;
    const list = byName.get(t.name);
    if (list) list.push(t);
    else byName.set(t.name, [t]);
  }
  if (byName.size === 0) return value;
  const ownerOf = new Map<TemplateOutput, string>();
  for (const t of templates) for (const o of t.outputs) ownerOf.set(o, t.name);
  const resolving = new Set<TemplateOutput>();
  const resolved = new Set<TemplateOutput>();
  const find = (body: string, self: string): { output: TemplateOutput; rest: string[] } | undefined => {
    const parts = body.split('.');
    for (let i = parts.length - 1; i >= 1; i--) {
      const name = parts.slice(0, i).join('.');
      const owners = byName.get(name);
      if (!owners || (name === self && primitives.has(name))) continue;
      const path = parts
        .slice(i)
        .join('.')
        .replace(/\[(\d+)\]/g, '.$1')
        .split('.')
        .filter((p) => p !== '');
      for (const owner of owners) {
        const output = owner.outputs.find((o) => o.name === path[0]);
        if (output) return { output, rest: path.slice(1) };
      }
    }
    return undefined;
  };
  const outputValue = (output: TemplateOutput, owner: string): unknown => {
    if (!resolved.has(output)) {
      if (resolving.has(output)) {
        throw new DmError(
          'REFERENCE_CYCLE',
          `template outputs form a cycle: output '${output.name}' of '${owner}' refers back to itself`,
          { category: 'validation', details: { output: output.name, template: owner } },
        );
      }
      if (resolving.size > MAX_OUTPUT_HOPS) {
        throw new DmError(
          'REFERENCE_CYCLE',
          `template outputs refer to each other more than ${MAX_OUTPUT_HOPS} deep`,
          {
            category: 'validation',
          },
        );
      }
      resolving.add(output);
      const where = `output '${output.name}' of '${owner}'`;
      output.value = substitute(output.value, where, owner);
      // Outputs holding outputs multiply: each resolved value stays within the node budget.
      checkNodeBudget(output.value, where);
      resolving.delete(output);
      resolved.add(output);
    }
    return output.value;
  };
  const substituteText = (text: string, where: string, self: string): unknown => {
    const whole = /^\$\(ref\.([^)]*)\)$/.exec(text);
    if (whole) {
      const found = find(whole[1]!, self);
      if (found)
        return cloneData(
          into(outputValue(found.output, ownerOf.get(found.output)!), found.rest, text, where),
        );
    }
    let changed = false;
    const out = text.replace(REF, (match, body: string) => {
      const found = find(body, self);
      if (!found) return match;
      const v = into(outputValue(found.output, ownerOf.get(found.output)!), found.rest, match, where);
      changed = true;
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      return JSON.stringify(v);
    });
    if (out.length > MAX_OUTPUT_TEXT) {
      throw new DmError(
        'TEMPLATE_LIMIT',
        `limit: ${where || 'a resource'}: template outputs substituted into one string make it longer than ${MAX_OUTPUT_TEXT} characters`,
        { category: 'limit' },
      );
    }
    return changed ? out : text;
  };
  const into = (v: unknown, rest: string[], text: string, where: string): unknown => {
    let node = v;
    for (const key of rest) {
      if (node !== null && typeof node === 'object' && Object.hasOwn(node, key)) {
        node = (node as Record<string, unknown>)[key];
      } else {
        throw new DmError(
          'UNKNOWN_REFERENCE',
          `${where || 'the configuration'}: ${text} goes into the template output past what it holds ('${key}')`,
          { category: 'validation', details: { reference: text } },
        );
      }
    }
    return node;
  };
  const substitute = (node: unknown, where: string, self: string): unknown => {
    if (typeof node === 'string') return node.includes(REF_START) ? substituteText(node, where, self) : node;
    if (Array.isArray(node)) {
      let copy: unknown[] | undefined;
      node.forEach((item, i) => {
        const next = substitute(item, where, self);
        if (next !== item) {
          copy ??= node.slice();
          copy[i] = next;
        }
      });
      return copy ?? node;
    }
    if (isDict(node)) {
      let copy: Record<string, unknown> | undefined;
      for (const [k, item] of Object.entries(node)) {
        const next = substitute(item, where, self);
        if (next !== item) {
          copy ??= { ...(node as Record<string, unknown>) };
          copy[k] = next;
        }
      }
      return copy ?? node;
    }
    return node;
  };
  for (const t of templates) for (const o of t.outputs) outputValue(o, t.name);
  return substitute(value, '', '') as T;
}

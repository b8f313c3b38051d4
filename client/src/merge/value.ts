/**
 * The values the merge engine works on, and the few Python behaviours the mergers depend on.
 *
 * Mappings are `Map`s inside the engine: keys keep insertion order exactly as Python dicts do
 * (plain objects would list integer-like keys first) and a key `__proto__` is plain data. Keys are
 * the scalars YAML gives (string, number, boolean, null). Lists are arrays; everything that is not
 * a mapping, a list or a string is a scalar no merger touches (docs/merging.md "Specifications").
 * `toMergeValue` and `toPlainValue` convert at the edges.
 */
import { DmError } from '../error.js';

export type MergeKey = string | number | boolean | null;
export type MergeMap = Map<MergeKey, unknown>;

/** The types cloud-init's dispatcher distinguishes (docs/merging.md "Specifications"). */
export type ValueKind = 'dict' | 'list' | 'str' | 'other';

export function kindOf(value: unknown): ValueKind {
  if (value instanceof Map) return 'dict';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'string') return 'str';
  return 'other';
}

/** Python's name for the type of a value, for messages (`'int' object is not iterable`). */
export function pythonTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (value instanceof Map) return 'dict';
  if (Array.isArray(value)) return 'list';
  if (value instanceof Date) return 'datetime';
  switch (typeof value) {
    case 'string':
      return 'str';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(value) ? 'int' : 'float';
    case 'bigint':
      return 'int';
    default:
      return typeof value;
  }
}

/** Python truthiness: `None`, `False`, `0`, `''`, `[]` and `{}` are false. */
export function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false) return false;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'bigint') return value !== 0n;
  if (typeof value === 'string' || Array.isArray(value)) return value.length > 0;
  if (value instanceof Map) return value.size > 0;
  return true;
}

/** A string's code points: Python indexes, measures and iterates strings by code point. */
export function codePoints(text: string): string[] {
  return Array.from(text);
}

// Python's str.isspace() characters (str.strip() with no argument); JavaScript's trim() differs
// (it strips U+FEFF and keeps U+001C-U+001F and U+0085).
const PY_SPACE =
  '\t\n\u000b\u000c\r\u001c\u001d\u001e\u001f \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/** Python's `str.strip()`. */
export function pythonStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PY_SPACE.includes(text[start]!)) start++;
  while (end > start && PY_SPACE.includes(text[end - 1]!)) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isMergeKey(key: unknown): key is MergeKey {
  return key === null || typeof key === 'string' || typeof key === 'number' || typeof key === 'boolean';
}

/** Depth at which documents are refused (the YAML loader's own limit is the same). */
export const MAX_DEPTH = 1000;

function tooDeep(): DmError {
  return new DmError('DOCUMENT_TOO_DEEP', `a document is nested more than ${MAX_DEPTH} levels deep`, {
    category: 'limit',
  });
}

/**
 * Converts plain data (objects, arrays, scalars, as JSON.parse or a YAML loader gives them) or
 * already-converted Maps into the engine's form. Shared sub-objects stay shared; a cycle, a
 * non-scalar key, or nesting deeper than MAX_DEPTH is a DmError.
 */
export function toMergeValue(value: unknown): unknown {
  const done = new Map<object, unknown>();
  const active = new Set<object>();
  const convert = (v: unknown, depth: number): unknown => {
    if (v === null || typeof v !== 'object') return v;
    if (depth > MAX_DEPTH) throw tooDeep();
    const cached = done.get(v);
    if (cached !== undefined) return cached;
    if (active.has(v)) {
      throw new DmError('INVALID_DOCUMENT', 'a document refers to itself (a recursive alias or a cycle)', {
        category: 'invalid-input',
      });
    }
    let out: unknown;
    active.add(v);
    if (Array.isArray(v)) {
      out = v.map((item) => convert(item, depth + 1));
    } else if (v instanceof Map) {
      const map: MergeMap = new Map();
      for (const [k, item] of v) {
        if (!isMergeKey(k)) {
          throw new DmError('INVALID_DOCUMENT', `a mapping key is a ${pythonTypeName(k)}, not a scalar`, {
            category: 'invalid-input',
          });
        }
        map.set(k, convert(item, depth + 1));
      }
      out = map;
    } else if (isPlainObject(v)) {
      const map: MergeMap = new Map();
      for (const k of Object.keys(v)) map.set(k, convert(v[k], depth + 1));
      out = map;
    } else {
      out = v; // Date, typed arrays, class instances: opaque scalars
    }
    active.delete(v);
    done.set(v, out);
    return out;
  };
  return convert(value, 0);
}

/** A mapping key as a property name: what JSON and js-yaml's object mappings do with scalar keys. */
export function keyToString(key: MergeKey): string {
  return typeof key === 'string' ? key : String(key);
}

/**
 * Converts the engine's form back to plain data: Maps become ordinary objects (a `__proto__` key
 * becomes an own data property, never a prototype). Keys that are not strings are written as
 * strings; if two keys then collide (`1` and `'1'`), the later one wins.
 */
export function toPlainValue(value: unknown): unknown {
  const done = new Map<object, unknown>();
  const convert = (v: unknown): unknown => {
    if (v === null || typeof v !== 'object') return v;
    const cached = done.get(v);
    if (cached !== undefined) return cached;
    let out: unknown;
    if (Array.isArray(v)) {
      out = v.map(convert);
    } else if (v instanceof Map) {
      const obj: Record<string, unknown> = {};
      for (const [k, item] of v as MergeMap) {
        const name = keyToString(k);
        const converted = convert(item);
        if (name === '__proto__') {
          Object.defineProperty(obj, name, {
            value: converted,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        } else {
          obj[name] = converted;
        }
      }
      out = obj;
    } else {
      out = v;
    }
    done.set(v, out);
    return out;
  };
  return convert(value);
}

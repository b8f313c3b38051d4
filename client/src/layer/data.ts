/**
 * Plain-data helpers for untrusted document data: own-property access only (so `__proto__` and
 * `constructor` are ordinary keys), copies and merges with bounded depth (cyclic or absurdly deep
 * input ends in InvalidDocumentFormat instead of a stack overflow).
 */
import { isMapping, type Mapping } from '../data.js';
import { layeringError } from './errors.js';

export { isMapping, type Mapping };

/** Deepest nesting the renderer walks; YAML input is already limited to 1000 by the parser. */
export const MAX_DEPTH = 1000;

export function hasOwn(obj: object, key: string): boolean {
  return Object.hasOwn(obj, key);
}

/** The own property `key` of a mapping, or undefined. Never reads the prototype chain. */
export function getOwn(obj: Mapping, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Sets an own, enumerable property; `__proto__` becomes data, not a prototype change. */
export function setOwn(obj: Mapping, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

function tooDeep(): never {
  throw layeringError(
    'InvalidDocumentFormat',
    `document data is nested deeper than ${MAX_DEPTH} levels (or is cyclic)`,
  );
}

/** Deep copy of JSON-like data. Non-plain leaves (functions, symbols) are kept as they are. */
export function cloneData<T>(value: T, depth = 0): T {
  if (typeof value !== 'object' || value === null) return value;
  if (depth > MAX_DEPTH) tooDeep();
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneData(value[i], depth + 1);
    return out as T;
  }
  const out: Mapping = {};
  for (const key of Object.keys(value)) setOwn(out, key, cloneData((value as Mapping)[key], depth + 1));
  return out as T;
}

/**
 * Deckhand's `deep_merge(base, over)`, in place on `base`: for each key of `over`, recurse when both
 * sides are mappings, otherwise `over`'s value (copied) wins, even null, lists and scalars.
 */
export function deepMerge(base: Mapping, over: Mapping, depth = 0): Mapping {
  if (depth > MAX_DEPTH) tooDeep();
  for (const key of Object.keys(over)) {
    const b = getOwn(base, key);
    const o = over[key];
    if (isMapping(b) && isMapping(o)) deepMerge(b, o, depth + 1);
    else setOwn(base, key, cloneData(o, depth + 1));
  }
  return base;
}

/** Structural equality, mapping key order ignored, list order significant. */
export function deepEqual(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b);
  }
  if (depth > MAX_DEPTH) tooDeep();
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i], depth + 1)) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k)) return false;
    if (!deepEqual((a as Mapping)[k], (b as Mapping)[k], depth + 1)) return false;
  }
  return true;
}

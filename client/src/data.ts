/**
 * Plain-data helpers shared by every part of the client: the one mapping guard and the one deep
 * merge (mappings merge key by key, everything else — lists, scalars, null — is replaced by the
 * later side), as helm merges `--set` over values files.
 */

export type Mapping = Record<string, unknown>;

/** A plain mapping (not null, not a list). */
export function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A new mapping: `over` merged into `base` (neither is changed); `__proto__` stays an ordinary key. */
export function mergeDeep(base: Mapping, over: Mapping): Mapping {
  const out: Mapping = {};
  for (const key of Object.keys(base)) setKey(out, key, base[key]);
  for (const key of Object.keys(over)) {
    const current = Object.hasOwn(out, key) ? out[key] : undefined;
    const value = over[key];
    setKey(out, key, isMapping(current) && isMapping(value) ? mergeDeep(current, value) : value);
  }
  return out;
}

function setKey(obj: Mapping, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

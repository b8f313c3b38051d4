/**
 * Data in the typed form the differential tests compare (test/expand/dm_reference.py writes the
 * same): every mapping as ordered [key, value] pairs and every float as its Python repr, so that
 * what plain deepEqual would not see counts — `1` against `1.0`, the order of integer-like keys.
 */
import { isDict, PyFloat, pyFloatRepr, pyKeys } from '../../client/src/python/values.js';

export function typed(value: unknown): unknown {
  if (isDict(value)) return { dict: pyKeys(value).map((k) => [k, typed(value[k])]) };
  if (Array.isArray(value)) return value.map(typed);
  if (value instanceof PyFloat) return { float: pyFloatRepr(value.value) };
  if (typeof value === 'number' && !Number.isInteger(value)) return { float: pyFloatRepr(value) };
  return value;
}

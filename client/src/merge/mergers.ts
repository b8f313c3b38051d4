/**
 * The mergers of cloud-init's `cloudinit/mergers/m_{dict,list,str}.py` (docs/merging.md "Specifications"),
 * registered by name. Each is a small pure function built from its options and the root merge
 * (which dispatches on the type of the existing value, §3); none changes its inputs: mappings and
 * lists are copied, incoming values are inserted by reference.
 */
import { addPathPart, mergeFailure } from './merge-error.js';
import { codePoints, type MergeMap, pythonTypeName } from './value.js';

/** `merge(existing, incoming)`: the accumulated value first, the value merged in second. */
export type MergeFunction = (existing: unknown, incoming: unknown) => unknown;

/** Python's `option in settings`: membership in a list, substring of a string, key of a mapping. */
export interface MergerOptions {
  has(option: string): boolean;
}

/** Settings as cloud-init tests them; anything but a list, string or mapping is a TypeError. */
export function mergerOptions(settings: unknown): MergerOptions {
  if (Array.isArray(settings) || typeof settings === 'string') {
    return { has: (option) => settings.includes(option) };
  }
  if (settings instanceof Map) return { has: (option) => settings.has(option) };
  throw mergeFailure(
    'TypeError',
    `merger settings of type ${pythonTypeName(settings)} are not a list of options`,
  );
}

export interface MergerDefinition {
  /** The type of *existing* value the merger is called for. */
  handles: 'dict' | 'list' | 'str';
  /** The options it reads; cloud-init ignores any other, and so does dm (with a warning: merge-how.ts). */
  options: readonly string[];
  create(options: MergerOptions, merge: MergeFunction): MergeFunction;
}

/**
 * `dict(...)`: options `no_replace` (default) | `replace` (replace wins when both are given),
 * `allow_delete`, `recurse_list` (alias `recurse_array`), `recurse_str`; recursion into mappings
 * is always on.
 * Incoming not a mapping: the existing mapping is kept. Otherwise, on a copy of the existing
 * mapping, for each incoming key in order: a new key is added at the end (even with a null
 * value); an existing key with a null value is deleted under `allow_delete`; under `replace` the
 * incoming value overwrites; under `no_replace` the value is merged (root merge, dispatched on
 * the existing value's type) when the incoming value is a mapping, a list with `recurse_list`, or
 * a string with `recurse_str`, and kept otherwise.
 */
export const dictMerger: MergerDefinition = {
  handles: 'dict',
  options: ['no_replace', 'replace', 'allow_delete', 'recurse_list', 'recurse_array', 'recurse_str'],
  create(options, merge) {
    const replace = options.has('replace');
    const recurseList = options.has('recurse_array') || options.has('recurse_list');
    const recurseStr = options.has('recurse_str');
    const allowDelete = options.has('allow_delete');
    return (existing, incoming) => {
      if (!(incoming instanceof Map)) return existing;
      // forEach, not new Map(existing) and for-of: measurably faster on large mappings (bench/merge.ts).
      const result: MergeMap = new Map();
      (existing as MergeMap).forEach((value, key) => {
        result.set(key, value);
      });
      (incoming as MergeMap).forEach((value, key) => {
        if (!result.has(key)) {
          result.set(key, value);
        } else if (value === null && allowDelete) {
          result.delete(key);
        } else if (replace) {
          result.set(key, value);
        } else if (
          value instanceof Map ||
          (recurseList && Array.isArray(value)) ||
          (recurseStr && typeof value === 'string')
        ) {
          try {
            result.set(key, merge(result.get(key), value));
          } catch (error) {
            addPathPart(error, { key });
            throw error;
          }
        }
      });
      return result;
    };
  },
};

/** Python's `list.extend(x)`: a list's items, a string's characters, a mapping's keys. */
function extendItems(value: unknown, mode: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return codePoints(value);
  if (value instanceof Map) return [...value.keys()];
  throw mergeFailure('TypeError', `list(${mode}) cannot add the items of a ${pythonTypeName(value)}`);
}

/** Python's `len(x)`. */
function pythonLength(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'string') return codePoints(value).length;
  if (value instanceof Map) return value.size;
  throw mergeFailure('TypeError', `list(no_replace) cannot take the length of a ${pythonTypeName(value)}`);
}

/** Python's `mapping[i]` for the indexes list(no_replace) reads (`False`/`True` equal 0/1 there). */
function checkIndexes(map: MergeMap, count: number): void {
  for (let i = 0; i < count; i++) {
    if (!map.has(i) && !(i <= 1 && map.has(i === 1))) {
      throw mergeFailure(
        'KeyError',
        `list(no_replace) reads key ${i} of the incoming mapping, which has no such key`,
      );
    }
  }
}

const LIST_MODES = ['append', 'prepend', 'replace', 'no_replace'] as const;

/**
 * `list(...)`: mode = the first of `append`, `prepend`, `replace`, `no_replace` given (in that
 * priority), default `replace`; `recurse_dict`, `recurse_list` (`recurse_array`), `recurse_str`
 * apply in `replace` mode only.
 * `replace` with a non-list: the incoming value. `append`/`prepend`: concatenation with the
 * incoming value's items (a string's characters, a mapping's keys; TypeError for scalars).
 * `replace` with a list: positional overlay keeping the existing length; each overlapping item is
 * merged (root merge) when the incoming item is a list/string/mapping and the matching recurse
 * flag is on, else replaced. `no_replace`: the existing list, after cloud-init's `len()` and
 * indexing of the incoming value (TypeError for scalars, KeyError for non-empty mappings).
 */
export const listMerger: MergerDefinition = {
  handles: 'list',
  options: [...LIST_MODES, 'recurse_dict', 'recurse_list', 'recurse_array', 'recurse_str'],
  create(options, merge) {
    const mode = LIST_MODES.find((m) => options.has(m)) ?? 'replace';
    const recurseStr = options.has('recurse_str');
    const recurseDict = options.has('recurse_dict');
    const recurseList = options.has('recurse_array') || options.has('recurse_list');
    return (existing, incoming) => {
      const list = existing as unknown[];
      if (mode === 'replace' && !Array.isArray(incoming)) return incoming;
      if (mode === 'prepend') return extendItems(incoming, mode).concat(list);
      if (mode === 'append') return list.concat(extendItems(incoming, mode));
      const result = list.slice();
      if (mode === 'no_replace') {
        const common = Math.min(result.length, pythonLength(incoming));
        if (incoming instanceof Map) checkIndexes(incoming as MergeMap, common);
        return result;
      }
      const items = incoming as unknown[];
      const common = Math.min(result.length, items.length);
      for (let i = 0; i < common; i++) {
        const value = items[i];
        if (
          (recurseList && Array.isArray(value)) ||
          (recurseStr && typeof value === 'string') ||
          (recurseDict && value instanceof Map)
        ) {
          try {
            result[i] = merge(result[i], value);
          } catch (error) {
            addPathPart(error, { index: i });
            throw error;
          }
        } else {
          result[i] = value;
        }
      }
      return result;
    };
  },
};

/**
 * `str(...)`: without `append` the incoming value (of any type) replaces the string; with
 * `append` the incoming string is appended (TypeError for anything but a string).
 */
export const strMerger: MergerDefinition = {
  handles: 'str',
  options: ['append'],
  create(options) {
    const append = options.has('append');
    return (existing, incoming) => {
      if (!append) return incoming;
      if (typeof incoming !== 'string') {
        throw mergeFailure(
          'TypeError',
          `str(append) cannot append a ${pythonTypeName(incoming)} to a string`,
        );
      }
      return (existing as string) + incoming;
    };
  },
};

/** The mergers by module name, as cloud-init resolves `cloudinit.mergers.m_<name>`. */
export const MERGERS: ReadonlyMap<string, MergerDefinition> = new Map([
  ['m_dict', dictMerger],
  ['m_list', listMerger],
  ['m_str', strMerger],
]);

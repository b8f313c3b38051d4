/**
 * Reading merge specifications (docs/merging.md "Specifications"): the string form `name(opt,…)+…`, the list
 * form (`[{name, settings}]` or `[[name, opt…]]`), and the `merge_how`/`merge_type` keys of a
 * document. These follow cloud-init's `string_extract_mergers` and `dict_extract_mergers`
 * exactly, including what they do with malformed input; the result is checked later, when the
 * mergers are built (build-merger.ts).
 */
import { mergeFailure } from './merge-error.js';
import { codePoints, isTruthy, type MergeMap, pythonStrip, pythonTypeName } from './value.js';

/**
 * One merger as a specification names it. `name` should be `dict`, `list` or `str` (optionally
 * `m_`-prefixed) and `options` a list of option names, but the list form can put anything there;
 * build-merger.ts raises the errors cloud-init raises.
 */
export interface MergerSpec {
  name: unknown;
  options: unknown;
}

// cloud-init's NAME_MTCH. Python's `.` matches anything but \n, JavaScript's also stops at \r,
// U+2028 and U+2029, hence [^\n].
const NAME_PATTERN = /^([a-zA-Z_][A-Za-z0-9_]*)\(([^\n]*?)\)$/;

/**
 * The string form (§2.2): split on `+`; each component lower-cased, stripped, `-` → `_`; empty
 * components skipped; `name(options)` required (ValueError otherwise); options split on `,`,
 * stripped, lower-cased, empties dropped.
 */
export function parseMergeHowString(text: string): MergerSpec[] {
  const specs: MergerSpec[] = [];
  for (const part of text.split('+')) {
    const component = pythonStrip(part.toLowerCase()).replaceAll('-', '_');
    if (component === '') continue;
    const match = NAME_PATTERN.exec(component);
    if (!match) {
      throw mergeFailure(
        'ValueError',
        `merge specification '${component}' is not of the form name(options), e.g. dict(no_replace)`,
      );
    }
    const options = pythonStrip(match[2]!)
      .split(',')
      .filter((o) => pythonStrip(o) !== '')
      .map((o) => pythonStrip(o).toLowerCase());
    specs.push({ name: match[1]!, options });
  }
  return specs;
}

/** Python's `for m in value`: a list's items, a string's characters, a mapping's keys. */
function iterateForSpec(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return codePoints(value);
  if (value instanceof Map) return [...value.keys()];
  throw mergeFailure(
    'TypeError',
    `a merge specification of type ${pythonTypeName(value)} is neither a string nor a list`,
  );
}

/**
 * The list form (§2.3): a mapping item gives `{name, settings}` (name stripped, `-` → `_`, not
 * lower-cased; settings as given; KeyError when either key is missing); any other item is
 * indexed like a sequence `[name, opt, …]` without normalisation (a bare string `"dict"` is
 * name `d`, options `ict`). Items with an empty name are skipped.
 */
export function parseMergeHowList(value: unknown): MergerSpec[] {
  const specs: MergerSpec[] = [];
  for (const item of iterateForSpec(value)) {
    let name: unknown;
    let options: unknown;
    if (item instanceof Map) {
      const entries = item as MergeMap;
      if (!entries.has('name')) throw mergeFailure('KeyError', "a merge_how list item has no 'name' key");
      name = entries.get('name');
      if (typeof name !== 'string') {
        throw mergeFailure(
          'AttributeError',
          `a merge_how list item's name is a ${pythonTypeName(name)}, not a string`,
        );
      }
      name = pythonStrip(name.replaceAll('-', '_'));
      if (!entries.has('settings')) {
        throw mergeFailure('KeyError', `the merge_how list item for '${name}' has no 'settings' key`);
      }
      options = entries.get('settings');
    } else if (typeof item === 'string' || Array.isArray(item)) {
      const sequence: unknown[] = typeof item === 'string' ? codePoints(item) : item;
      if (sequence.length === 0) {
        throw mergeFailure('IndexError', `a merge_how list item is an empty ${pythonTypeName(item)}`);
      }
      name = sequence[0];
      options =
        sequence.length >= 2
          ? typeof item === 'string'
            ? sequence.slice(1).join('')
            : sequence.slice(1)
          : [];
    } else {
      throw mergeFailure(
        'TypeError',
        `a merge_how list item is a ${pythonTypeName(item)}; expected {name, settings} or [name, option, …]`,
      );
    }
    if (isTruthy(name)) specs.push({ name, options });
  }
  return specs;
}

/** A `merge_how` value: a string uses the string form, anything else the list form (§2.1). */
export function parseMergeHow(value: unknown): MergerSpec[] {
  if (value === null || value === undefined) return [];
  return typeof value === 'string' ? parseMergeHowString(value) : parseMergeHowList(value);
}

export interface ExtractedMergeHow {
  specs: MergerSpec[];
  /** The document without the key that was read. */
  body: MergeMap;
}

/**
 * Reads a document's own specification (§2.1): `merge_how`, or, only when that is absent or
 * null, `merge_type`. The key that was read is removed (a null `merge_how` is removed too); when
 * `merge_how` is used, a `merge_type` key stays as data. The input is not changed.
 */
export function extractMergeHow(document: MergeMap): ExtractedMergeHow {
  let body = document;
  let raw: unknown = null;
  if (body.has('merge_how')) {
    raw = body.get('merge_how');
    body = new Map(body);
    body.delete('merge_how');
  }
  if ((raw === null || raw === undefined) && body.has('merge_type')) {
    raw = body.get('merge_type');
    if (body === document) body = new Map(body);
    body.delete('merge_type');
  }
  return { specs: parseMergeHow(raw), body };
}

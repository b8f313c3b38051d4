/**
 * YAML in and out, in one place: every YAML dm reads (configurations, values files, merge and render
 * inputs, template contexts, lock and config files, schemas) goes through parseYaml or
 * parseYamlDocuments. YAML 1.2 core schema (so `y`, `n`, `on` stay strings, as
 * shared/conformance/README.md requires), bounded bytes, depth and alias expansion (untrusted
 * input: an alias bomb fails at once), a duplicated mapping key read as PyYAML reads it (the last
 * value wins, with a warning naming file:line and the key; docs/expansion.md), and errors as DmError
 * naming the file and line.
 */
import {
  boolCoreTag,
  CORE_SCHEMA,
  DUMP_SCHEMA,
  defineMappingTag,
  defineScalarTag,
  dump,
  EVENT_ID,
  type Event,
  floatCoreTag,
  floatYaml11Tag,
  getScalarValue,
  type load,
  loadAll,
  mapTag,
  mergeTag,
  NOT_RESOLVED,
  parseEvents,
  realMapTag,
  Schema,
  YAMLException,
} from 'js-yaml';
import { DmError } from '../error.js';
import { PyFloat, pyFloatRepr, pyKeys, pySetItem } from '../python/values.js';
import { parseSimpleYaml, type ResolvePlain } from './simple-yaml.js';

export interface ParseYamlOptions {
  /** Where the text came from (a file path or a reference), used in error messages. */
  source?: string;
  /**
   * `core` (default): YAML 1.2 core schema. `pyyaml`: what Deployment Manager's PyYAML
   * `safe_load` resolves that the core schema does not — `yes`/`no`/`on`/`off` (any of PyYAML's
   * spellings, but not `y`/`n`) as booleans, and `<<` merge keys — for configurations and template
   * output, so DM templates mean what they meant under DM (docs/expansion.md). It also reads data
   * as Python holds it: a float with an integral value (`1.0`) is a `PyFloat` (it prints `1.0`),
   * and a mapping whose integer-like keys come after others keeps its written order (`pyKeys`).
   */
  dialect?: 'core' | 'pyyaml';
  /** Largest input accepted, in bytes. Default 16 MiB. */
  maxBytes?: number;
  /** Most nodes a document may expand to, aliases counted each time reached. Default 1,000,000. */
  maxNodes?: number;
  /** `objects` (default): mappings as plain objects. `maps`: as `Map`s (any key, order kept). */
  mappings?: 'objects' | 'maps';
  /** Receives warnings (a duplicated key); default: `warning: …` on stderr. */
  onWarning?: (message: string) => void;
}

const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_NODES = 1_000_000;

function defaultWarning(message: string): void {
  process.stderr.write(`warning: ${message}\n`);
}

/**
 * A bound on how big parsed YAML becomes once aliases are expanded (the "billion laughs" alias
 * bomb): the parser shares aliased nodes, but printing, copying, merging or walking the result would
 * multiply them. Counting with aliases counted each time they are reached, and stopping at the
 * budget, keeps the check itself cheap.
 */
export function checkNodeBudget(value: unknown, source: string, maxNodes = DEFAULT_MAX_NODES): void {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    count++;
    if (count > maxNodes) {
      throw new DmError(
        'YAML_TOO_LARGE',
        `${source}: limit: the document expands to more than ${maxNodes} nodes (aliases expanded); an alias bomb?`,
        { category: 'limit', details: { source, maxNodes } },
      );
    }
    if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    else if (v instanceof Map) for (const x of v.values()) stack.push(x);
    else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) stack.push(x);
  }
}

const PYYAML_TRUE = new Set(['yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const PYYAML_FALSE = new Set(['no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);
const pyyamlBoolTag = defineScalarTag<boolean>(boolCoreTag.tagName, {
  implicit: true,
  implicitFirstChars: ['y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O'],
  resolve: (source) => (PYYAML_TRUE.has(source) ? true : PYYAML_FALSE.has(source) ? false : NOT_RESOLVED),
  identify: (data) => typeof data === 'boolean',
  represent: (data) => (data ? 'true' : 'false'),
});
/**
 * Floats as PyYAML reads them (YAML 1.1: a dot is required, an exponent has a sign, so `1e3` is
 * a string) and as Python holds them: `1.0` stays a float (PyFloat), others are JS numbers.
 */
const pythonFloatTag = defineScalarTag<number | PyFloat>(floatCoreTag.tagName, {
  implicit: true,
  implicitFirstChars: floatYaml11Tag.implicitFirstChars,
  resolve: (source, isExplicit, tagName) => {
    // PyYAML's pattern has no sign before a leading dot: `-.5` is a string there. Sexagesimal
    // floats (`1:30.5`) are left out, as sexagesimal integers are (docs/expansion.md).
    if (!isExplicit && (/^[-+]\.[0-9]/.test(source) || source.includes(':'))) return NOT_RESOLVED;
    const n = floatYaml11Tag.resolve(source, isExplicit, tagName);
    return typeof n === 'number' && Number.isInteger(n) ? new PyFloat(n) : n;
  },
  identify: (data) => data instanceof PyFloat || floatCoreTag.identify(data),
  // As PyYAML writes floats: repr, `.0` before an exponent, `.inf`, `.nan`.
  represent: (data) => {
    const n = data instanceof PyFloat ? data.value : (data as number);
    if (Number.isNaN(n)) return '.nan';
    if (!Number.isFinite(n)) return n > 0 ? '.inf' : '-.inf';
    const text = pyFloatRepr(n);
    return text.includes('.') ? text : text.replace('e', '.0e');
  },
});
/** Mappings as Python dicts: insertion order kept even for integer-like keys (pySetItem). */
const pythonMapTag = defineMappingTag<Record<string, unknown>>(mapTag.tagName, {
  create: () => ({}),
  addPair: (container, key, value) => {
    if (key !== null && typeof key === 'object' && !(key instanceof PyFloat))
      return 'object-based map does not support complex keys';
    pySetItem(container, String(key), value);
    return '';
  },
  has: (container, key) => Object.hasOwn(container, String(key)),
  keys: (container) => pyKeys(container),
  get: (container, key) => (Object.hasOwn(container, String(key)) ? container[String(key)] : null),
  identify: mapTag.identify,
  represent: (data: Record<string, unknown>) => {
    const map = new Map<unknown, unknown>();
    for (const key of pyKeys(data)) map.set(key, data[key]);
    return map;
  },
});
/**
 * What formatYaml writes with: js-yaml's dump schema (YAML 1.1 lookalikes quoted, so PyYAML
 * reads the text back the same), floats written as PyYAML writes them (`1.0` for a PyFloat) and
 * dicts in Python's key order.
 */
const dumpFloat = DUMP_SCHEMA.tags.find((t) => t.tagName === floatCoreTag.tagName) ?? floatCoreTag;
const FORMAT_SCHEMA = DUMP_SCHEMA.withTags(
  defineScalarTag(floatCoreTag.tagName, {
    ...(dumpFloat as typeof floatCoreTag),
    identify: pythonFloatTag.identify,
    represent: pythonFloatTag.represent,
  }),
  pythonMapTag,
);
const PYYAML_SCHEMA = new Schema([
  ...CORE_SCHEMA.tags.filter(
    (t) =>
      t.tagName !== boolCoreTag.tagName && t.tagName !== floatCoreTag.tagName && t.tagName !== mapTag.tagName,
  ),
  pyyamlBoolTag,
  pythonFloatTag,
  pythonMapTag,
  mergeTag,
]);
const MAP_SCHEMA = CORE_SCHEMA.withTags(realMapTag);
const PYYAML_MAP_SCHEMA = PYYAML_SCHEMA.withTags(realMapTag);

function loadOptions(options: ParseYamlOptions, lastKeyWins = false): Parameters<typeof load>[1] {
  const maps = options.mappings === 'maps';
  const schema =
    options.dialect === 'pyyaml' ? (maps ? PYYAML_MAP_SCHEMA : PYYAML_SCHEMA) : maps ? MAP_SCHEMA : undefined;
  return {
    filename: options.source,
    maxDepth: MAX_DEPTH,
    ...(schema ? { schema } : {}),
    ...(lastKeyWins ? { json: true } : {}),
  } as Parameters<typeof load>[1];
}

/** 1-based line of each offset, by binary search over the line starts. */
function lineOf(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** Every repeated scalar key of every mapping, with the line of the repetition. */
export function duplicatedKeys(text: string): { key: string; line: number }[] {
  const events: Event[] = parseEvents(text, { maxDepth: MAX_DEPTH });
  const line = lineOf(text);
  const out: { key: string; line: number }[] = [];
  // One frame per open collection: for a mapping, its keys so far and whether a key comes next.
  const frames: { keys?: Set<string>; keyNext: boolean }[] = [];
  const node = (e: Event) => {
    const top = frames[frames.length - 1];
    if (!top?.keys) return;
    if (top.keyNext && e.type === EVENT_ID.SCALAR) {
      const key = getScalarValue(text, e);
      if (key !== '<<' && top.keys.has(key)) out.push({ key, line: line(e.valueStart) });
      top.keys.add(key);
    }
    top.keyNext = !top.keyNext;
  };
  for (const e of events) {
    if (e.type === EVENT_ID.DOCUMENT) frames.push({ keyNext: false });
    else if (e.type === EVENT_ID.POP) frames.pop();
    else {
      node(e);
      if (e.type === EVENT_ID.MAPPING) frames.push({ keys: new Set(), keyNext: true });
      else if (e.type === EVENT_ID.SEQUENCE) frames.push({ keyNext: false });
    }
  }
  return out;
}

/**
 * loadAll as PyYAML reads: a duplicated mapping key is not an error, the last value wins, and
 * each repetition is reported. The strict parse runs first, so the scan costs nothing unless a
 * key is repeated.
 */
function loadAllLikePyYaml(text: string, options: ParseYamlOptions): unknown[] {
  try {
    return loadAll(text, loadOptions(options));
  } catch (error) {
    if (!(error instanceof YAMLException) || !error.reason.startsWith('duplicated mapping key')) throw error;
  }
  const docs = loadAll(text, loadOptions(options, true));
  const warn = options.onWarning ?? defaultWarning;
  const where = options.source ?? 'input';
  for (const d of duplicatedKeys(text)) {
    warn(`${where}:${d.line}: duplicated mapping key '${d.key}': the last value wins (as PyYAML reads it)`);
  }
  return docs;
}
const MAX_DEPTH = 1000;

function checkSize(text: string, options: ParseYamlOptions): void {
  const max = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (text.length > max) {
    throw new DmError(
      'YAML_TOO_LARGE',
      `${options.source ?? 'input'} is ${text.length} bytes, more than the ${max} bytes allowed`,
      { category: 'limit' },
    );
  }
}

function yamlError(error: unknown, options: ParseYamlOptions): DmError {
  const where = options.source ?? 'input';
  if (error instanceof YAMLException) {
    const line = error.mark ? `:${error.mark.line + 1}` : '';
    return new DmError('INVALID_YAML', `${where}${line}: invalid YAML: ${error.reason}`, {
      category: 'invalid-input',
      details: {
        source: where,
        ...(error.mark ? { line: error.mark.line + 1, column: error.mark.column + 1 } : {}),
      },
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new DmError('INVALID_YAML', `${where}: invalid YAML: ${message}`, {
    category: 'invalid-input',
    details: { source: where },
    cause: error,
  });
}

const PYYAML_STR_TAG = PYYAML_SCHEMA.defaultScalarTag.tagName;
/** A plain scalar as the pyyaml dialect resolves it (what parseSimpleYaml reads with). */
export const resolvePyYamlPlain: ResolvePlain = (source) => {
  const known = resolvedPlains.get(source);
  if (known !== undefined) return known;
  const resolved = PYYAML_SCHEMA.resolveImplicitScalarTag(source);
  const plain = { value: resolved.value, isString: resolved.tag.tagName === PYYAML_STR_TAG };
  // Keys and common values repeat from one rendering to the next; an object (a PyFloat) is
  // made anew each time, never shared between documents.
  if (plain.value === null || typeof plain.value !== 'object') {
    if (resolvedPlains.size > 10_000) resolvedPlains.clear();
    resolvedPlains.set(source, plain);
  }
  return plain;
};
/** What plain scalars resolved to, by their text (results holding no object). */
const resolvedPlains = new Map<string, { value: unknown; isString: boolean }>();

/**
 * Empties what the reader and the writer remember of scalars: a rendering process's warm-up
 * (expand/sandbox/renderer-warm-up.ts) leaves nothing a request could find.
 */
export function clearScalarCaches(): void {
  resolvedPlains.clear();
  simpleStrings.clear();
}

/**
 * Parses one YAML document; an empty text gives `null`. In the pyyaml dialect with objects,
 * simple block text (what templates render) is read by parseSimpleYaml, the rest by js-yaml.
 */
export function parseYaml(text: string, options: ParseYamlOptions = {}): unknown {
  checkSize(text, options);
  if (options.dialect === 'pyyaml' && options.mappings !== 'maps') {
    const simple = parseSimpleYaml(text, resolvePyYamlPlain);
    if (simple !== undefined) {
      checkNodeBudget(simple, options.source ?? 'input', options.maxNodes);
      return simple;
    }
  }
  return parseYamlFully(text, options);
}

/** parseYaml by js-yaml only (the fast reader's reference, in yaml.test.ts). */
export function parseYamlFully(text: string, options: ParseYamlOptions = {}): unknown {
  checkSize(text, options);
  try {
    const docs = loadAllLikePyYaml(text, options);
    if (docs.length > 1) {
      throw new DmError(
        'INVALID_YAML',
        `${options.source ?? 'input'}: expected one YAML document, found ${docs.length}`,
        { category: 'invalid-input' },
      );
    }
    if (docs.length === 0) return null;
    checkNodeBudget(docs[0], options.source ?? 'input', options.maxNodes);
    return docs[0];
  } catch (error) {
    if (error instanceof DmError) throw error;
    throw yamlError(error, options);
  }
}

/** Parses a multi-document YAML stream. Empty documents are kept as `null`. */
export function parseYamlDocuments(text: string, options: ParseYamlOptions = {}): unknown[] {
  checkSize(text, options);
  let docs: unknown[];
  try {
    docs = loadAllLikePyYaml(text, options);
  } catch (error) {
    throw yamlError(error, options);
  }
  for (const d of docs) checkNodeBudget(d, options.source ?? 'input', options.maxNodes);
  return docs;
}

/**
 * Block-style YAML with keys in insertion order; `undefined` values are dropped. Documents of
 * the common shapes are written by formatBlocks below, the rest by js-yaml's dump; both give the
 * same text (yaml.test.ts compares them on random data).
 */
export function formatYaml(value: unknown): string {
  return formatBlocks(value) ?? dumpYaml(value);
}

/** js-yaml's dump with FORMAT_SCHEMA: what formatYaml writes, for every input. */
export function dumpYaml(value: unknown): string {
  return dump(value, {
    noRefs: true,
    lineWidth: -1,
    skipInvalid: true,
    schema: FORMAT_SCHEMA,
  } as Parameters<typeof dump>[1]);
}

/** Thrown inside formatBlocks for a value it leaves to js-yaml. */
const NOT_MINE = Symbol('not mine');
const STR_TAG = FORMAT_SCHEMA.defaultScalarTag.tagName;
/** Strings formatBlocks writes itself: one line, no character that changes how they are quoted. */
const SIMPLE_STRING = /^[A-Za-z0-9_./](?:[A-Za-z0-9_./:@,+=()%~ -]*[A-Za-z0-9_./@+=()%~-])?$/;
const MAX_SIMPLE_DEPTH = 100;
/** How each simple string was written (names, types and values repeat across resources). */
const simpleStrings = new Map<string, string>();
const indents: string[] = [];
const indent = (column: number): string => (indents[column] ??= ' '.repeat(column));

function simpleScalar(value: unknown): string {
  if (typeof value === 'string') {
    // Only strings that passed the checks below are remembered.
    let written = simpleStrings.get(value);
    if (written !== undefined) return written;
    if (value === '') return "''";
    if (value.length > 200 || !SIMPLE_STRING.test(value) || value.includes(': ')) throw NOT_MINE;
    // Plain when it reads back as this string, else single-quoted (as the presenter chooses).
    written = FORMAT_SCHEMA.resolveImplicitScalarTag(value).tag.tagName === STR_TAG ? value : `'${value}'`;
    if (simpleStrings.size > 10_000) simpleStrings.clear();
    simpleStrings.set(value, written);
    return written;
  }
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && !Object.is(value, -0)) return String(value);
    if (Number.isInteger(value)) throw NOT_MINE;
    return pythonFloatTag.represent(value) as string;
  }
  if (value instanceof PyFloat) return pythonFloatTag.represent(value) as string;
  throw NOT_MINE;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Whether a plain object has a key whose value is written (not `undefined`). */
function hasWrittenValue(map: Record<string, unknown>): boolean {
  for (const k in map) if (Object.hasOwn(map, k) && map[k] !== undefined) return true;
  return false;
}

/**
 * What follows a key's `:` or a `- `: ` value` and the line's end for a scalar or an empty
 * collection (`[]`, `{}`), or the line's end and the block of a non-empty collection below it,
 * indented to `column` (a `- ` item's mapping starts on the item's line).
 */
function afterHead(value: unknown, column: number, item: boolean, depth: number, out: string[]): string {
  if (value === null || typeof value !== 'object' || value instanceof PyFloat)
    return ` ${simpleScalar(value)}\n`;
  if (Array.isArray(value)) {
    if (value.length === 0) return ' []\n';
    out.push(item ? ' ' : '\n');
    blockSequence(value, column, item, depth, out);
    return '';
  }
  if (!isPlainObject(value)) throw NOT_MINE;
  if (!hasWrittenValue(value)) return ' {}\n';
  out.push(item ? ' ' : '\n');
  blockMapping(value, column, item, depth, out);
  return '';
}

function blockMapping(
  map: Record<string, unknown>,
  column: number,
  firstInline: boolean,
  depth: number,
  out: string[],
): void {
  if (depth > MAX_SIMPLE_DEPTH) throw NOT_MINE;
  const pad = indent(column);
  let first = firstInline;
  for (const key of pyKeys(map)) {
    const value = map[key];
    if (value === undefined) continue;
    const head = first ? `${simpleScalar(key)}:` : `${pad}${simpleScalar(key)}:`;
    first = false;
    out.push(head);
    const rest = afterHead(value, column + 2, false, depth + 1, out);
    if (rest !== '') out.push(rest);
  }
}

function blockSequence(
  list: unknown[],
  column: number,
  firstInline: boolean,
  depth: number,
  out: string[],
): void {
  if (depth > MAX_SIMPLE_DEPTH) throw NOT_MINE;
  const pad = indent(column);
  for (let i = 0; i < list.length; i++) {
    const item = list[i] === undefined ? null : list[i];
    out.push(i === 0 && firstInline ? '-' : `${pad}-`);
    const rest = afterHead(item, column + 2, true, depth + 1, out);
    if (rest !== '') out.push(rest);
  }
}

/**
 * The text js-yaml's presenter writes for a document whose top is a non-empty mapping of plain
 * objects, arrays, numbers, booleans, null and SIMPLE_STRING strings, or `undefined` when the
 * document holds anything else. Its cold start is a fraction of the presenter's (a `dm expand`
 * writes one document per process).
 */
export function formatBlocks(value: unknown): string | undefined {
  if (!isPlainObject(value) || !hasWrittenValue(value)) return undefined;
  const out: string[] = [];
  try {
    blockMapping(value, 0, false, 0, out);
  } catch (error) {
    if (error === NOT_MINE) return undefined;
    throw error;
  }
  return out.join('');
}

/** A multi-document YAML stream, each document introduced by `---`. */
export function formatYamlDocuments(values: readonly unknown[]): string {
  return values.map((v) => `---\n${formatYaml(v)}`).join('');
}

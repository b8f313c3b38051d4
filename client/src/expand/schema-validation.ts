/**
 * Validating properties against a template's schema with Ajv (docs/expansion.md, "Schemas"):
 * `default`s filled in (nested ones and those behind `$ref` too), every error reported at once
 * with its property path, an invalid schema reported as such. A schema comes with its template
 * and is as untrusted: during an expansion this runs in the Jinja rendering process, under its
 * time and memory limits (jinja-child.ts; docs/expansion.md, "Isolation"), never in dm's own
 * process, where a schema's `pattern` could hold dm forever. Parsing a schema (its `imports:`,
 * Python type names) is schema.ts.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { dropSchemaCompilers, fromDraft04, schemaCompiler } from '../document/json-schema.js';
import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';
import { cloneData, hasPythonValues, isDict, PyFloat, toPlain } from '../python/values.js';
import {
  jsonTypeName,
  NOT_KEYWORDS,
  parseTemplateSchema,
  pythonTypeNameWarnings,
  type TemplateSchema,
} from './schema.js';
import type { SchemaValidationMode, TemplateFile } from './types.js';

const validators = new Map<string, ValidateFunction>();

function compiledValidator(schema: TemplateSchema): ValidateFunction {
  const key = `${schema.file.path}\u0000${schema.file.content}`;
  let validate = validators.get(key);
  if (!validate) {
    const body: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(schema.document)) if (!NOT_KEYWORDS.has(k)) body[k] = v;
    if (body.type === undefined) body.type = 'object';
    const converted = draft04References(fromDraft04(body, jsonTypeName) as Record<string, unknown>);
    const compiler = templateCompiler();
    try {
      validate = compiler.compile(converted);
    } catch (error) {
      // Ajv keeps the meta-schema's errors on the instance, not on what it throws.
      const errors = (compiler as { errors?: ErrorObject[] | null }).errors ?? undefined;
      throw new DmError('INVALID_SCHEMA', `${schema.file.path}: ${schemaProblem(error, errors, converted)}`, {
        category: 'invalid-input',
        details: { schema: schema.file.path },
      });
    }
    if (validators.size > 1000) validators.clear();
    validators.set(key, validate);
  }
  return validate;
}

/** The compiler of templates' schemas (one Ajv instance, holding what it compiled). */
const templateCompiler = () => schemaCompiler({ useDefaults: true, validateSchema: true });

/**
 * Empties the compiled validators and replaces the Ajv instance that compiled them (and keeps
 * what it compiled: patterns, functions) by a new one, made now as a first schema would make it:
 * a rendering process's warm-up (sandbox/renderer-warm-up.ts) leaves nothing a request could find.
 */
export function clearValidators(): void {
  validators.clear();
  dropSchemaCompilers();
  templateCompiler();
}

/**
 * Why a schema does not compile, as one clause: the property path in the schema, the bad value and
 * what it should be (`properties.port.type is 'integr', not one of array, boolean, …`), from the
 * first error Ajv's meta-schema check gives, preferring an enum (the most telling) to the anyOf
 * alternatives it also lists.
 */
function schemaProblem(error: unknown, errors: ErrorObject[] | undefined, document: unknown): string {
  const first = errors?.find((e) => e.keyword === 'enum') ?? errors?.[0];
  if (!first) return `the schema is invalid: ${error instanceof Error ? error.message : String(error)}`;
  const parts = first.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let value: unknown = document;
  for (const p of parts)
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[p] : undefined;
  const where = parts.length === 0 ? 'the schema' : parts.join('.');
  const shown = typeof value === 'string' ? `'${value}'` : JSON.stringify(value);
  if (first.keyword === 'enum') {
    const allowed = (first.params as { allowedValues?: unknown[] }).allowedValues ?? [];
    return `${where} is ${shown}, not one of ${allowed.map(String).join(', ')}`;
  }
  return `${where} is ${shown}, which ${first.message ?? 'is not valid JSON Schema'}`;
}

/** Keywords whose value is one schema, a list of schemas, or a map from names to schemas. */
const ONE_SCHEMA = new Set(['items', 'additionalItems', 'additionalProperties', 'not']);
const SCHEMA_LISTS = new Set(['items', 'allOf', 'anyOf', 'oneOf']);
const SCHEMA_MAPS = new Set(['properties', 'definitions', 'patternProperties', 'dependencies']);

/** The schema a local `$ref` (`#/definitions/x`, JSON pointer) names in `root`, if any. */
function resolveLocal(root: Record<string, unknown>, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  const pointer = decodeURIComponent(ref.slice(1));
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return undefined;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isDict(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/**
 * The `default` a `$ref` leads to, following a chain of `$ref`s (at most 32, a loop gives none):
 * DM's validator gave a property behind `$ref` the referenced schema's default.
 */
function referencedDefault(root: Record<string, unknown>, ref: string): { value: unknown } | undefined {
  let target = resolveLocal(root, ref);
  for (let hops = 0; hops < 32 && isDict(target); hops++) {
    if (Object.hasOwn(target, '$ref') && typeof target.$ref === 'string') {
      target = resolveLocal(root, target.$ref);
      continue;
    }
    return Object.hasOwn(target, 'default') ? { value: target.default } : undefined;
  }
  return undefined;
}

/**
 * JSON Schema draft 4's `$ref`, as DM's validator read templates' schemas (docs/expansion.md,
 * "Schemas"): a schema with a `$ref` is that reference and nothing else, the keywords beside it
 * ignored; and a property behind a `$ref` gets the default the reference leads to (none, it stays
 * absent). Ajv (draft-07 here) reads the siblings and fills in only a `default` written in the
 * property itself, so each `$ref` schema becomes `{$ref}` plus the default it leads to.
 */
export function draft04References(root: Record<string, unknown>): Record<string, unknown> {
  const seen = new Map<unknown, unknown>();
  const walk = (node: unknown): unknown => {
    if (!isDict(node)) return node;
    const done = seen.get(node);
    if (done) return done;
    if (typeof node.$ref === 'string') {
      const found = referencedDefault(root, node.$ref);
      const out = found ? { $ref: node.$ref, default: found.value } : { $ref: node.$ref };
      seen.set(node, out);
      return out;
    }
    const out: Record<string, unknown> = {};
    seen.set(node, out);
    for (const [key, value] of Object.entries(node)) {
      if (SCHEMA_MAPS.has(key) && isDict(value)) {
        out[key] = Object.fromEntries(
          Object.entries(value).map(([k, v]) => [k, Array.isArray(v) ? v : walk(v)]),
        );
      } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map(walk);
      else if (ONE_SCHEMA.has(key)) out[key] = walk(value);
      else out[key] = value;
    }
    return out;
  };
  return walk(root) as Record<string, unknown>;
}

function pathOf(error: ErrorObject): string {
  const parts = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = 'properties';
  for (const p of parts) path += /^\d+$/.test(p) ? `[${p}]` : `.${p}`;
  if (error.keyword === 'required')
    path += `.${(error.params as { missingProperty: string }).missingProperty}`;
  if (error.keyword === 'additionalProperties') {
    path += `.${(error.params as { additionalProperty: string }).additionalProperty}`;
  }
  return path;
}

function describe(error: ErrorObject, properties: unknown): string {
  if (error.keyword === 'required') return `${pathOf(error)}: is required`;
  if (error.keyword === 'additionalProperties')
    return `${pathOf(error)}: is not allowed (additionalProperties is false)`;
  let value: unknown = properties;
  for (const p of error.instancePath.split('/').slice(1)) {
    value =
      value && typeof value === 'object'
        ? (value as Record<string, unknown>)[p.replace(/~1/g, '/').replace(/~0/g, '~')]
        : undefined;
  }
  const got = value === undefined ? '' : ` (got ${JSON.stringify(value)})`;
  const allowed =
    error.keyword === 'enum'
      ? `: ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}`
      : '';
  return `${pathOf(error)}: ${error.message ?? error.keyword}${allowed}${got}`;
}

/**
 * Defaults that hold a float with an integral value (`default: 1.0`), by property path: Ajv
 * writes defaults as JSON (`1`), so they are put back as Python reads them (the schema read in
 * the pyyaml dialect), where `properties.<name>.default` nests (as DM's defaults did).
 */
interface FloatDefaults {
  [key: string]: { value?: unknown; nested?: FloatDefaults };
}
const floatDefaults = new WeakMap<TemplateSchema, FloatDefaults | null>();

function floatDefaultsOf(schema: TemplateSchema): FloatDefaults | null {
  let found = floatDefaults.get(schema);
  if (found === undefined) {
    found = null;
    if (/\bdefault\b[\s\S]*\d\.\d/.test(schema.file.content)) {
      try {
        const python = parseYaml(schema.file.content, { source: schema.file.path, dialect: 'pyyaml' });
        found = collectFloatDefaults(
          schema.document.properties,
          (python as Record<string, unknown>)?.properties,
        );
      } catch {
        found = null;
      }
    }
    floatDefaults.set(schema, found);
  }
  return found;
}

function collectFloatDefaults(core: unknown, python: unknown): FloatDefaults | null {
  if (!isDict(core) || !isDict(python)) return null;
  const out: FloatDefaults = {};
  let any = false;
  for (const key of Object.keys(python)) {
    const sub = python[key];
    const coreSub = core[key];
    if (!isDict(sub) || !isDict(coreSub)) continue;
    const entry: { value?: unknown; nested?: FloatDefaults } = {};
    // Only where both readings agree but for the floats (yes/no and the like are left alone).
    if (
      hasPythonValues(sub.default) &&
      JSON.stringify(toPlain(sub.default)) === JSON.stringify(coreSub.default)
    ) {
      entry.value = sub.default;
    }
    const nested = collectFloatDefaults(coreSub.properties, sub.properties);
    if (nested) entry.nested = nested;
    if (entry.value !== undefined || entry.nested) {
      out[key] = entry;
      any = true;
    }
  }
  return any ? out : null;
}

function putFloatDefaults(floats: FloatDefaults, given: unknown, copy: Record<string, unknown>): void {
  for (const [key, entry] of Object.entries(floats)) {
    if (!Object.hasOwn(copy, key)) continue;
    const had = isDict(given) && Object.hasOwn(given, key);
    if (!had && entry.value !== undefined) {
      if (JSON.stringify(copy[key]) === JSON.stringify(toPlain(entry.value)))
        copy[key] = cloneData(entry.value);
    } else if (entry.nested && isDict(copy[key])) {
      putFloatDefaults(entry.nested, had ? (given as Record<string, unknown>)[key] : undefined, copy[key]);
    }
  }
}

/** Puts back the PyFloats of `original` into `copy` (the same data, floats made plain). */
function restoreFloats(original: unknown, copy: unknown): void {
  if (original === null || typeof original !== 'object' || copy === null || typeof copy !== 'object') return;
  const from = original as Record<string, unknown>;
  const to = copy as Record<string, unknown>;
  for (const k of Object.keys(from)) {
    if (!Object.hasOwn(to, k)) continue;
    const v = from[k];
    if (v instanceof PyFloat) {
      if (to[k] === v.value) to[k] = v;
    } else restoreFloats(v, to[k]);
  }
}

/** Checks that a schema parses and compiles (for `dm lint`); returns Python type name warnings. */
export function checkTemplateSchema(file: TemplateFile): string[] {
  compiledValidator(parseTemplateSchema(file));
  return pythonTypeNameWarnings(file);
}

/**
 * Validates `properties` against the schema, filling in defaults in place (on a copy), and
 * returns the completed properties. `subject` names the resource in messages. In `warn` mode a
 * violation is passed to `onViolation` instead of failing; in `off` mode it is ignored. For one of
 * the user's own files (`ownFile`), `strict` passes a property that only the schema's top-level
 * `additionalProperties` refuses to `onViolation` too: DM accepted it (docs/expansion.md, "Schemas").
 */
export function applySchema(
  schema: TemplateSchema,
  properties: Record<string, unknown>,
  subject: string,
  mode: SchemaValidationMode = 'strict',
  onViolation?: (message: string) => void,
  ownFile = false,
): Record<string, unknown> {
  const validate = compiledValidator(schema);
  // Ajv sees floats as the numbers they are; the floats are put back after (defaults filled in).
  const python = hasPythonValues(properties);
  const copy = (python ? toPlain(properties) : cloneData(properties)) as Record<string, unknown>;
  const valid = validate(copy);
  if (python) restoreFloats(properties, copy);
  const floats = floatDefaultsOf(schema);
  if (floats) putFloatDefaults(floats, properties, copy);
  if (valid || mode === 'off') return copy;
  const errors = validate.errors ?? [];
  const seen = new Set<string>();
  const messages: string[] = [];
  const tolerated: string[] = [];
  for (const e of errors) {
    if (e.keyword === 'if') continue;
    const m = describe(e, copy);
    if (!seen.has(m)) {
      seen.add(m);
      if (ownFile && e.keyword === 'additionalProperties' && e.instancePath === '') tolerated.push(m);
      else messages.push(m);
    }
  }
  if (mode === 'warn' || messages.length === 0) {
    for (const m of [...tolerated, ...messages])
      onViolation?.(`${subject}: ${m} (schema ${schema.file.path})`);
    return copy;
  }
  throw new DmError(
    'SCHEMA_VALIDATION_FAILED',
    messages.length === 1
      ? `${subject}: ${messages[0]} (schema ${schema.file.path})`
      : `${subject}: ${messages.length} properties do not match the schema ${schema.file.path}: ${messages.join('; ')}`,
    {
      category: 'validation',
      details: { resource: subject, schema: schema.file.path, errors: messages },
      hint: 'to expand anyway and print each violation as a warning, as Deployment Manager did, use --schema-validation warn (config key schemaValidation)',
    },
  );
}

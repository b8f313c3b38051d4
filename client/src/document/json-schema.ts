/**
 * JSON Schema validation for template schemas (docs/expansion.md "Schemas") and blueprint schemas
 * (docs/blueprints.md): one ajv set-up with the same formats and leniency for both, and one reading
 * of the draft-04 spellings both meet. The two differ only where their contracts do: templates fill
 * in `default`s and report an invalid schema as such; blueprints, as Landscaper, do neither.
 */
import type { ValidateFunction } from 'ajv';
import * as ajvModule from 'ajv';
import * as ajvEqual from 'ajv/dist/runtime/equal.js';
import * as ajvFormatsModule from 'ajv-formats';
import { isMapping } from '../data.js';
import { DRAFT07_VALIDATOR_SOURCE } from './json-schema-meta.js';

/**
 * A CommonJS module's main export as an ES import sees it: Node gives `module.exports` as the
 * default, with `exports.default` beside it for modules compiled from ES (ajv's are); imported
 * statically, so that a bundle of the CLI holds them (docs/client.md, "The CLI bundle").
 */
function main<T>(namespace: unknown): T {
  const module = (namespace as { default?: unknown }).default ?? namespace;
  return ((module as { default?: unknown }).default ?? module) as T;
}

export interface SchemaCompiler {
  compile(schema: unknown): ValidateFunction;
}

export interface SchemaCompilerOptions {
  /** Fill in `default`s while validating (template properties). */
  useDefaults: boolean;
  /** Check the schema against its meta-schema before compiling. */
  validateSchema: boolean;
}

const compilers = new Map<string, SchemaCompiler>();

/** The ajv set-up every compiler shares (and the meta-schema validator's generation, below). */
function newAjv(options: SchemaCompilerOptions, extra: Record<string, unknown> = {}): SchemaCompiler {
  const Ajv = main<new (options: Record<string, unknown>) => SchemaCompiler>(ajvModule);
  const ajv = new Ajv({ allErrors: true, strict: false, ...options, ...extra });
  main<(ajv: SchemaCompiler) => void>(ajvFormatsModule)(ajv);
  return ajv;
}

const DRAFT07 = 'http://json-schema.org/draft-07/schema';
const TEMPLATE_OPTIONS: SchemaCompilerOptions = { useDefaults: true, validateSchema: true };

/**
 * Ajv compiles the draft-07 meta-schema the first time it checks a schema, most of the cost of a
 * first `dm expand`. The same validator, generated ahead by Ajv's standalone code from the same
 * set-up (json-schema-meta.ts; its test regenerates it from the installed Ajv and compares), is
 * handed to the instance instead, so nothing else about checking a schema changes.
 */
function primeMetaSchema(ajv: SchemaCompiler): void {
  const env = (ajv as unknown as { schemas: Record<string, { validate?: unknown } | undefined> }).schemas[
    DRAFT07
  ];
  if (!env || env.validate) return;
  const module: { exports: unknown } = { exports: {} };
  // The generated code requires one module of Ajv's runtime, handed over here.
  const require = (id: string) => {
    if (id === 'ajv/dist/runtime/equal') return { default: main<unknown>(ajvEqual) };
    throw new Error(`the draft-07 validator requires ${id}, which json-schema.ts does not hand over`);
  };
  new Function('require', 'module', DRAFT07_VALIDATOR_SOURCE)(require, module);
  env.validate = module.exports;
}

/** The standalone module text of the draft-07 meta-schema validator as the installed Ajv generates it. */
export async function draft07ValidatorSource(): Promise<string> {
  const { _ } = (ajvModule as unknown as { default: { _: (s: TemplateStringsArray) => unknown } }).default;
  const standaloneCode = main<(ajv: unknown, v: unknown) => string>(
    await import('ajv/dist/standalone/index.js'),
  );
  const ajv = newAjv(TEMPLATE_OPTIONS, {
    code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` },
  }) as SchemaCompiler & { getSchema(id: string): unknown };
  return standaloneCode(ajv, ajv.getSchema(DRAFT07));
}

/** Forgets the compilers made so far (and what they compiled): the next schemaCompiler makes new ones. */
export function dropSchemaCompilers(): void {
  compilers.clear();
}

/** The ajv instance for these options (made once): every error reported, unknown keywords ignored, ajv-formats. */
export function schemaCompiler(options: SchemaCompilerOptions): SchemaCompiler {
  const key = `${options.useDefaults}/${options.validateSchema}`;
  let compiler = compilers.get(key);
  if (!compiler) {
    compiler = newAjv(options);
    if (options.useDefaults === TEMPLATE_OPTIONS.useDefaults && options.validateSchema)
      primeMetaSchema(compiler);
    compilers.set(key, compiler);
  }
  return compiler;
}

/**
 * Rewrites draft-04 spellings into what ajv's default draft reads: boolean `exclusiveMinimum` /
 * `exclusiveMaximum` become the bound itself, a string `id` and `$schema` are dropped, and
 * `typeName` may rename `type` values. Names under `properties`, `definitions` and
 * `patternProperties` are property names, kept as they are.
 */
export function fromDraft04(node: unknown, typeName: (type: unknown) => unknown = (type) => type): unknown {
  if (Array.isArray(node)) return node.map((n) => fromDraft04(n, typeName));
  if (!isMapping(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema') continue;
    if (key === 'id' && typeof value === 'string') continue;
    if (key === 'type') {
      out[key] = typeName(value);
      continue;
    }
    if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'boolean') {
      const bound = key === 'exclusiveMinimum' ? 'minimum' : 'maximum';
      if (value && typeof node[bound] === 'number') out[key] = node[bound];
      continue;
    }
    if (
      (key === 'minimum' || key === 'maximum') &&
      node[key === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum'] === true
    ) {
      continue;
    }
    if ((key === 'properties' || key === 'definitions' || key === 'patternProperties') && isMapping(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromDraft04(v, typeName)]));
      continue;
    }
    out[key] = fromDraft04(value, typeName);
  }
  return out;
}

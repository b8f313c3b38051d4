/**
 * JSON schemas of blueprints (docs/blueprints.md "Blueprints"): `local://`, `blueprint://` and `cd://`
 * references are replaced by the schema they name before compilation; everything else is left
 * to the validator (schema-validation.ts, with client/src/document/json-schema.ts, the set-up
 * template schemas use too; drafts 4/6/7 as gojsonschema detects them). Both run in the
 * blueprint rendering process, never in dm's own (docs/blueprints.md, "Sandbox"): a schema is as
 * untrusted as its blueprint, and references that double at each step, or a pattern that
 * backtracks, could otherwise hold dm for ever.
 */
import { isMapping } from '../data.js';
import { parseYaml } from '../document/yaml.js';
import { BlueprintError } from './errors.js';

export interface SchemaScope {
  /** `localTypes` of the blueprint. */
  localTypes: Record<string, unknown>;
  /** The blueprint filesystem (path without leading `/` → content). */
  files: Record<string, string>;
  /** Schemas behind `cd://` references (resources of type landscaper.gardener.cloud/jsonschema). */
  cdSchemas?: Record<string, unknown>;
}

function fragment(schema: unknown, frag: string | undefined, ref: string): unknown {
  if (!frag || frag === '/') return schema;
  let node = schema;
  for (const raw of frag.replace(/^\//, '').split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(part)];
    else if (isMapping(node)) node = node[part];
    else node = undefined;
    if (node === undefined)
      throw new BlueprintError('schema', `$ref '${ref}': fragment '#${frag}' selects nothing`);
  }
  return node;
}

function loadRef(ref: string, scope: SchemaScope, inCd: boolean): { schema: unknown; inCd: boolean } {
  const [base = '', frag] = ref.split('#', 2) as [string, string | undefined];
  if (base.startsWith('local://')) {
    const name = base.slice('local://'.length);
    if (inCd)
      throw new BlueprintError('schema', `$ref '${ref}': local types are not visible inside cd:// schemas`);
    if (name.includes('/'))
      throw new BlueprintError('schema', `$ref '${ref}': a local type reference has no path`);
    if (!Object.hasOwn(scope.localTypes, name)) {
      throw new BlueprintError('schema', `$ref '${ref}': no local type '${name}' in localTypes`);
    }
    return { schema: fragment(scope.localTypes[name], frag, ref), inCd };
  }
  if (base.startsWith('blueprint://')) {
    const path = base.slice('blueprint://'.length).replace(/^\/+/, '');
    const text = scope.files[path];
    if (text === undefined)
      throw new BlueprintError('schema', `$ref '${ref}': no file '${path}' in the blueprint`);
    let doc: unknown;
    try {
      doc = parseYaml(text, { source: path });
    } catch (error) {
      throw new BlueprintError('schema', `$ref '${ref}': ${(error as Error).message}`);
    }
    return { schema: fragment(doc, frag, ref), inCd };
  }
  const schemas = scope.cdSchemas ?? {};
  if (!Object.hasOwn(schemas, base)) {
    throw new BlueprintError('schema', `$ref '${ref}': no jsonschema resource for '${base}'`);
  }
  return { schema: fragment(schemas[base], frag, ref), inCd: true };
}

const OWN_SCHEMES = /^(local|blueprint|cd):\/\//;

/** The schema with every local://, blueprint:// and cd:// reference replaced (recursively). */
export function resolveSchemaRefs(
  schema: unknown,
  scope: SchemaScope,
  chain: string[] = [],
  inCd = false,
): unknown {
  if (Array.isArray(schema)) return schema.map((s) => resolveSchemaRefs(s, scope, chain, inCd));
  if (!isMapping(schema)) return schema;
  const ref = schema.$ref;
  if (typeof ref === 'string' && OWN_SCHEMES.test(ref)) {
    if (chain.includes(ref)) {
      throw new BlueprintError('schema', `cyclic references: ${[...chain, ref].join(' -> ')}`);
    }
    const loaded = loadRef(ref, scope, inCd);
    return resolveSchemaRefs(loaded.schema, scope, [...chain, ref], loaded.inCd);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = resolveSchemaRefs(v, scope, chain, inCd);
  return out;
}

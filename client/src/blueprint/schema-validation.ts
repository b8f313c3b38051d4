/**
 * Validating a blueprint's import and export values against their JSON schemas with Ajv
 * (docs/blueprints.md "Blueprints"), as Landscaper does: no defaults, no meta-schema check. It
 * runs in the blueprint rendering process (sandbox-child.ts), under its time and memory limits,
 * never in dm's own: Ajv compiles a schema to code, and a schema comes with its blueprint.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { fromDraft04, schemaCompiler } from '../document/json-schema.js';
import { BlueprintError } from './errors.js';
import { resolveSchemaRefs, type SchemaScope } from './schema.js';

function describe(e: ErrorObject): string {
  const path = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : '(root)';
  return `${path}: ${e.message ?? 'is invalid'}`;
}

const compiled = new Map<string, ValidateFunction>();

/**
 * Validates `value` against `schema` (references resolved in `scope`); the messages of every
 * violation, empty when valid. A schema that cannot be compiled is a `schema` error.
 */
export function validateAgainst(value: unknown, schema: unknown, scope: SchemaScope, what: string): string[] {
  const resolved = fromDraft04(resolveSchemaRefs(schema, scope));
  if (resolved === true || resolved === undefined || resolved === null) return [];
  const key = JSON.stringify(resolved);
  let validate = compiled.get(key);
  if (!validate) {
    try {
      validate = schemaCompiler({ useDefaults: false, validateSchema: false }).compile(resolved);
    } catch (error) {
      throw new BlueprintError('schema', `${what}: invalid JSON schema: ${(error as Error).message}`);
    }
    if (compiled.size > 500) compiled.clear();
    compiled.set(key, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map(describe);
}

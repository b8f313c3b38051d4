/**
 * Template schemas (docs/expansion.md, "Schemas"): `<template>.schema` in YAML, JSON Schema in the
 * draft-04 style DM used. This module reads a schema (its document, its `imports:`, Python type
 * names); validating properties against it is schema-validation.ts, which runs where templates
 * run. Draft-04 spellings (boolean `exclusiveMinimum`/`exclusiveMaximum`, `id`) are rewritten to
 * their draft-07 forms there; DM's top-level keys (`info`, `imports`, `outputs`) are not schema
 * keywords and are ignored.
 */
import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';
import type { TemplateFile } from './types.js';

export { SCHEMA_VALIDATION_MODES, type SchemaValidationMode } from './types.js';

export interface TemplateSchema {
  file: TemplateFile;
  /** The schema document as parsed. */
  document: Record<string, unknown>;
  /** `imports:` entries, normalised to {path, name}. */
  imports: { path: string; name: string }[];
}

/** DM's top-level keys of a schema that are not JSON Schema keywords. */
export const NOT_KEYWORDS: ReadonlySet<string> = new Set(['info', 'imports', 'outputs']);

/**
 * Python type names that DM-era schemas used for JSON Schema types (`type: int`); DM validated
 * schemas only on request, so such schemas worked. Read as the JSON Schema name; `dm lint` warns.
 */
const PYTHON_TYPE_NAMES: Record<string, string> = {
  int: 'integer',
  bool: 'boolean',
  str: 'string',
  float: 'number',
  dict: 'object',
  list: 'array',
};

/** A `type` value with Python type names read as their JSON Schema names. */
export function jsonTypeName(value: unknown): unknown {
  if (typeof value === 'string')
    return Object.hasOwn(PYTHON_TYPE_NAMES, value) ? PYTHON_TYPE_NAMES[value] : value;
  if (Array.isArray(value)) return value.map(jsonTypeName);
  return value;
}

/** `file:line: …` for each Python type name in a schema (text scan: the parsed YAML has no lines). */
export function pythonTypeNameWarnings(file: TemplateFile): string[] {
  const out: string[] = [];
  const names = Object.keys(PYTHON_TYPE_NAMES).join('|');
  const pattern = new RegExp(
    `(?:^|[\\s{,])type\\s*:\\s*(?:\\[[^\\]]*\\b|['"]?)(${names})['"]?\\s*(?:[,}\\]#]|$)`,
  );
  file.content.split('\n').forEach((line, i) => {
    const m = pattern.exec(line);
    if (m) {
      out.push(
        `${file.path}:${i + 1}: type '${m[1]}' is a Python type name, read as JSON Schema '${PYTHON_TYPE_NAMES[m[1]!]}'`,
      );
    }
  });
  return out;
}

const parsedSchemas = new WeakMap<TemplateFile, { content: string; schema: TemplateSchema }>();

/**
 * Parses a schema file; YAML errors and non-mapping documents are errors about the schema. The
 * result is kept per file object (a template's schema is read once per run, not per resource).
 */
export function parseTemplateSchema(file: TemplateFile): TemplateSchema {
  const cached = parsedSchemas.get(file);
  if (cached && cached.content === file.content) return cached.schema;
  const schema = parseSchemaText(file);
  parsedSchemas.set(file, { content: file.content, schema });
  return schema;
}

function parseSchemaText(file: TemplateFile): TemplateSchema {
  const document = parseYaml(file.content, { source: file.path });
  if (document === null || document === undefined) return { file, document: {}, imports: [] };
  if (typeof document !== 'object' || Array.isArray(document)) {
    throw new DmError('INVALID_SCHEMA', `${file.path}: a schema must be a YAML mapping`, {
      category: 'invalid-input',
    });
  }
  const doc = document as Record<string, unknown>;
  const imports: { path: string; name: string }[] = [];
  const raw = doc.imports ?? [];
  if (!Array.isArray(raw)) {
    throw new DmError('INVALID_SCHEMA', `${file.path}: 'imports' must be a list`, {
      category: 'invalid-input',
    });
  }
  for (const [i, entry] of raw.entries()) {
    if (typeof entry === 'string') imports.push({ path: entry, name: entry });
    else if (entry && typeof entry === 'object' && typeof (entry as { path?: unknown }).path === 'string') {
      const e = entry as { path: string; name?: unknown };
      imports.push({ path: e.path, name: typeof e.name === 'string' ? e.name : e.path });
    } else {
      throw new DmError('INVALID_SCHEMA', `${file.path}: imports[${i}] must be a path or {path, name}`, {
        category: 'invalid-input',
      });
    }
  }
  return { file, document: doc, imports };
}

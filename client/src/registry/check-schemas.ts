/**
 * `dm lint`'s schema check: every version's `<template>.schema` (not only those an example.yaml
 * exercises) must be a valid schema (`SCHEMA_INVALID`), and Python type names in it (`type: int`,
 * read as JSON Schema `integer`) are warnings naming file:line (`SCHEMA_PYTHON_TYPE`).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Finding, ScanResult } from './types.js';

export interface SchemaCheck {
  findings: Finding[];
  /** Version directories whose schema is invalid (their examples are not expanded). */
  invalid: Set<string>;
}

export async function checkSchemas(dir: string, scan: ScanResult): Promise<SchemaCheck> {
  const { checkTemplateSchema } = await import('../expand/schema-validation.js');
  const { isDmError } = await import('../error.js');
  const findings: Finding[] = [];
  const invalid = new Set<string>();
  for (const version of scan.versions) {
    if (!version.schemaFile) continue;
    const path = `${version.dir}/${version.schemaFile}`;
    const where = { collection: version.collection, template: version.template, version: version.version };
    try {
      const content = await readFile(join(dir, path), 'utf8');
      for (const message of checkTemplateSchema({ name: version.schemaFile, path, content })) {
        findings.push({ code: 'SCHEMA_PYTHON_TYPE', severity: 'warning', path, message, ...where });
      }
    } catch (error) {
      invalid.add(version.dir);
      const message = isDmError(error) ? error.message : String(error);
      findings.push({ code: 'SCHEMA_INVALID', severity: 'error', path, message, ...where });
    }
  }
  return { findings, invalid };
}

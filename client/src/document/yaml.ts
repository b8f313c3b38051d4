/**
 * YAML in and out, in one place. YAML 1.2 core schema (so `y`, `n`, `on` stay strings, as
 * shared/conformance/README.md requires), bounded depth and alias expansion (untrusted input),
 * and errors as DmError naming the file and line.
 */
import {
  boolCoreTag,
  CORE_SCHEMA,
  defineScalarTag,
  dump,
  type load,
  loadAll,
  mergeTag,
  NOT_RESOLVED,
  Schema,
  YAMLException,
} from 'js-yaml';
import { DmError } from '../error.js';

export interface ParseYamlOptions {
  /** Where the text came from (a file path or a reference), used in error messages. */
  source?: string;
  /**
   * `core` (default): YAML 1.2 core schema. `pyyaml`: what Deployment Manager's PyYAML
   * `safe_load` resolves that the core schema does not — `yes`/`no`/`on`/`off` (any of PyYAML's
   * spellings, but not `y`/`n`) as booleans, and `<<` merge keys — for configurations and template
   * output, so DM templates mean what they meant under DM (docs/expansion.md).
   */
  dialect?: 'core' | 'pyyaml';
  /** Largest input accepted, in bytes. Default 16 MiB. */
  maxBytes?: number;
}

const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;

const PYYAML_TRUE = new Set(['yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const PYYAML_FALSE = new Set(['no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);
const pyyamlBoolTag = defineScalarTag<boolean>(boolCoreTag.tagName, {
  implicit: true,
  implicitFirstChars: ['y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O'],
  resolve: (source) => (PYYAML_TRUE.has(source) ? true : PYYAML_FALSE.has(source) ? false : NOT_RESOLVED),
  identify: (data) => typeof data === 'boolean',
  represent: (data) => (data ? 'true' : 'false'),
});
const PYYAML_SCHEMA = new Schema([
  ...CORE_SCHEMA.tags.filter((t) => t.tagName !== boolCoreTag.tagName),
  pyyamlBoolTag,
  mergeTag,
]);

function loadOptions(options: ParseYamlOptions): Parameters<typeof load>[1] {
  return {
    filename: options.source,
    maxDepth: MAX_DEPTH,
    ...(options.dialect === 'pyyaml' ? { schema: PYYAML_SCHEMA } : {}),
  } as Parameters<typeof load>[1];
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

/** Parses one YAML document; an empty text gives `null`. */
export function parseYaml(text: string, options: ParseYamlOptions = {}): unknown {
  checkSize(text, options);
  try {
    const docs = loadAll(text, loadOptions(options));
    if (docs.length > 1) {
      throw new DmError(
        'INVALID_YAML',
        `${options.source ?? 'input'}: expected one YAML document, found ${docs.length}`,
        { category: 'invalid-input' },
      );
    }
    return docs.length === 0 ? null : docs[0];
  } catch (error) {
    if (error instanceof DmError) throw error;
    throw yamlError(error, options);
  }
}

/** Parses a multi-document YAML stream. Empty documents are kept as `null`. */
export function parseYamlDocuments(text: string, options: ParseYamlOptions = {}): unknown[] {
  checkSize(text, options);
  try {
    return loadAll(text, loadOptions(options));
  } catch (error) {
    throw yamlError(error, options);
  }
}

/** Block-style YAML with keys in insertion order; `undefined` values are dropped. */
export function formatYaml(value: unknown): string {
  return dump(value, { noRefs: true, lineWidth: -1, skipInvalid: true } as Parameters<typeof dump>[1]);
}

/** A multi-document YAML stream, each document introduced by `---`. */
export function formatYamlDocuments(values: readonly unknown[]): string {
  return values.map((v) => `---\n${formatYaml(v)}`).join('');
}

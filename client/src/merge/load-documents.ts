/**
 * YAML in and out for merging, read by document/yaml.ts (the same schema and limits), but mappings
 * load as `Map`s so that key order (integer-like keys included), non-string keys and a key
 * `__proto__` survive exactly as cloud-init's Python dicts keep them
 * (docs/merging.md "`dm merge`", key order).
 */
import { resolve } from 'node:path';
import { DUMP_SCHEMA, dump, realMapTag } from 'js-yaml';
import { parseYamlDocuments } from '../document/yaml.js';
import { DmError } from '../error.js';
import { readTextFile } from '../input.js';
import { pythonTypeName } from './value.js';

const DUMP_MAP_SCHEMA = DUMP_SCHEMA.withTags(realMapTag);

export interface LoadedDocument {
  document: unknown;
  /** The file the document came from. */
  file: string;
  /** 1-based position of the document in its file. */
  position: number;
  /** `file`, or `file (document N)` when the file holds several documents. */
  source: string;
  /** User-data MIME headers (`Merge-Type`, `X-Merge-Type`); files have none. */
  headers?: Readonly<Record<string, string>>;
}

function invalid(source: string, reason: string, line?: number, column?: number): DmError {
  return new DmError(
    'INVALID_YAML',
    `${source}${line === undefined ? '' : `:${line}`}: invalid YAML: ${reason}`,
    {
      category: 'invalid-input',
      details: { source, ...(line === undefined ? {} : { line, column }) },
    },
  );
}

/** Refuses what PyYAML would refuse or what cannot be merged: non-scalar keys, recursive aliases. */
function checkDocument(value: unknown, source: string): void {
  const active = new Set<object>();
  const checked = new Set<object>();
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || checked.has(v)) return;
    if (active.has(v)) throw invalid(source, 'a recursive alias (a node that contains itself)');
    active.add(v);
    if (Array.isArray(v)) for (const item of v) walk(item);
    else if (v instanceof Map) {
      for (const [key, item] of v) {
        if (key !== null && typeof key === 'object') {
          throw invalid(source, `a mapping key is a ${pythonTypeName(key)}; keys must be scalars`);
        }
        walk(item);
      }
    }
    active.delete(v);
    checked.add(v);
  };
  walk(value);
}

/**
 * Parses a YAML stream into documents with Map mappings. A stream with no document at all (an
 * empty file, only comments such as `#cloud-config`) gives one null document, as cloud-init's
 * loader does.
 */
export function parseMergeDocuments(text: string, source: string): unknown[] {
  const documents = parseYamlDocuments(text, { source, mappings: 'maps' });
  if (documents.length === 0) return [null];
  for (const d of documents) checkDocument(d, source);
  return documents;
}

export interface LoadMergeFilesOptions {
  /** Directory relative paths are read from (default: the process's); messages keep the paths as given. */
  cwd?: string;
}

/** Reads files and splits them into documents, in order. */
export function loadMergeFiles(
  paths: readonly string[],
  options: LoadMergeFilesOptions = {},
): LoadedDocument[] {
  const out: LoadedDocument[] = [];
  for (const file of paths) {
    const text = readTextFile(options.cwd === undefined ? file : resolve(options.cwd, file), file);
    const documents = parseMergeDocuments(text, file);
    documents.forEach((document, i) => {
      const position = i + 1;
      out.push({
        document,
        file,
        position,
        source: documents.length > 1 ? `${file} (document ${position})` : file,
      });
    });
  }
  return out;
}

/** Block YAML of a merged document, keys in the engine's (Python's) order. */
export function formatMergedYaml(value: unknown): string {
  return dump(value, { schema: DUMP_MAP_SCHEMA, noRefs: true, lineWidth: -1 });
}

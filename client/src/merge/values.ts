/**
 * Values files (`-f/--values`, docs/merging.md "`dm merge`", `--as values`): merged like cloud-init's
 * `mergemanydict` over `cloud.cfg.d/*.cfg`: a later file has priority (the files are fed last
 * first), the default is `list()+dict()+str()` (deep merge of mappings; lists and strings are
 * not merged), a file's own `merge_how` says how it merges into the higher-priority result built
 * from the files after it, and any error stops the command.
 */

import { loadMergeFiles } from './load-documents.js';
import { type MergeSource, mergeManyDict } from './merge-documents.js';
import type { MergerSpec } from './merge-how.js';
import { toMergeValue, toPlainValue } from './value.js';

export interface MergeValuesOptions {
  /** The default specification (string form), as `--merge-how` gives it. */
  mergeHow?: string | readonly MergerSpec[];
  /** Names of the documents for messages, parallel to `documents`. */
  sources?: readonly string[];
}

/**
 * Merges values documents (plain data, as a YAML or JSON parser gives it, or Maps); later
 * documents win. Returns plain data; `{}` when there is nothing to merge.
 */
export function mergeValues(
  documents: readonly unknown[],
  options: MergeValuesOptions = {},
): Record<string, unknown> {
  const sources: MergeSource[] = documents.map((document, i) => ({
    document: toMergeValue(document),
    source: options.sources?.[i] ?? `values document ${i + 1}`,
  }));
  const merged = mergeManyDict(sources, { reverse: true, defaultMergeHow: options.mergeHow });
  return toPlainValue(merged) as Record<string, unknown>;
}

/**
 * Reads values files (each YAML document of a file is one source, in file order) and merges them
 * with mergeValues. Errors name the file (and the document, for multi-document files).
 */
export function mergeValuesFiles(
  paths: readonly string[],
  options: Omit<MergeValuesOptions, 'sources'> & { cwd?: string } = {},
): Record<string, unknown> {
  const loaded = loadMergeFiles(paths, options.cwd === undefined ? {} : { cwd: options.cwd });
  const merged = mergeManyDict(
    loaded.map((d) => ({ document: d.document, source: d.source })),
    { reverse: true, defaultMergeHow: options.mergeHow },
  );
  return toPlainValue(merged) as Record<string, unknown>;
}

/**
 * What `dm merge <file>… [--as user-data|values|raw] [--merge-how spec]` does (docs/merging.md "`dm merge`"), on documents already loaded: the CLI and the conformance
 * runner both call `mergeLoadedDocuments`.
 */
import { DmError } from '../error.js';
import { ignoredMergeOptions } from './build-merger.js';
import type { LoadedDocument } from './load-documents.js';
import {
  MERGEMANYDICT_DEFAULT_MERGE_HOW,
  mergeManyDict,
  mergeRaw,
  mergeUserData,
  parseDefaultMergeHow,
} from './merge-documents.js';
import type { MergeErrorKind } from './merge-error.js';

export type MergeMode = 'user-data' | 'values' | 'raw';
export const MERGE_MODES: readonly MergeMode[] = ['user-data', 'values', 'raw'];

export interface MergeFilesOptions {
  as?: MergeMode;
  /** `--merge-how`: the default for documents naming none; for `raw`, the specification. */
  mergeHow?: string;
}

export interface SkippedDocument {
  index: number;
  file: string;
  code: MergeErrorKind;
  message: string;
}

export interface MergeFilesResult {
  /** The merged document, in the engine's form (mappings are Maps). */
  result: unknown;
  /** user-data only: the documents that were skipped, with the error kind as `code`. */
  skipped: SkippedDocument[];
  /** Options of `--merge-how` no merger reads (ignored, as cloud-init ignores them), in words. */
  ignored: string[];
}

export function mergeLoadedDocuments(
  documents: readonly LoadedDocument[],
  options: MergeFilesOptions = {},
): MergeFilesResult {
  const mode = options.as ?? 'user-data';
  const defaultMergeHow =
    options.mergeHow === undefined ? undefined : parseDefaultMergeHow(options.mergeHow, '--merge-how');
  const ignored = ignoredMergeOptions(defaultMergeHow ?? []).map((said) => `--merge-how: ${said}`);
  if (mode === 'raw') {
    const files = [...new Set(documents.map((d) => d.file))];
    if (files.length !== 2) {
      throw new DmError('USAGE', `dm merge --as raw takes exactly two files; got ${files.length}`, {
        category: 'usage',
      });
    }
    if (documents.length !== 2) {
      const multi = documents.find((d) => d.position > 1);
      throw new DmError(
        'INVALID_DOCUMENT',
        `${multi?.file ?? 'a file'} holds several YAML documents; dm merge --as raw merges one document from each of two files`,
        { category: 'invalid-input' },
      );
    }
    return {
      result: mergeRaw(
        documents[0]!.document,
        documents[1]!.document,
        defaultMergeHow === undefined ? MERGEMANYDICT_DEFAULT_MERGE_HOW : options.mergeHow,
      ),
      skipped: [],
      ignored,
    };
  }
  const sources = documents.map((d) => ({ document: d.document, source: d.source, headers: d.headers }));
  if (mode === 'values') {
    return { result: mergeManyDict(sources, { reverse: true, defaultMergeHow }), skipped: [], ignored };
  }
  const { result, skipped } = mergeUserData(sources, { defaultMergeHow });
  return {
    result,
    skipped: skipped.map((s) => ({
      index: s.index,
      file: documents[s.index]!.file,
      code: s.code,
      message: s.message,
    })),
    ignored,
  };
}

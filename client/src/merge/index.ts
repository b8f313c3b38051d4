/**
 * cloud-init-style merge strategies (docs/merging.md): the mergers `dict`, `list`, `str`, their
 * specifications (`merge_how`, `merge_type`, `Merge-Type` headers), and the user-data,
 * mergemanydict (values files) and raw entry points. Engine values use Maps for mappings
 * (value.ts); `mergeValues`/`mergeValuesFiles` take and give plain data.
 */
export { buildMerger } from './build-merger.js';
export { commandProperties } from './command-properties.js';
export {
  formatMergedYaml,
  type LoadedDocument,
  loadMergeFiles,
  parseMergeDocuments,
} from './load-documents.js';
export {
  MERGEMANYDICT_DEFAULT_MERGE_HOW,
  type MergeManyOptions,
  type MergeOptions,
  type MergeSource,
  mergeManyDict,
  mergeRaw,
  mergeUserData,
  parseDefaultMergeHow,
  type SkippedPart,
  USER_DATA_DEFAULT_MERGE_HOW,
  type UserDataResult,
} from './merge-documents.js';
export { MERGE_ERROR_KINDS, type MergeErrorKind } from './merge-error.js';
export {
  MERGE_MODES,
  type MergeFilesOptions,
  type MergeFilesResult,
  type MergeMode,
  mergeLoadedDocuments,
  type SkippedDocument,
} from './merge-files.js';
export {
  extractMergeHow,
  type MergerSpec,
  parseMergeHow,
  parseMergeHowList,
  parseMergeHowString,
} from './merge-how.js';
export {
  dictMerger,
  listMerger,
  MERGERS,
  type MergeFunction,
  type MergerDefinition,
  strMerger,
} from './mergers.js';
export { type MergeKey, type MergeMap, toMergeValue, toPlainValue } from './value.js';
export { type MergeValuesOptions, mergeValues, mergeValuesFiles } from './values.js';

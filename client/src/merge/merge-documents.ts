/**
 * The three ways cloud-init merges, as dm's entry points (docs/merging.md "`dm merge`"):
 * `mergeUserData` (the user-data handler: `dm merge`), `mergeManyDict` (`util.mergemanydict`:
 * values files) and `mergeRaw` (one merge with a given specification). They work on the engine's
 * form (value.ts: mappings are Maps); mergeValues (values.ts) wraps plain data.
 */
import { DmError } from '../error.js';
import { buildMerger } from './build-merger.js';
import { type MergeErrorKind, MergeFailure, mergeFailure, toMergeDmError } from './merge-error.js';
import { extractMergeHow, type MergerSpec, parseMergeHow, parseMergeHowString } from './merge-how.js';
import { isTruthy, type MergeMap, pythonTypeName } from './value.js';

/** cloud-init's user-data default: the later part wins at the top level, no deep merge. */
export const USER_DATA_DEFAULT_MERGE_HOW = 'dict(replace)+list()+str()';
/** cloud-init's `DEF_MERGE_TYPE`, mergemanydict's default: deep merge, existing values kept. */
export const MERGEMANYDICT_DEFAULT_MERGE_HOW = 'list()+dict()+str()';

export interface MergeSource {
  document: unknown;
  /** Names the document in messages, e.g. `b.yaml (document 2)`. */
  source?: string;
  /** User-data MIME headers: `Merge-Type`, else `X-Merge-Type` (names are case-sensitive). */
  headers?: Readonly<Record<string, string>>;
}

export interface SkippedPart {
  /** Position of the document among all documents merged, from 0. */
  index: number;
  /** cloud-init's exception class (docs/merging.md "`dm merge`"). */
  code: MergeErrorKind;
  message: string;
}

export interface UserDataResult {
  result: MergeMap;
  skipped: SkippedPart[];
}

export interface MergeOptions {
  /**
   * The specification used by documents that name none (string or list form); defaults to the
   * caller's cloud-init default. Check a user-given one first with `parseDefaultMergeHow`.
   */
  defaultMergeHow?: string | readonly MergerSpec[];
}

export interface MergeManyOptions extends MergeOptions {
  /** Process the sources last first, so that later sources have priority (mergemanydict's `reverse`). */
  reverse?: boolean;
}

function defaultSpecs(
  value: string | readonly MergerSpec[] | undefined,
  fallback: string,
): readonly MergerSpec[] {
  if (value === undefined) return parseMergeHowString(fallback);
  return typeof value === 'string' ? parseMergeHowString(value) : value;
}

/** Runs engine code, turning engine failures into DmErrors and stack exhaustion into a limit error. */
function guarded<T>(run: () => T, source?: string): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof MergeFailure) throw toMergeDmError(error, { source });
    if (error instanceof RangeError) {
      throw new DmError(
        'DOCUMENT_TOO_DEEP',
        `${source ?? 'a document'} is nested too deeply (or refers to itself) to merge`,
        {
          category: 'limit',
        },
      );
    }
    throw error;
  }
}

/**
 * Parses and checks a specification given by the user as the default (`--merge-how`): string
 * form; a bad one is a usage error whose code is the error kind. A specification naming no
 * mergers (`''`) gives `undefined`: the caller's default stays.
 */
export function parseDefaultMergeHow(text: string, label = '--merge-how'): MergerSpec[] | undefined {
  try {
    const specs = parseMergeHowString(text);
    if (specs.length === 0) return undefined;
    buildMerger(specs);
    return specs;
  } catch (error) {
    if (!(error instanceof MergeFailure)) throw error;
    throw new DmError(error.kind, `${label} '${text}': ${error.reason}`, {
      category: 'usage',
      details: { kind: error.kind },
      hint: 'the form is name(option,…)+…, e.g. list(append)+dict(no_replace,recurse_list)+str()',
    });
  }
}

function headerMergeHow(headers: Readonly<Record<string, string>> | undefined): string {
  if (headers === undefined) return '';
  for (const name of ['Merge-Type', 'X-Merge-Type']) {
    const value = Object.hasOwn(headers, name) ? headers[name] : undefined;
    if (typeof value === 'string' && value !== '') return value;
  }
  return '';
}

/**
 * cloud-init's user-data handler (§1, §7, §8): starting from `{}`, each part is merged by its own
 * `merge_how`/`merge_type` and headers (body mergers first), or by the default
 * `dict(replace)+list()+str()`. A part that is empty or not a mapping, or whose merge fails, is
 * skipped and reported; the other parts still merge. Nothing carries over between parts.
 */
export function mergeUserData(parts: readonly MergeSource[], options: MergeOptions = {}): UserDataResult {
  const fallback = defaultSpecs(options.defaultMergeHow, USER_DATA_DEFAULT_MERGE_HOW);
  let result: MergeMap = new Map();
  const skipped: SkippedPart[] = [];
  parts.forEach((part, index) => {
    try {
      result = guarded(() => {
        const header = headerMergeHow(part.headers);
        const document = part.document;
        if (!(document instanceof Map)) {
          throw mergeFailure(
            'ValueError',
            document === null || document === undefined
              ? 'empty cloud config: the document is empty'
              : `empty cloud config: the document is a ${pythonTypeName(document)}, not a mapping`,
          );
        }
        const { specs, body } = extractMergeHow(document as MergeMap);
        const all = [...specs, ...parseMergeHowString(header)];
        return buildMerger(all.length > 0 ? all : fallback)(result, body) as MergeMap;
      }, part.source);
    } catch (error) {
      if (!(error instanceof DmError) || !isMergeKind(error.code)) throw error;
      skipped.push({ index, code: error.code, message: error.message });
    }
  });
  return { result, skipped };
}

function isMergeKind(code: string): code is MergeErrorKind {
  return ['ValueError', 'ImportError', 'KeyError', 'TypeError', 'IndexError', 'AttributeError'].includes(
    code,
  );
}

/**
 * cloud-init's `util.mergemanydict` (§1): each truthy source, in order (last first with
 * `reverse`), merges into the result by its own `merge_how`/`merge_type` or by the default
 * `list()+dict()+str()`, so by default earlier sources win. Empty sources (null, `{}`, `[]`, `''`,
 * `0`, `false`) are skipped; any error propagates as a DmError whose code is the error kind.
 */
export function mergeManyDict(sources: readonly MergeSource[], options: MergeManyOptions = {}): MergeMap {
  const fallback = defaultSpecs(options.defaultMergeHow, MERGEMANYDICT_DEFAULT_MERGE_HOW);
  const ordered = options.reverse ? [...sources].reverse() : sources;
  let result: MergeMap = new Map();
  for (const source of ordered) {
    const document = source.document;
    if (!isTruthy(document)) continue;
    result = guarded(() => {
      if (!(document instanceof Map)) {
        // cloud-init calls config.pop('merge_how', None) on it.
        throw mergeFailure(
          Array.isArray(document) ? 'TypeError' : 'AttributeError',
          `the document is a ${pythonTypeName(document)}, not a mapping`,
        );
      }
      const { specs, body } = extractMergeHow(document as MergeMap);
      return buildMerger(specs.length > 0 ? specs : fallback)(result, body) as MergeMap;
    }, source.source);
  }
  return result;
}

/**
 * One merge, `merge(existing, incoming)`, with a specification in string or list form (default
 * `list()+dict()+str()`); no `merge_how` is read from the values. Errors propagate.
 */
export function mergeRaw(
  existing: unknown,
  incoming: unknown,
  mergeHow: unknown = MERGEMANYDICT_DEFAULT_MERGE_HOW,
): unknown {
  return guarded(() => buildMerger(parseMergeHow(mergeHow))(existing, incoming));
}

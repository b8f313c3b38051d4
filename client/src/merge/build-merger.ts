/**
 * Building a merge function from a specification (cloud-init's `mergers.construct` and its
 * `LookupMerger`, docs/merging.md "Specifications"): every name resolves to a registered merger (names
 * get an `m_` prefix unless they have one; unknown names are an ImportError, checked for all
 * names before any settings are read); the root merge dispatches on the type of the existing
 * value to the first merger listed for that type, and returns the existing value unchanged when
 * there is none (numbers, booleans, null, and types no listed merger handles).
 */
import { nearest } from '../nearest.js';
import { mergeFailure } from './merge-error.js';
import type { MergerSpec } from './merge-how.js';
import { MERGERS, type MergeFunction, type MergerDefinition, mergerOptions } from './mergers.js';
import { pythonTypeName } from './value.js';

/**
 * The options of a specification that no merger reads, in words (`'apend' is not an option of
 * list() (did you mean 'append'?)`): cloud-init ignores them, so the merge goes on without them;
 * `dm merge --merge-how` warns, because a typo there silently changes the result.
 */
export function ignoredMergeOptions(specs: readonly MergerSpec[]): string[] {
  const said: string[] = [];
  for (const spec of specs) {
    if (typeof spec.name !== 'string' || !Array.isArray(spec.options)) continue;
    const definition = MERGERS.get(spec.name.startsWith('m_') ? spec.name : `m_${spec.name}`);
    if (!definition) continue;
    for (const option of spec.options) {
      if (typeof option !== 'string' || definition.options.includes(option)) continue;
      const near = nearest(option, definition.options);
      said.push(
        `'${option}' is not an option of ${definition.handles}() (${near ? `did you mean '${near}'?` : `it reads ${definition.options.join(', ')}`}); ignored, as cloud-init ignores it`,
      );
    }
  }
  return said;
}

export function buildMerger(specs: readonly MergerSpec[]): MergeFunction {
  const resolved: [MergerDefinition, unknown][] = [];
  for (const spec of specs) {
    if (typeof spec.name !== 'string') {
      throw mergeFailure('AttributeError', `a merger name is a ${pythonTypeName(spec.name)}, not a string`);
    }
    const moduleName = spec.name.startsWith('m_') ? spec.name : `m_${spec.name}`;
    const definition = MERGERS.get(moduleName);
    if (definition === undefined) {
      throw mergeFailure('ImportError', `unknown merger '${spec.name}' (known: dict, list, str)`);
    }
    resolved.push([definition, spec.options]);
  }
  let onDict: MergeFunction | undefined;
  let onList: MergeFunction | undefined;
  let onStr: MergeFunction | undefined;
  const root: MergeFunction = (existing, incoming) => {
    if (existing instanceof Map) return onDict === undefined ? existing : onDict(existing, incoming);
    if (Array.isArray(existing)) return onList === undefined ? existing : onList(existing, incoming);
    if (typeof existing === 'string') return onStr === undefined ? existing : onStr(existing, incoming);
    return existing;
  };
  for (const [definition, settings] of resolved) {
    const merge = definition.create(mergerOptions(settings), root);
    if (definition.handles === 'dict') onDict ??= merge;
    else if (definition.handles === 'list') onList ??= merge;
    else onStr ??= merge;
  }
  return root;
}

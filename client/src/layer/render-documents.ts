/**
 * Deckhand-style rendering, docs/layering.md "How rendering works": pre-validation, the LayeringPolicy,
 * layer checks (§4), parent selection (§5), replacement (§6), the substitution source map (§7),
 * one dependency graph with cycle detection (§8), rendering in dependency order (§9, §11, §12)
 * and the output (§13). Pure: documents in, rendered documents out, DmError on failure.
 *
 * Everything that could depend on input order runs over documents sorted by (schema, layer, name),
 * so the output and the reported error are the same for every order of the input (the one
 * exception, as in Deckhand: the first LayeringPolicy in input order is the one used).
 */
import { DmError, isDmError } from '../error.js';
import { applyAction } from './actions.js';
import { cloneData, getOwn, isMapping, type Mapping, setOwn } from './data.js';
import { describeDocument, documentDetails, type LayeredDocument, readDocument } from './document.js';
import { layeringError } from './errors.js';
import { prevalidateDocuments } from './prevalidate.js';
import { applySubstitution, sourceKey, substitutionSourceKey } from './substitute.js';

export interface RenderWarning {
  code: string;
  message: string;
}

export interface RenderOptions {
  /** Pre-validation (§3); off by default, as in Deckhand's engine. */
  validate?: boolean;
  /** Lenient substitution (`fail_on_missing_sub_src: false`, §12.2). */
  lenientSubstitution?: boolean;
  /**
   * Encryption sources (§14): Barbican reference → payload. When given, a substitution from a
   * document with `storagePolicy: encrypted` reads its value through this map (a missing reference
   * is EncryptionSourceNotFound). When absent, encrypted documents are read as cleartext.
   */
  encryptionSources?: ReadonlyMap<string, unknown> | Readonly<Record<string, unknown>>;
  /** Where each input document came from (parallel to the input), used in messages. */
  sources?: readonly (string | undefined)[];
  /** Receives what Deckhand only logs (several policies, a lenient skip, …). */
  onWarning?: (warning: RenderWarning) => void;
}

/** A rendered document: the input document with its `data` rendered, metadata unchanged. */
export type RenderedDocument = Record<string, unknown>;

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorted order of raw keys (schema, layer, name), then input position: one string compare each. */
function compareRaw(a: LayeredDocument, b: LayeredDocument): number {
  return compareText(a.rawKey, b.rawKey) || a.index - b.index;
}

/**
 * A label value as a Map key. Values compare as Python does for the usual scalars
 * (`1 == 1.0 == True`, `'1' != 1`): strings stay strings, booleans become numbers.
 */
type LabelValueKey = string | number | null;

function labelValueKey(value: unknown): LabelValueKey {
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === null || value === undefined) return null;
  try {
    return `\u0000${JSON.stringify(value)}`;
  } catch {
    return '\u0000?';
  }
}

interface Graph {
  parent: Map<LayeredDocument, LayeredDocument>;
  replacedBy: Map<LayeredDocument, LayeredDocument>;
}

function readPolicy(
  docs: readonly LayeredDocument[],
  warn: (code: string, message: string) => void,
): string[] {
  const policies = docs.filter((d) => d.schema.startsWith('deckhand/LayeringPolicy'));
  const policy = policies[0];
  if (policy === undefined) {
    throw layeringError(
      'LayeringPolicyNotFound',
      'no LayeringPolicy document (schema deckhand/LayeringPolicy/v1) is among the documents to render',
      {},
      'add a deckhand/LayeringPolicy/v1 document whose data.layerOrder lists the layers, top first',
    );
  }
  if (policies.length > 1) {
    warn(
      'MultipleLayeringPolicies',
      `${policies.length} LayeringPolicy documents found; using the first, ${describeDocument(policy)}`,
    );
  }
  const order = isMapping(policy.data) ? getOwn(policy.data, 'layerOrder') : undefined;
  if (!Array.isArray(order) || order.some((l) => typeof l !== 'string')) {
    throw layeringError(
      'InvalidDocumentFormat',
      `${describeDocument(policy)}: data.layerOrder must be a list of layer names`,
      documentDetails(policy),
    );
  }
  return order as string[];
}

/** §5: parents chosen through an index of (label, value) → candidate documents, never a full scan. */
function selectParents(
  docs: readonly LayeredDocument[],
  layerIndex: ReadonlyMap<string, number>,
): Map<LayeredDocument, LayeredDocument> {
  // label key → label value → documents carrying that pair, in sorted order.
  const byLabel = new Map<string, Map<LabelValueKey, LayeredDocument[]>>();
  for (const d of docs) {
    if (d.layer === '') continue;
    for (const key of Object.keys(d.labels)) {
      let values = byLabel.get(key);
      if (values === undefined) {
        values = new Map();
        byLabel.set(key, values);
      }
      const v = labelValueKey(d.labels[key]);
      const list = values.get(v);
      if (list) list.push(d);
      else values.set(v, [d]);
    }
  }
  const parent = new Map<LayeredDocument, LayeredDocument>();
  for (const child of docs) {
    const keys = Object.keys(child.selector);
    if (keys.length === 0) continue;
    const pairs = keys.map((k) => [k, labelValueKey(child.selector[k])] as const);
    // Candidates: the documents carrying the selector's rarest pair.
    let candidates: LayeredDocument[] | undefined;
    for (const [key, v] of pairs) {
      const list = byLabel.get(key)?.get(v);
      if (list === undefined) {
        candidates = [];
        break;
      }
      if (candidates === undefined || list.length < candidates.length) candidates = list;
    }
    const matches = (candidates ?? []).filter(
      (p) =>
        p !== child &&
        pairs.every(([key, v]) => Object.hasOwn(p.labels, key) && labelValueKey(p.labels[key]) === v),
    );
    if (matches.length === 0) continue;
    const what = describeDocument(child);
    const childIndex = layerIndex.get(child.layer);
    if (childIndex === undefined) {
      throw layeringError(
        'InvalidDocumentFormat',
        `${what} has a parentSelector but no layer, and ${describeDocument(matches[0] as LayeredDocument)} matches it`,
        documentDetails(child),
      );
    }
    for (const p of matches) {
      if (p.schema !== child.schema) {
        throw layeringError(
          'InvalidDocumentParent',
          `${what} selects ${describeDocument(p)} as a parent, but their schemas differ`,
          { ...documentDetails(child), parent: documentDetails(p) },
        );
      }
      if ((layerIndex.get(p.layer) ?? 0) >= childIndex) {
        throw layeringError(
          'InvalidDocumentParent',
          `${what} selects ${describeDocument(p)} as a parent, but the child layer must be lower than the parent layer`,
          { ...documentDetails(child), parent: documentDetails(p) },
        );
      }
    }
    const byLayer = new Map<string, LayeredDocument>();
    let best: LayeredDocument | undefined;
    for (const p of matches) {
      const other = byLayer.get(p.layer);
      if (other !== undefined) {
        throw layeringError(
          'IndeterminateDocumentParent',
          `${what} has more than one parent candidate in layer '${p.layer}': ${describeDocument(other)} and ${describeDocument(p)}`,
          { ...documentDetails(child), candidates: [documentDetails(other), documentDetails(p)] },
          'make the parentSelector match one document per layer',
        );
      }
      byLayer.set(p.layer, p);
      if (best === undefined || (layerIndex.get(p.layer) ?? 0) > (layerIndex.get(best.layer) ?? 0)) best = p;
    }
    if (best) parent.set(child, best);
  }
  return parent;
}

/** §6: replacement rules (with the recommendations of quirk Q9); returns parent → replacement. */
function checkReplacements(
  docs: readonly LayeredDocument[],
  parent: ReadonlyMap<LayeredDocument, LayeredDocument>,
): Map<LayeredDocument, LayeredDocument> {
  const replacedBy = new Map<LayeredDocument, LayeredDocument>();
  const fail = (doc: LayeredDocument, message: string, extra: Record<string, unknown> = {}): never => {
    throw layeringError('InvalidDocumentReplacement', `${describeDocument(doc)}: ${message}`, {
      ...documentDetails(doc),
      ...extra,
    });
  };
  for (const d of docs) {
    if (d.control) continue;
    const p = parent.get(d);
    if (d.replacement) {
      if (p === undefined) fail(d, 'a document with replacement: true must have a parent');
      const pp = p as LayeredDocument;
      if (pp.schema !== d.schema || pp.name !== d.name) {
        fail(d, `a replacement must have the same schema and name as its parent ${describeDocument(pp)}`, {
          parent: documentDetails(pp),
        });
      }
      const other = replacedBy.get(pp);
      if (other !== undefined) {
        fail(d, `${describeDocument(other)} already replaces the same parent ${describeDocument(pp)}`, {
          parent: documentDetails(pp),
        });
      }
      replacedBy.set(pp, d);
    } else if (p !== undefined && p.schema === d.schema && p.name === d.name) {
      fail(d, `a document that is not a replacement cannot have the same schema and name as its parent`, {
        parent: documentDetails(p),
      });
    }
  }
  const seen = new Map<string, LayeredDocument>();
  for (const d of docs) {
    if (d.control || d.replacement) continue;
    const key = sourceKey(d.schema, d.name);
    const other = seen.get(key);
    if (other !== undefined) {
      fail(d, `${describeDocument(other)} has the same schema and name, and neither has replacement: true`, {
        other: documentDetails(other),
      });
    }
    seen.set(key, d);
  }
  for (const [p, r] of replacedBy) {
    if (p.replacement) {
      fail(p, `a replacement document cannot itself be replaced (by ${describeDocument(r)})`, {
        replacement: documentDetails(r),
      });
    }
  }
  return replacedBy;
}

/** §7: (schema, name) → the document substitutions read; a replacement stands for its parent. */
function buildSources(docs: readonly LayeredDocument[], graph: Graph): Map<string, LayeredDocument> {
  const sources = new Map<string, LayeredDocument>();
  for (const d of docs) {
    if (d.abstract) continue;
    const key = sourceKey(d.schema, d.name);
    const target = graph.replacedBy.get(d) ?? d;
    if (d.replacement || !sources.has(key)) sources.set(key, target);
  }
  return sources;
}

/** §8: dependencies first, by depth-first search over documents in sorted order. */
function renderOrder(
  docs: readonly LayeredDocument[],
  graph: Graph,
  sources: ReadonlyMap<string, LayeredDocument>,
): LayeredDocument[] {
  const deps = (d: LayeredDocument): LayeredDocument[] => {
    const out: LayeredDocument[] = [];
    const p = graph.parent.get(d);
    if (p !== undefined) {
      const r = graph.replacedBy.get(p);
      out.push(r !== undefined && r !== d ? r : p);
    }
    for (const sub of d.substitutions) {
      const key = substitutionSourceKey(sub);
      const src = key === undefined ? undefined : sources.get(key);
      if (src !== undefined) out.push(src);
    }
    return out;
  };
  const state = new Map<LayeredDocument, 1 | 2>();
  const order: LayeredDocument[] = [];
  for (const start of docs) {
    if (state.has(start)) continue;
    const stack: { doc: LayeredDocument; deps: LayeredDocument[]; next: number }[] = [
      { doc: start, deps: deps(start), next: 0 },
    ];
    state.set(start, 1);
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as { doc: LayeredDocument; deps: LayeredDocument[]; next: number };
      const dep = top.deps[top.next++];
      if (dep === undefined) {
        state.set(top.doc, 2);
        order.push(top.doc);
        stack.pop();
        continue;
      }
      const s = state.get(dep);
      if (s === 2) continue;
      if (s === 1) {
        const from = stack.findIndex((f) => f.doc === dep);
        const cycle = [...stack.slice(from).map((f) => f.doc), dep];
        throw layeringError(
          'SubstitutionDependencyCycle',
          `documents depend on each other in a cycle: ${cycle.map((d) => describeDocument(d)).join(' -> ')}`,
          { cycle: cycle.map((d) => documentDetails(d)) },
        );
      }
      state.set(dep, 1);
      stack.push({ doc: dep, deps: deps(dep), next: 0 });
    }
  }
  return order;
}

function outputDocument(doc: LayeredDocument, data: unknown): RenderedDocument {
  const out: Mapping = {};
  for (const key of Object.keys(doc.raw)) setOwn(out, key, key === 'data' ? data : cloneData(doc.raw[key]));
  if (!Object.hasOwn(out, 'data')) out.data = data;
  return out;
}

/** Output order: (schema, name, layer), then input position. */
function sortForOutput(docs: LayeredDocument[]): LayeredDocument[] {
  const keyed = docs.map((d) => ({ d, key: `${d.schema}\u0000${d.name}\u0000${d.layer}` }));
  keyed.sort((a, b) => compareText(a.key, b.key) || a.d.index - b.d.index);
  return keyed.map((k) => k.d);
}

function render(documents: readonly unknown[], options: RenderOptions): RenderedDocument[] {
  const warn = (code: string, message: string): void => options.onWarning?.({ code, message });
  if (!Array.isArray(documents)) {
    throw layeringError('InvalidDocumentFormat', 'the documents to render must be a list');
  }
  if (options.validate) prevalidateDocuments(documents, options.sources);
  const all = documents.map((d, i) => readDocument(d, i, options.sources?.[i]));
  documents.forEach((d, i) => {
    // Legal (passed through as it is), but usually a mistake: say so (docs/layering.md "Command line").
    if (!Object.hasOwn(d as object, 'metadata')) {
      warn(
        'MissingMetadata',
        `${options.sources?.[i] ?? `document #${i + 1}`} has no metadata, so it takes no part in layering (printed as it is)`,
      );
    }
  });
  const layerOrder = readPolicy(all, warn);
  const layerIndex = new Map<string, number>();
  layerOrder.forEach((l, i) => {
    if (!layerIndex.has(l)) layerIndex.set(l, i);
  });
  const sorted = [...all].sort(compareRaw);
  for (const d of sorted) {
    if (d.layer !== '' && !layerIndex.has(d.layer)) {
      throw layeringError(
        'InvalidDocumentLayer',
        `${describeDocument(d)}: layer '${d.layer}' is not in the LayeringPolicy's layerOrder [${layerOrder.join(', ')}]`,
        { ...documentDetails(d), layerOrder },
      );
    }
  }
  const docs: LayeredDocument[] = [];
  let previous: LayeredDocument | undefined;
  for (const d of sorted) {
    if (previous && previous.rawKey === d.rawKey) {
      if (d.control) continue;
      throw layeringError(
        'InvalidDocumentFormat',
        `${describeDocument(d)} is a duplicate: another document has the same schema, layer and name`,
        { ...documentDetails(d), other: documentDetails(previous) },
      );
    }
    docs.push(d);
    previous = d;
  }
  const parent = selectParents(docs, layerIndex);
  const replacedBy = checkReplacements(docs, parent);
  const graph = { parent, replacedBy };
  const sources = buildSources(docs, graph);
  const order = renderOrder(docs, graph, sources);

  const current = new Map<LayeredDocument, unknown>();
  const enc = options.encryptionSources;
  const ctx = {
    sources,
    current,
    lenient: options.lenientSubstitution === true,
    encryptionSources:
      enc === undefined
        ? undefined
        : enc instanceof Map
          ? enc
          : new Map(Object.entries(enc as Record<string, unknown>)),
    warn,
  };
  for (const d of order) {
    if (d.control) {
      current.set(d, d.data);
      continue;
    }
    const p = parent.get(d);
    let data: unknown;
    if (p !== undefined && d.actions.length > 0) {
      let acc: unknown = cloneData(current.get(p) ?? null);
      for (const action of d.actions) acc = applyAction(action, d, p, d.data, acc);
      data = acc;
    } else {
      if (p === undefined && Object.keys(d.selector).length > 0) {
        warn('NoParentFound', `${describeDocument(d)}: no document matches its parentSelector`);
      }
      data = cloneData(d.data);
    }
    for (const sub of d.substitutions) data = applySubstitution(sub, d, data, ctx);
    current.set(d, data);
    if (d.replacement && p !== undefined) current.set(p, data);
  }

  return sortForOutput(docs.filter((d) => d.control || (!d.abstract && !replacedBy.has(d)))).map((d) =>
    outputDocument(d, d.control ? cloneData(d.data) : current.get(d)),
  );
}

/**
 * Renders Deckhand documents (docs/layering.md). Returns every document that is neither abstract
 * nor replaced, control documents unchanged, sorted by (schema, name, layer). Throws DmError
 * whose `code` is the Deckhand error kind (§15).
 */
export function renderDocuments(
  documents: readonly unknown[],
  options: RenderOptions = {},
): RenderedDocument[] {
  try {
    return render(documents, options);
  } catch (error) {
    if (isDmError(error)) throw error;
    if (error instanceof RangeError) {
      throw layeringError(
        'InvalidDocumentFormat',
        `documents are too large or too deeply nested: ${error.message}`,
      );
    }
    throw new DmError(
      'INTERNAL',
      `internal error while rendering: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
}

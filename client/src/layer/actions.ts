/**
 * Layering actions, docs/layering.md "How rendering works", layering actions: merge, replace and delete of the child's raw data onto
 * the accumulated parent data, at a path of §10.
 */
import { cloneData, deepMerge, getOwn, isMapping } from './data.js';
import { describeDocument, documentDetails, type LayeredDocument } from './document.js';
import { layeringError } from './errors.js';
import { deletePath, normalizeActionPath, parsePath, readPath, writePath } from './path.js';

const METHODS = new Set(['merge', 'replace', 'delete']);

/**
 * Applies one action; `raw` is the child's data as given, `acc` the accumulated data (owned by the
 * caller, changed in place where possible). Returns the new accumulated data.
 */
export function applyAction(
  action: unknown,
  child: LayeredDocument,
  parent: LayeredDocument,
  raw: unknown,
  acc: unknown,
): unknown {
  const doc = (): string => describeDocument(child);
  if (!isMapping(action)) {
    throw layeringError('InvalidDocumentFormat', `${doc()}: every layering action must be a mapping`, {
      ...documentDetails(child),
    });
  }
  const method = getOwn(action, 'method');
  if (typeof method !== 'string' || !METHODS.has(method)) {
    throw layeringError(
      'UnsupportedActionMethod',
      `${doc()}: layering action method ${JSON.stringify(method ?? null)} is not one of merge, replace, delete`,
      { ...documentDetails(child), method },
    );
  }
  const rawPath = getOwn(action, 'path');
  if (typeof rawPath !== 'string') {
    throw layeringError('InvalidDocumentFormat', `${doc()}: layering action ${method} has no string path`, {
      ...documentDetails(child),
    });
  }
  const steps = parsePath(normalizeActionPath(rawPath));
  if (typeof steps === 'string') {
    throw layeringError('InvalidDocumentFormat', `${doc()}: layering action ${method}: ${steps}`, {
      ...documentDetails(child),
      path: rawPath,
    });
  }
  const missing = (side: string): never => {
    throw layeringError(
      'MissingDocumentKey',
      `${doc()}: ${method} path '${rawPath}' is missing (or null) in ${side}`,
      { ...documentDetails(child), path: rawPath, method, parent: documentDetails(parent) },
    );
  };
  const write = (value: unknown): unknown => {
    const result = writePath(acc, steps, value);
    if (!result.ok) {
      throw layeringError(
        'InvalidDocumentFormat',
        `${doc()}: ${method} path '${rawPath}' cannot be written into the parent's data: ${result.reason}`,
        { ...documentDetails(child), path: rawPath, method },
      );
    }
    return result.data;
  };

  if (method === 'delete') {
    if (steps.length === 0) return {};
    const target = readPath(acc, steps);
    if (!target.found || target.value === null) {
      missing(`the data inherited from ${describeDocument(parent)}`);
    }
    deletePath(acc, steps);
    return acc;
  }
  const fromChild = readPath(raw, steps);
  if (!fromChild.found || fromChild.value === null) missing("the child's own data");
  if (method === 'replace') return write(cloneData(fromChild.value));
  const fromParent = readPath(acc, steps);
  if (isMapping(fromParent.value) && isMapping(fromChild.value)) {
    return write(deepMerge(fromParent.value, fromChild.value));
  }
  return write(cloneData(fromChild.value));
}

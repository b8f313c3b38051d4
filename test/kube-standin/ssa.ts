/**
 * Server-side apply field ownership for the stand-in, simplified from structured-merge-diff: a field
 * set is the set of leaf paths of what a manager wrote (maps recurse, lists are atomic). An apply
 * conflicts on a field whose value it changes while another manager owns it; `force` takes the field
 * over; fields the applier owned before and no longer sends are removed unless someone else owns them.
 */

export type Json = Record<string, unknown>;
export type Path = readonly string[];

export interface ManagerEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  /** Leaf paths, each JSON-encoded. */
  fields: Set<string>;
}

export interface Conflict {
  manager: string;
  apiVersion: string;
  field: Path;
}

export function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const IGNORED_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'managedFields',
  'selfLink',
]);

/** Leaf paths of an object as a manager's field set (identity fields and status excluded). */
export function leafPaths(body: Json): Path[] {
  const out: Path[] = [];
  const walk = (value: unknown, path: string[]) => {
    if (isObject(value) && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) {
        if (path.length === 0 && (k === 'apiVersion' || k === 'kind' || k === 'status')) continue;
        if (path.length === 1 && path[0] === 'metadata' && IGNORED_METADATA.has(k)) continue;
        walk(v, [...path, k]);
      }
    } else if (path.length > 0) {
      out.push(path);
    }
  };
  walk(body, []);
  return out;
}

export function getPath(body: unknown, path: Path): unknown {
  let node = body;
  for (const part of path) {
    if (!isObject(node)) return undefined;
    node = node[part];
  }
  return node;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

function related(a: Path, b: Path): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

const key = (p: Path) => JSON.stringify(p);
const unkey = (k: string) => JSON.parse(k) as string[];

/** `.data.key` as Kubernetes prints field paths in conflicts. */
export function formatField(path: Path): string {
  return path.map((p) => `.${p}`).join('');
}

/** Conflicts an apply by `manager` with `body` has against the live object's other managers. */
export function findConflicts(
  live: Json | undefined,
  body: Json,
  manager: string,
  entries: ManagerEntry[],
): Conflict[] {
  if (!live) return [];
  const conflicts: Conflict[] = [];
  for (const path of leafPaths(body)) {
    if (deepEqual(getPath(live, path), getPath(body, path))) continue;
    for (const entry of entries) {
      if (entry.manager === manager && entry.operation === 'Apply') continue;
      for (const owned of entry.fields) {
        if (related(unkey(owned), path)) {
          conflicts.push({ manager: entry.manager, apiVersion: entry.apiVersion, field: path });
          break;
        }
      }
    }
  }
  return conflicts;
}

function removePath(target: Json, path: Path): void {
  const parents: Json[] = [target];
  let node: unknown = target;
  for (const part of path.slice(0, -1)) {
    if (!isObject(node)) return;
    node = node[part];
    if (!isObject(node)) return;
    parents.push(node);
  }
  const last = path[path.length - 1]!;
  delete (node as Json)[last];
  // Drop maps the removal emptied (as SSA does for fields nobody owns any more).
  for (let i = parents.length - 1; i > 0; i--) {
    if (Object.keys(parents[i]!).length === 0) delete parents[i - 1]![path[i - 1]!];
    else break;
  }
}

function mergeInto(target: Json, patch: Json): void {
  for (const [k, v] of Object.entries(patch)) {
    if (isObject(v) && isObject(target[k]) && Object.keys(v).length > 0) mergeInto(target[k] as Json, v);
    else target[k] = structuredClone(v);
  }
}

export interface ApplyResult {
  object: Json;
  entries: ManagerEntry[];
}

/**
 * Applies `body` as `manager` onto `live` (undefined when creating). Callers check conflicts first;
 * with force, the conflicting fields move to the applier.
 */
export function applyFields(
  live: Json | undefined,
  body: Json,
  manager: string,
  apiVersion: string,
  entries: ManagerEntry[],
  time: string,
): ApplyResult {
  const object: Json = live ? structuredClone(live) : {};
  const newFields = new Set(leafPaths(body).map(key));
  const previous = entries.find((e) => e.manager === manager && e.operation === 'Apply');
  const others = entries
    .filter((e) => e !== previous)
    .map((e) => ({
      ...e,
      fields: new Set([...e.fields].filter((f) => !stolen(unkey(f), body, live, newFields))),
    }))
    .filter((e) => e.fields.size > 0);
  for (const dropped of previous?.fields ?? []) {
    if (newFields.has(dropped)) continue;
    const path = unkey(dropped);
    const stillOwned = others.some((e) => [...e.fields].some((f) => related(unkey(f), path)));
    if (!stillOwned && !leafPaths(body).some((p) => related(p, path))) removePath(object, path);
  }
  const { status: _status, ...withoutStatus } = body;
  mergeInto(object, withoutStatus);
  const mine: ManagerEntry = { manager, operation: 'Apply', apiVersion, time, fields: newFields };
  return { object, entries: newFields.size > 0 ? [...others, mine] : others };
}

/** A field another manager owned is taken over when this apply changes its value (force). */
function stolen(owned: Path, body: Json, live: Json | undefined, newFields: Set<string>): boolean {
  for (const f of newFields) {
    const path = unkey(f);
    if (related(owned, path) && !deepEqual(getPath(live, path), getPath(body, path))) return true;
  }
  return false;
}

/** Records an Update-operation write (create, merge patch, replace) by `manager`. */
export function recordUpdate(
  entries: ManagerEntry[],
  written: Json,
  manager: string,
  apiVersion: string,
  time: string,
): ManagerEntry[] {
  const fields = new Set(leafPaths(written).map(key));
  const others = entries
    .filter((e) => !(e.manager === manager && e.operation === 'Update'))
    .map((e) =>
      e.operation === 'Update' ? { ...e, fields: new Set([...e.fields].filter((f) => !fields.has(f))) } : e,
    )
    .filter((e) => e.fields.size > 0);
  const previous = entries.find((e) => e.manager === manager && e.operation === 'Update');
  const merged = new Set([...(previous?.fields ?? []), ...fields]);
  return merged.size > 0
    ? [...others, { manager, operation: 'Update', apiVersion, time, fields: merged }]
    : others;
}

/** `metadata.managedFields` as the API server serialises it (fieldsV1 trees). */
export function managedFieldsJson(entries: ManagerEntry[]): Json[] {
  return entries.map((e) => {
    const tree: Json = {};
    for (const f of e.fields) {
      let node = tree;
      for (const part of unkey(f)) {
        const k = `f:${part}`;
        if (!isObject(node[k])) node[k] = {};
        node = node[k] as Json;
      }
    }
    return {
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      time: e.time,
      fieldsType: 'FieldsV1',
      fieldsV1: tree,
    };
  });
}

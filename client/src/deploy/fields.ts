/**
 * Comparing Kubernetes objects field by field (docs/deployments.md "Dry run" and "Diff and drift"):
 * what changes on every write is left out, paths are dotted (`.spec.ports[0].port`), and a
 * Secret's `data`/`stringData` values are never shown — only whether they changed.
 */
import { isMapping } from '../data.js';

type Json = Record<string, unknown>;

/** The annotation naming the manifest that last applied an object (changes on every deploy). */
export const ANNOTATION_MANIFEST = 'dm.io/manifest';

/** One field that differs: its path and values (absent when the object has no such field). */
export interface FieldChange {
  path: string;
  from?: unknown;
  to?: unknown;
  /** A Secret's value: only whether it changed, never the value. */
  secret?: 'changed';
}

/** An object without what changes on every write (resourceVersion, managedFields, dm's manifest annotation). */
export function comparable(o: Json): Json {
  const copy = structuredClone(o);
  delete copy.status;
  const m = (copy.metadata ?? {}) as Json;
  for (const k of ['resourceVersion', 'managedFields', 'generation', 'creationTimestamp', 'uid', 'selfLink'])
    delete m[k];
  const annotations = m.annotations as Json | undefined;
  if (annotations) {
    delete annotations[ANNOTATION_MANIFEST];
    if (Object.keys(annotations).length === 0) delete m.annotations;
  }
  return copy;
}

/** Whether a path holds a Secret's value (`.data.x`, `.stringData.x`). */
export function isSecretValue(kind: string, path: string): boolean {
  return kind === 'Secret' && /^\.(data|stringData)(\.|\[|$)/.test(path);
}

/**
 * A Secret as the API server keeps it: `stringData` folded into `data` (base64), so what dm sent
 * compares with what the cluster holds.
 */
export function foldStringData(kind: string, o: Json): Json {
  if (kind !== 'Secret' || !isMapping(o.stringData)) return o;
  const { stringData, ...rest } = o;
  const data = { ...((isMapping(rest.data) ? rest.data : {}) as Json) };
  for (const [k, v] of Object.entries(stringData as Json)) {
    data[k] = Buffer.from(String(v), 'utf8').toString('base64');
  }
  return { ...rest, data };
}

const segment = (path: string, key: string, list: boolean) =>
  list ? `${path}[${key}]` : /^[A-Za-z_][\w-]*$/.test(key) ? `${path}.${key}` : `${path}["${key}"]`;

/** Leaf paths whose value differs between `after` and `before` (both sides walked). */
export function fieldChanges(after: unknown, before: unknown, kind: string): FieldChange[] {
  const out: FieldChange[] = [];
  const walk = (a: unknown, b: unknown, path: string) => {
    if (isMapping(a) && isMapping(b)) {
      for (const k of new Set([...Object.keys(b), ...Object.keys(a)]))
        walk(a[k], b[k], segment(path, k, false));
    } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      for (let i = 0; i < a.length; i++) walk(a[i], b[i], segment(path, String(i), true));
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      out.push(change(path, b, a, kind));
    }
  };
  walk(after, before, '');
  return out;
}

/**
 * Leaf paths `mine` sets whose value differs in `theirs`: what was changed out of band in the
 * fields dm applied (fields others added are theirs, not drift).
 */
export function driftedFields(mine: unknown, theirs: unknown, kind: string): FieldChange[] {
  const out: FieldChange[] = [];
  const walk = (m: unknown, t: unknown, path: string) => {
    if (m === undefined) return; // a value dm does not know (an unrecorded $(ref))
    if (isMapping(m) && Object.keys(m).length > 0) {
      if (!isMapping(t)) {
        out.push(change(path, m, t, kind));
        return;
      }
      for (const k of Object.keys(m)) walk(m[k], t[k], segment(path, k, false));
    } else if (Array.isArray(m) && Array.isArray(t) && m.length === t.length) {
      for (let i = 0; i < m.length; i++) walk(m[i], t[i], segment(path, String(i), true));
    } else if (JSON.stringify(m) !== JSON.stringify(t)) {
      out.push(change(path, m, t, kind));
    }
  };
  walk(mine, theirs, '');
  return out;
}

function change(path: string, from: unknown, to: unknown, kind: string): FieldChange {
  if (isSecretValue(kind, path)) return { path, secret: 'changed' };
  return { path, ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}

/** `path: from -> to`, or `path: changed (Secret value not shown)`. */
export function formatChange(c: FieldChange): string {
  if (c.secret) return `${c.path}: changed (Secret value not shown)`;
  return `${c.path}: ${JSON.stringify(c.from ?? null)} -> ${JSON.stringify(c.to ?? null)}`;
}

/**
 * The JSONPath subset of docs/layering.md "How rendering works", paths (what jsonpath-ng parses and Deckhand uses): root `.`
 * or `$`, dotted identifiers or quoted names, each followed by `[N]` indices. Wildcards,
 * descendants, slices, filters and negative indices are rejected (the spec's recommendation).
 * Functions here never throw: they return a reason string that callers turn into the right kind.
 */
import { getOwn, isMapping, type Mapping, setOwn } from './data.js';

export type PathStep = { key: string } | { index: number };
export type ParsedPath = PathStep[];

/** Largest list index a write may pad up to: untrusted paths must not allocate without bound. */
export const MAX_WRITE_INDEX = 100_000;

const IDENTIFIER = /^[A-Za-z_@][A-Za-z0-9_@-]*/;
const INDEX = /^\[(\d+)\]/;

export interface ParsePathOptions {
  /** When false, a path without a leading `.` or `$` is read as if it had `.` (action paths, src.path). */
  requireRoot?: boolean;
}

/** Parses a path; returns the steps, or a string saying why the path is not in the subset. */
export function parsePath(text: string, options: ParsePathOptions = {}): ParsedPath | string {
  if (text === '.' || text === '$') return [];
  let rest: string;
  if (text.startsWith('$.')) rest = text.slice(2);
  else if (text.startsWith('$[')) rest = text.slice(1);
  else if (text.startsWith('.')) rest = text.slice(1);
  else if (options.requireRoot) return `path '${text}' must start with '.' or '$'`;
  else rest = text;
  const steps: PathStep[] = [];
  let first = true;
  while (true) {
    if (!(first && rest.startsWith('['))) {
      const quote = rest[0];
      if (quote === "'" || quote === '"') {
        const end = rest.indexOf(quote, 1);
        if (end < 0) return `path '${text}' has an unterminated quoted name`;
        steps.push({ key: rest.slice(1, end) });
        rest = rest.slice(end + 1);
      } else {
        const m = IDENTIFIER.exec(rest);
        if (!m) {
          return `path '${text}' is not supported at '${rest}' (only names, quoted names and [N] indices)`;
        }
        steps.push({ key: m[0] });
        rest = rest.slice(m[0].length);
      }
    }
    first = false;
    let im = INDEX.exec(rest);
    while (im) {
      steps.push({ index: Number(im[1]) });
      rest = rest.slice(im[0].length);
      im = INDEX.exec(rest);
    }
    if (rest === '') return steps;
    if (!rest.startsWith('.') || rest === '.') {
      return `path '${text}' is not supported at '${rest}' (only names, quoted names and [N] indices)`;
    }
    rest = rest.slice(1);
  }
}

/**
 * Action paths (§10): a leading `.data` or `$.data` is removed when followed by `.`, `[` or the end
 * (quirk Q2: Deckhand strips it even inside a word; dm does not), and the leading `.` is optional.
 */
export function normalizeActionPath(text: string): string {
  let p = text;
  const m = /^\$?\.data(?=$|[.[])/.exec(p);
  if (m) p = p.slice(m[0].length);
  if (p === '') return '.';
  if (p.startsWith('[')) return `$${p}`;
  return p;
}

export function formatPath(steps: ParsedPath): string {
  if (steps.length === 0) return '.';
  let out = '';
  for (const s of steps) {
    if ('index' in s) out += `[${s.index}]`;
    else out += IDENTIFIER.exec(s.key)?.[0] === s.key ? `.${s.key}` : `.'${s.key}'`;
  }
  return out;
}

/** Reads the value at a path; `found: false` for a missing key, an index out of range, a wrong type. */
export function readPath(data: unknown, steps: ParsedPath): { found: boolean; value: unknown } {
  let cur = data;
  for (const step of steps) {
    if ('index' in step) {
      if (!Array.isArray(cur) || step.index >= cur.length) return { found: false, value: undefined };
      cur = cur[step.index];
    } else {
      if (!isMapping(cur) || !Object.hasOwn(cur, step.key)) return { found: false, value: undefined };
      cur = cur[step.key];
    }
  }
  return { found: true, value: cur };
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (isMapping(value)) return 'a mapping';
  return `a ${typeof value}`;
}

export type WriteResult = { ok: true; data: unknown } | { ok: false; reason: string };

/**
 * Set with creation (§10), in place where possible: missing keys become `{}` (or `[]` before an
 * index), short lists are padded with `{}`, then the last key or index is set. The root path
 * returns `value`. Walking through a scalar or null fails.
 */
export function writePath(data: unknown, steps: ParsedPath, value: unknown): WriteResult {
  if (steps.length === 0) return { ok: true, data: value };
  let cur: unknown = data;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as PathStep;
    const last = i === steps.length - 1;
    const next = steps[i + 1];
    const fresh = (): unknown => (next !== undefined && 'index' in next ? [] : {});
    if ('index' in step) {
      if (!Array.isArray(cur)) {
        return { ok: false, reason: `cannot index ${typeName(cur)} at ${formatPath(steps.slice(0, i))}` };
      }
      if (step.index > MAX_WRITE_INDEX) {
        return { ok: false, reason: `index ${step.index} is larger than ${MAX_WRITE_INDEX}` };
      }
      while (cur.length < step.index) cur.push({});
      if (last) {
        cur[step.index] = value;
      } else {
        if (cur.length === step.index) cur.push(fresh());
        cur = cur[step.index];
      }
    } else {
      if (!isMapping(cur)) {
        return {
          ok: false,
          reason: `cannot set key '${step.key}' in ${typeName(cur)} at ${formatPath(steps.slice(0, i))}`,
        };
      }
      if (last) {
        setOwn(cur, step.key, value);
      } else {
        if (!Object.hasOwn(cur, step.key)) setOwn(cur, step.key, fresh());
        cur = getOwn(cur, step.key);
      }
    }
  }
  return { ok: true, data };
}

/** Removes the value at a non-root path (list elements shift down). The caller checked it exists. */
export function deletePath(data: unknown, steps: ParsedPath): void {
  const parent = readPath(data, steps.slice(0, -1)).value;
  const last = steps[steps.length - 1];
  if (last === undefined) return;
  if ('index' in last) {
    if (Array.isArray(parent)) parent.splice(last.index, 1);
  } else if (isMapping(parent)) {
    delete (parent as Mapping)[last.key];
  }
}

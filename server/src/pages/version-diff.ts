/**
 * What changed between two versions of a template (docs/pages.md, "Diff"): files added, removed
 * and changed (by sha256), the schema's properties added, removed and changed, and a line diff of
 * each changed text file. Bounded: files over MAX_INLINE_BYTES or with a NUL byte are not
 * diffed, a diff needing more than MAX_EDITS edits is not shown, and the shown diff lines stop at
 * MAX_DIFF_BYTES for the page.
 */
import type { FileInfo } from '../api/shapes.js';
import { MAX_INLINE_BYTES } from '../store/reads.js';
import type { PropertyRow } from './properties.js';
import { type Hunk, hunks, lineOps, MAX_EDITS } from './text-diff.js';

export const MAX_DIFF_BYTES = 256 * 1024;
/**
 * Most bytes of file text one diff page reads (both sides), whatever comes of them: pages asked
 * with a token are rendered every time, and a version may hold 1,000 files (docs/pages.md, "Diff").
 */
export const MAX_DIFF_READ_BYTES = 4 * 1024 * 1024;

export interface FileChange {
  path: string;
  status: 'added' | 'removed' | 'changed';
  fromSize: number | null;
  toSize: number | null;
  hunks: Hunk[] | null;
  /** Why there is no line diff. */
  note: string | null;
}

export interface PropertyChange {
  name: string;
  status: 'added' | 'removed' | 'changed';
  /** What changed, in words: `type integer → string`, `default 3 → 5`. */
  detail: string;
}

export interface VersionDiff {
  files: FileChange[];
  unchanged: number;
  properties: PropertyChange[];
}

function describe(a: PropertyRow, b: PropertyRow): string {
  const parts: string[] = [];
  if (a.type !== b.type) parts.push(`type ${a.type || '—'} → ${b.type || '—'}`);
  if (a.default !== b.default) parts.push(`default ${a.default ?? '—'} → ${b.default ?? '—'}`);
  if (a.required !== b.required) parts.push(b.required ? 'now required' : 'no longer required');
  if (a.description !== b.description) parts.push('description changed');
  return parts.join('; ');
}

export function propertyChanges(from: readonly PropertyRow[], to: readonly PropertyRow[]): PropertyChange[] {
  const before = new Map(from.map((r) => [r.name, r]));
  const after = new Map(to.map((r) => [r.name, r]));
  const out: PropertyChange[] = [];
  for (const r of to) {
    const old = before.get(r.name);
    if (!old) out.push({ name: r.name, status: 'added', detail: r.type });
    else {
      const detail = describe(old, r);
      if (detail) out.push({ name: r.name, status: 'changed', detail });
    }
  }
  for (const r of from) if (!after.has(r.name)) out.push({ name: r.name, status: 'removed', detail: r.type });
  return out;
}

/**
 * The diff of two versions' files; `text(side, path)` reads a file's text (undefined when over
 * MAX_INLINE_BYTES).
 */
export async function versionDiff(
  fromFiles: readonly FileInfo[],
  toFiles: readonly FileInfo[],
  fromProperties: readonly PropertyRow[],
  toProperties: readonly PropertyRow[],
  text: (side: 'from' | 'to', path: string) => Promise<string | undefined>,
): Promise<VersionDiff> {
  const before = new Map(fromFiles.map((f) => [f.path, f]));
  const after = new Map(toFiles.map((f) => [f.path, f]));
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  const files: FileChange[] = [];
  let unchanged = 0;
  let budget = MAX_DIFF_BYTES;
  let reads = MAX_DIFF_READ_BYTES;
  for (const path of paths) {
    const a = before.get(path);
    const b = after.get(path);
    if (a && b && a.sha256 === b.sha256) {
      unchanged++;
      continue;
    }
    const change: FileChange = {
      path,
      status: !a ? 'added' : !b ? 'removed' : 'changed',
      fromSize: a?.size ?? null,
      toSize: b?.size ?? null,
      hunks: null,
      note: null,
    };
    files.push(change);
    if ((a?.size ?? 0) > MAX_INLINE_BYTES || (b?.size ?? 0) > MAX_INLINE_BYTES) {
      change.note = `not shown: larger than ${MAX_INLINE_BYTES / 1024} KiB`;
      continue;
    }
    if (budget <= 0) {
      change.note = `not shown: the page shows at most ${MAX_DIFF_BYTES / 1024} KiB of diff`;
      continue;
    }
    reads -= (a?.size ?? 0) + (b?.size ?? 0);
    if (reads < 0) {
      change.note = `not shown: the page reads at most ${MAX_DIFF_READ_BYTES / 1024 / 1024} MiB of files`;
      continue;
    }
    const left = a ? await text('from', path) : '';
    const right = b ? await text('to', path) : '';
    if (left === undefined || right === undefined || left.includes('\0') || right.includes('\0')) {
      change.note = 'not shown: binary content';
      continue;
    }
    const ops = lineOps(left, right);
    if (!ops) {
      change.note = `not shown: more than ${MAX_EDITS} lines differ`;
      continue;
    }
    change.hunks = hunks(ops);
    for (const h of change.hunks) for (const op of h.ops) budget -= op.line.length + 2;
  }
  return { files, unchanged, properties: propertyChanges(fromProperties, toProperties) };
}

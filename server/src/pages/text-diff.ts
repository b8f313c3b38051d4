/**
 * Line diffs for the version diff page (docs/pages.md, "Diff"): Myers' O((N+M)·D) algorithm after
 * trimming the common head and tail, giving up beyond MAX_EDITS edits (the page then says the
 * files are too different to show), and hunks with three lines of context. Pure.
 */

export const MAX_EDITS = 400;
const CONTEXT = 3;

export type Op = { kind: ' ' | '+' | '-'; line: string };

export interface Hunk {
  fromStart: number;
  toStart: number;
  ops: Op[];
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** The edit script from `a` to `b`, or undefined when it needs more than `maxEdits` edits. */
export function lineOps(aText: string, bText: string, maxEdits = MAX_EDITS): Op[] | undefined {
  const a = splitLines(aText);
  const b = splitLines(bText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const x0 = a.slice(head, a.length - tail);
  const y0 = b.slice(head, b.length - tail);
  const middle = myers(x0, y0, maxEdits);
  if (!middle) return undefined;
  return [
    ...a.slice(0, head).map((line): Op => ({ kind: ' ', line })),
    ...middle,
    ...a.slice(a.length - tail).map((line): Op => ({ kind: ' ', line })),
  ];
}

function myers(a: string[], b: string[], maxEdits: number): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
          ? v[offset + k + 1]!
          : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b, offset);
    }
  }
  return undefined;
}

function backtrack(trace: Int32Array[], a: string[], b: string[], offset: number): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : v[offset + prevK]!;
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: ' ', line: a[x - 1]! });
      x--;
      y--;
    }
    if (d > 0) {
      if (x === prevX) ops.push({ kind: '+', line: b[y - 1]! });
      else ops.push({ kind: '-', line: a[x - 1]! });
    }
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

/** The changed stretches of `ops` with CONTEXT lines around each (1-based line numbers). */
export function hunks(ops: readonly Op[]): Hunk[] {
  const ranges: [number, number][] = [];
  for (const [i, op] of ops.entries()) {
    if (op.kind === ' ') continue;
    const lo = Math.max(0, i - CONTEXT);
    const hi = Math.min(ops.length - 1, i + CONTEXT);
    const last = ranges.at(-1);
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else ranges.push([lo, hi]);
  }
  const out: Hunk[] = [];
  let from = 1;
  let to = 1;
  let j = 0;
  for (const [lo, hi] of ranges) {
    for (; j < lo; j++) {
      if (ops[j]!.kind !== '+') from++;
      if (ops[j]!.kind !== '-') to++;
    }
    out.push({ fromStart: from, toStart: to, ops: ops.slice(lo, hi + 1) });
  }
  return out;
}

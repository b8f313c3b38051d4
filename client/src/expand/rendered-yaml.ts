/**
 * Reading a template's rendered text as DM did (PyYAML), including the one place where js-yaml
 * and PyYAML disagree on text Jinja2 produces. Jinja2 drops a template's final newline, so a
 * template ending in a block scalar (`value: |` and script lines) renders to text whose last
 * line has no line break. PyYAML then reads the scalar without a final newline ('echo hi');
 * js-yaml adds one ('echo hi\n'). The correction: when the text ends inside a block scalar,
 * the scalar is read again with a marker appended to its last line, which tells which value it
 * is; that value loses the trailing line breaks js-yaml added.
 */
import { type ParseYamlOptions, parseYaml } from '../document/yaml.js';

const MARK = '\uE000dm-end-of-text\uE000';
const BLOCK_HEADER = /(?:^|[\s:-])[|>](?:[-+][1-9]?|[1-9][-+]?)?\s*(?:#.*)?$/;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** Whether the last line of `text` (which has no final line break) may be inside a block scalar. */
export function mayEndInBlockScalar(text: string): boolean {
  let end = text.length;
  let minIndent = Number.POSITIVE_INFINITY;
  while (end > 0) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    const line = text.slice(start, end);
    end = start - 1;
    if (line.trim() === '') continue;
    const indent = indentOf(line);
    if (indent < minIndent) {
      if (minIndent !== Number.POSITIVE_INFINITY && BLOCK_HEADER.test(line)) return true;
      minIndent = indent;
      if (indent === 0) return false;
    }
  }
  return false;
}

type Path = (string | number)[];

function findMarked(value: unknown, path: Path, depth: number): Path | undefined {
  if (depth > 1000) return undefined;
  if (typeof value === 'string') return value.includes(MARK) ? path : undefined;
  if (Array.isArray(value)) {
    // The marker is on the last line: search from the end.
    for (let i = value.length - 1; i >= 0; i--) {
      const found = findMarked(value[i], [...path, i], depth + 1);
      if (found) return found;
    }
  } else if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const found = findMarked((value as Record<string, unknown>)[key], [...path, key], depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

/** Parses rendered template output (one YAML document) as PyYAML would. */
export function parseRenderedYaml(text: string, options: ParseYamlOptions): unknown {
  const data = parseYaml(text, options);
  if (text.endsWith('\n') || !mayEndInBlockScalar(text)) return data;
  let marked: unknown;
  try {
    marked = parseYaml(text + MARK, options);
  } catch {
    return data;
  }
  const path = findMarked(marked, [], 0);
  if (!path || path.length === 0) return data;
  let holder = data as Record<string | number, unknown>;
  let markedHolder = marked as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) {
    holder = holder?.[key] as Record<string | number, unknown>;
    markedHolder = markedHolder[key] as Record<string | number, unknown>;
  }
  const last = path[path.length - 1]!;
  const markedValue = markedHolder[last] as string;
  const current = holder?.[last];
  const at = markedValue.indexOf(MARK);
  if (typeof current !== 'string' || !/^\n*$/.test(markedValue.slice(at + MARK.length))) return data;
  // Only line breaks after the value's last line change: the rest must be what was read.
  const corrected = markedValue.slice(0, at);
  if (current.startsWith(corrected) && /^\n*$/.test(current.slice(corrected.length)))
    holder[last] = corrected;
  return data;
}

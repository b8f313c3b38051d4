/**
 * The Python behaviour pattern substitution depends on (docs/layering.md "How rendering works", substitution): `str()`
 * of the inserted value, `re.sub` template escapes, and Python regex syntax mapped onto JavaScript.
 * Functions return a reason string instead of throwing. Float and string `repr()` are the
 * leaf module's (client/src/python/values.ts, shared with the expansion engine), fuzzed against Python's.
 */

import { PYTHON_CHARACTER_ESCAPES } from '../python/escapes.js';
import { pyFloatRepr, pyStrRepr } from '../python/values.js';
import { isMapping, MAX_DEPTH } from './data.js';

/**
 * A number as Python would print it. YAML integers arrive as integral JavaScript numbers and print
 * as Python ints; a YAML float that happens to be integral (`1.0`) cannot be told apart and prints
 * as `1` (a documented difference, docs/layering.md).
 */
function numberStr(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n);
  return pyFloatRepr(n);
}

/** Python's `repr()` of JSON-like data (`{'k': 1}`, `[1, 'x']`, `True`, `None`). */
export function pyRepr(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) return '...';
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return numberStr(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return pyStrRepr(value);
  if (Array.isArray(value)) return `[${value.map((v) => pyRepr(v, depth + 1)).join(', ')}]`;
  if (isMapping(value)) {
    return `{${Object.keys(value)
      .map((k) => `${pyStrRepr(k)}: ${pyRepr(value[k], depth + 1)}`)
      .join(', ')}}`;
  }
  return pyStrRepr(String(value));
}

/** Python's `str()`: strings as they are, everything else as `repr()`. */
export function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

/** Longest pattern accepted from a document; long untrusted regexes are refused outright. */
export const MAX_PATTERN_LENGTH = 1000;

const compiled = new Map<string, RegExp | string>();

/**
 * Compiles a Python `re` pattern as a JavaScript RegExp (named groups, `\A`, `\Z` translated).
 * Results are cached (documents repeat the same few patterns); callers must not rely on
 * `lastIndex`, which `String.replace` and `exec` on a non-global regex reset anyway.
 */
export function compilePythonRegex(pattern: string, global: boolean): RegExp | string {
  const key = `${global ? 'g' : '-'}${pattern}`;
  let result = compiled.get(key);
  if (result === undefined) {
    result = compile(pattern, global);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, result);
  }
  return result;
}

function compile(pattern: string, global: boolean): RegExp | string {
  if (pattern.length > MAX_PATTERN_LENGTH) return `pattern is longer than ${MAX_PATTERN_LENGTH} characters`;
  const source = pattern
    .replace(/\(\?P</g, '(?<')
    .replace(/\(\?P=([A-Za-z_][A-Za-z0-9_]*)\)/g, '\\k<$1>')
    .replace(/\\A/g, '^')
    .replace(/\\Z/g, '$(?![\\s\\S])');
  try {
    return new RegExp(source, global ? 'g' : '');
  } catch (error) {
    return `invalid regular expression '${pattern}': ${error instanceof Error ? error.message : String(error)}`;
  }
}

type TemplatePart = string | { group: number | string };

/**
 * Parses a `re.sub` replacement template as Python does: `\g<name>`, `\g<1>`, `\1`..`\99` are
 * group references, `\n` and friends are escapes, an unknown ASCII-letter escape is an error,
 * other `\x` pairs stay as written.
 */
export function parseTemplate(template: string, groupCount: number): TemplatePart[] | string {
  if (!template.includes('\\')) return [template];
  const parts: TemplatePart[] = [];
  let literal = '';
  for (let i = 0; i < template.length; i++) {
    const ch = template[i] as string;
    if (ch !== '\\') {
      literal += ch;
      continue;
    }
    const next = template[i + 1];
    if (next === undefined) return 'bad escape (end of pattern) in the substituted value';
    if (next === 'g') {
      const m = /^<([^>]*)>/.exec(template.slice(i + 2));
      if (!m) return 'missing group name after \\g in the substituted value';
      const name = m[1] as string;
      const group = /^\d+$/.test(name) ? Number(name) : name;
      if (typeof group === 'number' && group > groupCount) return `invalid group reference ${group}`;
      if (literal) parts.push(literal);
      literal = '';
      parts.push({ group });
      i += 2 + m[0].length - 1;
      continue;
    }
    if (next === '0') {
      const m = /^0[0-7]{0,2}/.exec(template.slice(i + 1))?.[0] ?? '0';
      literal += String.fromCharCode(Number.parseInt(m, 8) & 0xff);
      i += m.length;
      continue;
    }
    if (next >= '1' && next <= '9') {
      const rest = template.slice(i + 1);
      const octal = /^[1-7][0-7]{2}/.exec(rest)?.[0];
      if (octal !== undefined) {
        const code = Number.parseInt(octal, 8);
        if (code > 0o377) return `octal escape value \\${octal} outside of range 0-0o377`;
        literal += String.fromCharCode(code);
        i += 3;
        continue;
      }
      const digits = /^\d\d?/.exec(rest)?.[0] ?? next;
      const group = Number(digits);
      if (group > groupCount) return `invalid group reference ${group} in the substituted value`;
      if (literal) parts.push(literal);
      literal = '';
      parts.push({ group });
      i += digits.length;
      continue;
    }
    const escaped = Object.hasOwn(PYTHON_CHARACTER_ESCAPES, next)
      ? PYTHON_CHARACTER_ESCAPES[next]
      : undefined;
    if (escaped !== undefined) literal += escaped;
    else if (/[A-Za-z]/.test(next)) return `bad escape \\${next} in the substituted value`;
    else literal += `\\${next}`;
    i += 1;
  }
  if (literal) parts.push(literal);
  return parts;
}

const groupCounts = new WeakMap<RegExp, number>();

function groupCountOf(regex: RegExp): number {
  let count = groupCounts.get(regex);
  if (count === undefined) {
    count = (new RegExp(`${regex.source}|`).exec('')?.length ?? 1) - 1;
    groupCounts.set(regex, count);
  }
  return count;
}

/** Python's `re.sub(pattern, template, text)`: every non-overlapping match replaced. */
export function pySub(regex: RegExp, template: string, text: string): string | { error: string } {
  const parts = parseTemplate(template, groupCountOf(regex));
  if (typeof parts === 'string') return { error: parts };
  const global = regex.global ? regex : new RegExp(regex.source, `${regex.flags}g`);
  return text.replace(global, (...args: unknown[]) => {
    const hasNamed = typeof args[args.length - 1] === 'object' && args[args.length - 1] !== null;
    const groups = hasNamed ? (args[args.length - 1] as Record<string, string | undefined>) : {};
    const numbered = args.slice(0, hasNamed ? -3 : -2) as (string | undefined)[];
    let out = '';
    for (const part of parts) {
      if (typeof part === 'string') out += part;
      else if (typeof part.group === 'number') out += numbered[part.group] ?? '';
      else out += Object.hasOwn(groups, part.group) ? (groups[part.group] ?? '') : '';
    }
    return out;
  });
}

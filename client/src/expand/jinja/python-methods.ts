/**
 * Attribute and item access for Jinja templates, as Jinja2 does it over Python objects: the
 * methods of `str`, `list` and `dict`, negative indexes, slices, and nothing else. This is also
 * the sandbox boundary of the Jinja engine: a lookup reaches only own data properties and the
 * method tables below, never a prototype, a constructor or a host object.
 */
import {
  copyDict,
  isDict,
  type PyDict,
  PyError,
  PyFloat,
  PyTuple,
  PyView,
  pyEntries,
  pyEquals,
  pyKeys,
  pyRepr,
  pySetItem,
  pySortKey,
  pyStr,
  pyTruthy,
  pyValues,
  typeName,
} from '../../python/values.js';

/** `x[a:b:c]` */
export class PySlice {
  constructor(
    readonly start: unknown,
    readonly stop: unknown,
    readonly step: unknown,
  ) {}
}

/** Names no template may reach, whatever the object. */
const BLOCKED = new Set([
  // JavaScript: the way from any object to Function and so to `process`.
  'constructor',
  '__proto__',
  'prototype',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  // Python: the classic Jinja2 sandbox escapes, refused with a clear error instead of Undefined.
  '__class__',
  '__globals__',
  '__builtins__',
  '__subclasses__',
  '__mro__',
  '__base__',
  '__bases__',
  '__init__',
  '__import__',
  '__getattribute__',
  '__dict__',
  '__code__',
  '__func__',
  '__self__',
  '__module__',
]);

export class BlockedError extends Error {
  constructor(readonly what: string) {
    super(`access to '${what}' is blocked in templates`);
    this.name = 'BlockedError';
  }
}

export function isBlockedName(name: unknown): boolean {
  return typeof name === 'string' && BLOCKED.has(name);
}

/** Keyword arguments as nunjucks passes them: a trailing object marked `__keywords`. */
export interface Kwargs {
  [key: string]: unknown;
}

export function splitArgs(args: readonly unknown[]): { positional: unknown[]; kwargs: Kwargs } {
  const last = args[args.length - 1];
  if (isDict(last) && (last as { __keywords?: unknown }).__keywords === true) {
    const kwargs: Kwargs = {};
    for (const [k, v] of Object.entries(last)) if (k !== '__keywords') kwargs[k] = v;
    return { positional: args.slice(0, -1), kwargs };
  }
  return { positional: [...args], kwargs: {} };
}

/** Binds positional and keyword arguments to parameter names, Python style. */
export function bindArgs(
  fname: string,
  args: readonly unknown[],
  names: readonly string[],
  defaults: readonly unknown[] = [],
): unknown[] {
  const { positional, kwargs } = splitArgs(args);
  if (positional.length > names.length) {
    throw new PyError('TypeError', `${fname}() takes at most ${names.length} arguments`);
  }
  const firstDefault = names.length - defaults.length;
  return names.map((name, i) => {
    if (i < positional.length) return positional[i];
    if (Object.hasOwn(kwargs, name)) return kwargs[name];
    if (i >= firstDefault) return defaults[i - firstDefault];
    throw new PyError('TypeError', `${fname}() missing required argument '${name}'`);
  });
}

function int(value: unknown, what: string): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  throw new PyError('TypeError', `${what} must be an integer, not ${typeName(value)}`);
}

function normIndex(i: number, length: number): number {
  return i < 0 ? i + length : i;
}

/** Python slicing of a string or list. */
export function sliceValue(target: unknown, slice: PySlice): unknown {
  const isStr = typeof target === 'string';
  const seq: unknown[] = isStr ? [...(target as string)] : Array.isArray(target) ? target : [];
  if (!isStr && !Array.isArray(target)) {
    if (target === undefined) throw new PyError('UndefinedError', 'cannot slice an undefined value');
    throw new PyError('TypeError', `'${typeName(target)}' object is not subscriptable`);
  }
  const n = seq.length;
  const step = slice.step === null || slice.step === undefined ? 1 : int(slice.step, 'slice step');
  if (step === 0) throw new PyError('ValueError', 'slice step cannot be zero');
  const bound = (v: unknown, dflt: number): number => {
    if (v === null || v === undefined) return dflt;
    let i = int(v, 'slice indices');
    if (i < 0) i += n;
    if (step > 0) return Math.min(Math.max(i, 0), n);
    return Math.min(Math.max(i, -1), n - 1);
  };
  const start = bound(slice.start, step > 0 ? 0 : n - 1);
  const stop = bound(slice.stop, step > 0 ? n : -1);
  const out: unknown[] = [];
  if (step > 0) for (let i = start; i < stop; i += step) out.push(seq[i]);
  else for (let i = start; i > stop; i += step) out.push(seq[i]);
  if (isStr) return out.join('');
  return target instanceof PyTuple ? PyTuple.of2(out) : out;
}

const WHITESPACE =
  ' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

function stripChars(s: string, chars: unknown, left: boolean, right: boolean): string {
  const set = chars === null || chars === undefined ? WHITESPACE : pyStr(chars);
  let a = 0;
  let b = s.length;
  if (left) while (a < b && set.includes(s[a] ?? '')) a++;
  if (right) while (b > a && set.includes(s[b - 1] ?? '')) b--;
  return s.slice(a, b);
}

export function pySplit(s: string, sep: unknown, maxsplit: unknown): string[] {
  const max = maxsplit === undefined || maxsplit === null ? -1 : int(maxsplit, 'maxsplit');
  if (sep === null || sep === undefined) {
    const out: string[] = [];
    let rest = stripChars(s, null, true, false);
    while (rest.length > 0) {
      if (max >= 0 && out.length >= max) {
        out.push(stripChars(rest, null, false, true));
        break;
      }
      let i = 0;
      while (i < rest.length && !WHITESPACE.includes(rest[i] ?? '')) i++;
      out.push(rest.slice(0, i));
      rest = stripChars(rest.slice(i), null, true, false);
    }
    return out;
  }
  const separator = pyStr(sep);
  if (separator === '') throw new PyError('ValueError', 'empty separator');
  const parts = s.split(separator);
  if (max < 0 || parts.length - 1 <= max) return parts;
  return [...parts.slice(0, max), parts.slice(max).join(separator)];
}

function pyRSplit(s: string, sep: unknown, maxsplit: unknown): string[] {
  const max = maxsplit === undefined || maxsplit === null ? -1 : int(maxsplit, 'maxsplit');
  if (max < 0) return pySplit(s, sep, -1);
  if (sep === null || sep === undefined) {
    const words = pySplit(s, null, -1);
    if (words.length <= max) return words;
    // Keep the leading text (with its inner whitespace) of the first part intact.
    const out: string[] = [];
    let rest = stripChars(s, null, false, true);
    for (let k = 0; k < max; k++) {
      let i = rest.length;
      while (i > 0 && !WHITESPACE.includes(rest[i - 1] ?? '')) i--;
      out.unshift(rest.slice(i));
      rest = stripChars(rest.slice(0, i), null, false, true);
    }
    out.unshift(rest);
    return out;
  }
  const separator = pyStr(sep);
  const parts = s.split(separator);
  if (parts.length - 1 <= max) return parts;
  const cut = parts.length - max;
  return [parts.slice(0, cut).join(separator), ...parts.slice(cut)];
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: Python's str.splitlines() breaks on these control characters
const LINE_BREAKS = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;

/** `str.splitlines()`. */
export function pySplitLines(s: string, keepends = false): string[] {
  const out: string[] = [];
  let rest = s;
  while (rest.length > 0) {
    const m = LINE_BREAKS.exec(rest);
    if (!m) {
      out.push(rest);
      break;
    }
    out.push(rest.slice(0, keepends ? m.index + m[0].length : m.index));
    rest = rest.slice(m.index + m[0].length);
  }
  return out;
}

export function pyReplace(s: string, old: string, replacement: string, count: unknown): string {
  const max = count === undefined || count === null ? -1 : int(count, 'count');
  if (max < 0) {
    if (old === '') return [...s].map((c) => replacement + c).join('') + replacement;
    return s.split(old).join(replacement);
  }
  let out = '';
  let rest = s;
  for (let n = 0; n < max; n++) {
    const i = old === '' ? (n === 0 ? 0 : 1) : rest.indexOf(old);
    if (i < 0 || (old === '' && i > rest.length)) break;
    out += rest.slice(0, i) + replacement;
    rest = rest.slice(i + old.length);
    if (old === '' && n > 0) {
      out = out.slice(0, -replacement.length);
      out += '';
    }
  }
  return out + rest;
}

function startsOrEnds(s: string, args: unknown[], ends: boolean): boolean {
  const [prefix, start, end] = bindArgs(
    ends ? 'endswith' : 'startswith',
    args,
    ['p', 'start', 'end'],
    [null, null],
  );
  const n = s.length;
  const a = start === null ? 0 : Math.max(0, normIndex(int(start, 'start'), n));
  const b = end === null ? n : Math.max(0, normIndex(int(end, 'end'), n));
  const sub = s.slice(a, b);
  const candidates = Array.isArray(prefix) ? prefix : [prefix];
  return candidates.some((p) => {
    if (typeof p !== 'string') {
      throw new PyError('TypeError', `${ends ? 'endswith' : 'startswith'} first arg must be str or a tuple`);
    }
    return ends ? sub.endsWith(p) : sub.startsWith(p);
  });
}

function findIn(s: string, args: unknown[], reverse: boolean): number {
  const [sub, start, end] = bindArgs('find', args, ['sub', 'start', 'end'], [null, null]);
  const n = s.length;
  const a = start === null ? 0 : Math.max(0, normIndex(int(start, 'start'), n));
  const b = end === null ? n : Math.max(0, normIndex(int(end, 'end'), n));
  const hay = s.slice(0, b);
  if (typeof sub !== 'string') throw new PyError('TypeError', `must be str, not ${typeName(sub)}`);
  const needle = sub;
  const i = reverse ? hay.lastIndexOf(needle) : hay.indexOf(needle, a);
  return i < a || i + needle.length > b ? -1 : i;
}

function pyTitle(s: string): string {
  return s.replace(/[A-Za-z]+/g, (w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase());
}

/** `str.format()`: positional `{}`/`{0}`, named `{x}`, attribute/index fields and basic specs. */
export function pyFormat(format: string, args: readonly unknown[]): string {
  const { positional, kwargs } = splitArgs(args);
  let auto = 0;
  return format.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (m, field: string | undefined) => {
    if (m === '{{') return '{';
    if (m === '}}') return '}';
    const [ref = '', spec = ''] = (field ?? '').split(':', 2);
    const [nameAndPath = '', conversion] = ref.split('!', 2);
    const pathMatch = /^([^.[]*)(.*)$/.exec(nameAndPath);
    const head = pathMatch?.[1] ?? '';
    let value: unknown;
    if (head === '') value = positional[auto++];
    else if (/^\d+$/.test(head)) value = positional[Number(head)];
    else {
      if (!Object.hasOwn(kwargs, head)) throw new PyError('KeyError', pyRepr(head));
      value = kwargs[head];
    }
    for (const part of (pathMatch?.[2] ?? '').matchAll(/\.([^.[]+)|\[([^\]]+)\]/g)) {
      const key = part[1] ?? part[2] ?? '';
      value = lookupMember(value, /^\d+$/.test(key) && Array.isArray(value) ? Number(key) : key);
    }
    if (value === undefined && head !== '' && /^\d+$/.test(head)) {
      throw new PyError('IndexError', 'Replacement index out of range for positional args tuple');
    }
    const text = conversion === 'r' ? pyRepr(value) : undefined;
    return formatSpec(text ?? value, spec, text !== undefined);
  });
}

function formatSpec(value: unknown, spec: string, isText: boolean): string {
  const m = /^(?:(.)?([<>^=]))?([+\- ])?(#)?(0)?(\d+)?(,)?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$/.exec(spec);
  if (!m) throw new PyError('ValueError', `unsupported format spec '${spec}'`);
  const [, fillChar, align, sign, , zero, width, comma, precision, type] = m;
  let text: string;
  const n = typeof value === 'number' || value instanceof PyFloat ? Number(value) : undefined;
  if (isText || type === 's' || (type === undefined && n === undefined)) {
    text = pyStr(value);
    if (precision !== undefined) text = text.slice(0, Number(precision));
  } else {
    if (n === undefined) throw new PyError('ValueError', `format code '${type}' needs a number`);
    const p = precision === undefined ? 6 : Number(precision);
    switch (type) {
      case 'd':
      case 'n':
        text = String(Math.trunc(n));
        break;
      case 'f':
      case 'F':
        text = n.toFixed(p);
        break;
      case '%':
        text = `${(n * 100).toFixed(p)}%`;
        break;
      case 'x':
        text = Math.trunc(n).toString(16);
        break;
      case 'X':
        text = Math.trunc(n).toString(16).toUpperCase();
        break;
      case 'o':
        text = Math.trunc(n).toString(8);
        break;
      case 'b':
        text = Math.trunc(n).toString(2);
        break;
      case 'e':
      case 'E':
        text = n.toExponential(p).replace(/e([+-])(\d)$/, 'e$10$2');
        if (type === 'E') text = text.toUpperCase();
        break;
      case undefined:
        text = precision === undefined ? pyStr(value) : pyStr(Number(n.toPrecision(Number(precision))));
        break;
      default:
        throw new PyError('ValueError', `unsupported format code '${type}'`);
    }
    if (comma) text = text.replace(/^(-?\d+)/, (d) => d.replace(/\B(?=(\d{3})+(?!\d))/g, ','));
    if (sign === '+' && n >= 0) text = `+${text}`;
    else if (sign === ' ' && n >= 0) text = ` ${text}`;
  }
  const w = width === undefined ? 0 : Number(width);
  if (text.length >= w) return text;
  const fill = fillChar ?? (zero && !align ? '0' : ' ');
  const al = align ?? (zero ? '=' : n !== undefined && !isText && type !== 's' ? '>' : '<');
  const pad = w - text.length;
  if (al === '<') return text + fill.repeat(pad);
  if (al === '>') return fill.repeat(pad) + text;
  if (al === '^') return fill.repeat(Math.floor(pad / 2)) + text + fill.repeat(Math.ceil(pad / 2));
  const signChar = /^[+\- ]/.test(text) ? (text[0] ?? '') : '';
  return signChar + fill.repeat(pad) + text.slice(signChar.length);
}

type Method = (self: never, args: unknown[]) => unknown;

function m<T>(f: (self: T, args: unknown[]) => unknown): Method {
  return f as Method;
}

const STRING_METHODS: Record<string, Method> = {
  upper: m<string>((s) => s.toUpperCase()),
  lower: m<string>((s) => s.toLowerCase()),
  casefold: m<string>((s) => s.toLowerCase()),
  strip: m<string>((s, a) => stripChars(s, a[0], true, true)),
  lstrip: m<string>((s, a) => stripChars(s, a[0], true, false)),
  rstrip: m<string>((s, a) => stripChars(s, a[0], false, true)),
  split: m<string>((s, a) => {
    const [sep, max] = bindArgs('split', a, ['sep', 'maxsplit'], [null, -1]);
    return pySplit(s, sep, max);
  }),
  rsplit: m<string>((s, a) => {
    const [sep, max] = bindArgs('rsplit', a, ['sep', 'maxsplit'], [null, -1]);
    return pyRSplit(s, sep, max);
  }),
  splitlines: m<string>((s, a) => pySplitLines(s, pyTruthy(a[0]))),
  replace: m<string>((s, a) => {
    const [old, rep, count] = bindArgs('replace', a, ['old', 'new', 'count'], [-1]);
    if (typeof old !== 'string' || typeof rep !== 'string') {
      throw new PyError('TypeError', 'replace() arguments must be str');
    }
    return pyReplace(s, old, rep, count);
  }),
  startswith: m<string>((s, a) => startsOrEnds(s, a, false)),
  endswith: m<string>((s, a) => startsOrEnds(s, a, true)),
  find: m<string>((s, a) => findIn(s, a, false)),
  rfind: m<string>((s, a) => findIn(s, a, true)),
  index: m<string>((s, a) => {
    const i = findIn(s, a, false);
    if (i < 0) throw new PyError('ValueError', 'substring not found');
    return i;
  }),
  rindex: m<string>((s, a) => {
    const i = findIn(s, a, true);
    if (i < 0) throw new PyError('ValueError', 'substring not found');
    return i;
  }),
  count: m<string>((s, a) => {
    if (typeof a[0] !== 'string') throw new PyError('TypeError', `must be str, not ${typeName(a[0])}`);
    const sub = a[0];
    return sub === '' ? s.length + 1 : s.split(sub).length - 1;
  }),
  join: m<string>((s, a) => {
    const items = iterate(a[0]);
    return items
      .map((x) => {
        if (typeof x !== 'string') throw new PyError('TypeError', `sequence item: expected str instance`);
        return x;
      })
      .join(s);
  }),
  format: m<string>((s, a) => pyFormat(s, a)),
  title: m<string>((s) => pyTitle(s)),
  capitalize: m<string>((s) => (s.length ? s[0]!.toUpperCase() + s.slice(1).toLowerCase() : s)),
  swapcase: m<string>((s) =>
    [...s].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join(''),
  ),
  center: m<string>((s, a) => {
    const w = int(a[0], 'width');
    const fill = a[1] === undefined ? ' ' : pyStr(a[1]);
    if (s.length >= w) return s;
    const pad = w - s.length;
    const left = Math.floor(pad / 2) + (pad & w & 1);
    return fill.repeat(left) + s + fill.repeat(pad - left);
  }),
  ljust: m<string>((s, a) => s.padEnd(int(a[0], 'width'), a[1] === undefined ? ' ' : pyStr(a[1]))),
  rjust: m<string>((s, a) => s.padStart(int(a[0], 'width'), a[1] === undefined ? ' ' : pyStr(a[1]))),
  zfill: m<string>((s, a) => {
    const w = int(a[0], 'width');
    const signed = s.startsWith('-') || s.startsWith('+');
    return signed ? s[0] + s.slice(1).padStart(w - 1, '0') : s.padStart(w, '0');
  }),
  isdigit: m<string>((s) => /^\d+$/.test(s)),
  isnumeric: m<string>((s) => /^\d+$/.test(s)),
  isdecimal: m<string>((s) => /^\d+$/.test(s)),
  isalpha: m<string>((s) => /^\p{L}+$/u.test(s)),
  isalnum: m<string>((s) => /^[\p{L}\d]+$/u.test(s)),
  isspace: m<string>((s) => s.length > 0 && [...s].every((c) => WHITESPACE.includes(c))),
  islower: m<string>((s) => /[a-z]/.test(s) && s === s.toLowerCase()),
  isupper: m<string>((s) => /[A-Z]/.test(s) && s === s.toUpperCase()),
  partition: m<string>((s, a) => {
    const sep = pyStr(a[0]);
    const i = s.indexOf(sep);
    return PyTuple.of2(i < 0 ? [s, '', ''] : [s.slice(0, i), sep, s.slice(i + sep.length)]);
  }),
  rpartition: m<string>((s, a) => {
    const sep = pyStr(a[0]);
    const i = s.lastIndexOf(sep);
    return PyTuple.of2(i < 0 ? ['', '', s] : [s.slice(0, i), sep, s.slice(i + sep.length)]);
  }),
};

function checkListIndex(list: unknown[], i: unknown, what: string): number {
  const n = normIndex(int(i, 'list indices'), list.length);
  if (n < 0 || n >= list.length) throw new PyError('IndexError', `${what} index out of range`);
  return n;
}

const LIST_METHODS: Record<string, Method> = {
  append: m<unknown[]>((l, a) => {
    l.push(a[0]);
    return null;
  }),
  extend: m<unknown[]>((l, a) => {
    l.push(...iterate(a[0]));
    return null;
  }),
  insert: m<unknown[]>((l, a) => {
    let i = normIndex(int(a[0], 'index'), l.length);
    i = Math.min(Math.max(i, 0), l.length);
    l.splice(i, 0, a[1]);
    return null;
  }),
  pop: m<unknown[]>((l, a) => {
    if (l.length === 0) throw new PyError('IndexError', 'pop from empty list');
    const i = a.length ? checkListIndex(l, a[0], 'pop') : l.length - 1;
    return l.splice(i, 1)[0];
  }),
  remove: m<unknown[]>((l, a) => {
    const i = l.findIndex((x) => pyEquals(x, a[0]));
    if (i < 0) throw new PyError('ValueError', 'list.remove(x): x not in list');
    l.splice(i, 1);
    return null;
  }),
  index: m<unknown[]>((l, a) => {
    const i = l.findIndex((x) => pyEquals(x, a[0]));
    if (i < 0) throw new PyError('ValueError', `${pyRepr(a[0])} is not in list`);
    return i;
  }),
  count: m<unknown[]>((l, a) => l.filter((x) => pyEquals(x, a[0])).length),
  reverse: m<unknown[]>((l) => {
    l.reverse();
    return null;
  }),
  sort: m<unknown[]>((l, a) => {
    const [, reverse] = bindArgs('sort', a, ['key', 'reverse'], [null, false]);
    l.sort(pySortKey);
    if (pyTruthy(reverse)) l.reverse();
    return null;
  }),
  copy: m<unknown[]>((l) => [...l]),
  clear: m<unknown[]>((l) => {
    l.length = 0;
    return null;
  }),
};

const TUPLE_METHODS: Record<string, Method> = {
  index: LIST_METHODS.index!,
  count: LIST_METHODS.count!,
};

function checkKey(key: unknown): string {
  if (typeof key === 'string') {
    if (isBlockedName(key)) throw new BlockedError(key);
    return key;
  }
  if (typeof key === 'number' || typeof key === 'boolean' || key === null) return pyStr(key);
  throw new PyError('TypeError', `unhashable type: '${typeName(key)}'`);
}

const DICT_METHODS: Record<string, Method> = {
  items: m<PyDict>((d) =>
    PyView.make(
      'dict_items',
      pyEntries(d).map(([k, v]) => PyTuple.of2([k, v])),
    ),
  ),
  keys: m<PyDict>((d) => PyView.make('dict_keys', pyKeys(d))),
  values: m<PyDict>((d) => PyView.make('dict_values', pyValues(d))),
  get: m<PyDict>((d, a) => {
    const key = checkKey(a[0]);
    return Object.hasOwn(d, key) ? d[key] : a.length > 1 ? a[1] : null;
  }),
  update: m<PyDict>((d, a) => {
    const { positional, kwargs } = splitArgs(a);
    for (const src of positional) {
      if (isDict(src)) for (const [k, v] of pyEntries(src)) pySetItem(d, checkKey(k), v);
      else
        for (const pair of iterate(src))
          pySetItem(d, checkKey((pair as unknown[])[0]), (pair as unknown[])[1]);
    }
    for (const [k, v] of Object.entries(kwargs)) pySetItem(d, checkKey(k), v);
    return null;
  }),
  setdefault: m<PyDict>((d, a) => {
    const key = checkKey(a[0]);
    if (!Object.hasOwn(d, key)) pySetItem(d, key, a.length > 1 ? a[1] : null);
    return d[key];
  }),
  pop: m<PyDict>((d, a) => {
    const key = checkKey(a[0]);
    if (Object.hasOwn(d, key)) {
      const v = d[key];
      delete d[key];
      return v;
    }
    if (a.length > 1) return a[1];
    throw new PyError('KeyError', pyRepr(a[0]));
  }),
  copy: m<PyDict>((d) => copyDict(d)),
  clear: m<PyDict>((d) => {
    for (const k of Object.keys(d)) delete d[k];
    return null;
  }),
};

/** What Jinja2's `for` and list() see when iterating a value. */
export function iterate(value: unknown): unknown[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return [...value];
  if (isDict(value)) return pyKeys(value);
  throw new PyError('TypeError', `'${typeName(value)}' object is not iterable`);
}

function bindMethod(self: unknown, method: Method): (...args: unknown[]) => unknown {
  return (...args: unknown[]) => method(self as never, args);
}

/**
 * `obj.name(...)`: a dict's method even when the dict has a data key of that name (the data
 * wins for plain attribute access, docs/expansion.md, but a call means the method, as in Jinja2).
 */
export function lookupCallee(obj: unknown, key: unknown): unknown {
  if (isDict(obj) && typeof key === 'string' && Object.hasOwn(DICT_METHODS, key) && Object.hasOwn(obj, key)) {
    const value = obj[key];
    if (typeof value !== 'function') return bindMethod(obj, DICT_METHODS[key]!);
  }
  return lookupMember(obj, key);
}

/**
 * `obj.attr` / `obj[key]` as Jinja2 resolves them. Undefined results stay `undefined`
 * (Jinja's Undefined); reading from an undefined value raises, as in Jinja2.
 */
/** Jinja2's `_GroupTuple(grouper, list)` (the groupby filter's items): a tuple with two names. */
export class GroupTuple extends PyTuple {
  /** The key the group was made by (lower-cased unless case-sensitive). */
  dmKey: unknown;
}

export function lookupMember(obj: unknown, key: unknown): unknown {
  if (key instanceof PySlice) return sliceValue(obj, key);
  if (isBlockedName(key)) throw new BlockedError(String(key));
  if (obj === undefined) {
    throw new PyError('UndefinedError', `cannot read '${pyStr(key)}' from an undefined value`);
  }
  if (obj === null) return undefined;
  if (typeof obj === 'string') {
    if (typeof key === 'number') {
      if (!Number.isInteger(key)) return undefined;
      const chars = obj.length === [...obj].length ? obj : [...obj];
      const i = normIndex(key, chars.length);
      return i >= 0 && i < chars.length ? chars[i] : undefined;
    }
    const method =
      typeof key === 'string' && Object.hasOwn(STRING_METHODS, key) ? STRING_METHODS[key] : undefined;
    return method ? bindMethod(obj, method) : undefined;
  }
  if (Array.isArray(obj)) {
    if (typeof key === 'number' || typeof key === 'boolean') {
      const k = Number(key);
      if (!Number.isInteger(k)) return undefined;
      const i = normIndex(k, obj.length);
      return i >= 0 && i < obj.length ? obj[i] : undefined;
    }
    if (obj instanceof GroupTuple && (key === 'grouper' || key === 'list'))
      return obj[key === 'grouper' ? 0 : 1];
    const table = obj instanceof PyTuple ? TUPLE_METHODS : obj instanceof PyView ? {} : LIST_METHODS;
    const method = typeof key === 'string' && Object.hasOwn(table, key) ? table[key] : undefined;
    return method ? bindMethod(obj, method) : undefined;
  }
  if (isDict(obj)) {
    const k = typeof key === 'string' ? key : pyStr(key);
    if (Object.hasOwn(obj, k)) {
      const value = obj[k];
      if (typeof value === 'function')
        return (...args: unknown[]) => (value as (...a: unknown[]) => unknown)(...args);
      return value;
    }
    const method =
      typeof key === 'string' && Object.hasOwn(DICT_METHODS, key) ? DICT_METHODS[key] : undefined;
    return method ? bindMethod(obj, method) : undefined;
  }
  return undefined;
}

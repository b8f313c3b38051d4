/**
 * Jinja2's built-in filters, tests and globals, re-implemented over the Python value model
 * (client/src/python/values.ts) so that they give Jinja2's results, not nunjucks'. Only what is listed here
 * exists: a template using another filter or test is rejected when it is compiled.
 */

import {
  checkHashable,
  isDict,
  isFloat,
  makeFloat,
  num,
  type PyDict,
  PyError,
  PyFloat,
  PyIter,
  PyTuple,
  percentFormat,
  pyAdd,
  pyEntries,
  pyEquals,
  pyIn,
  pyJsonDumps,
  pySetItem,
  pySortKey,
  pyStr,
  pyTruthy,
  typeName,
} from '../../python/values.js';
import { filesizeformat, groupby, pprint, urlize, wordwrap, xmlattr } from './filters-text.js';
import { bindArgs, iterate, lookupMember, pyReplace, pySplitLines, splitArgs } from './python-methods.js';

type Fn = (...args: unknown[]) => unknown;

function toText(value: unknown): string {
  return pyStr(value);
}

function length(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value === 'string') return [...value].length;
  if (value instanceof PyIter) {
    throw new PyError('TypeError', "object of type 'generator' has no len()");
  }
  if (Array.isArray(value)) return value.length;
  if (isDict(value)) return Object.keys(value).length;
  throw new PyError('TypeError', `object of type '${typeName(value)}' has no len()`);
}

function attrGetter(attribute: unknown): (item: unknown) => unknown {
  if (attribute === null || attribute === undefined) return (x) => x;
  const parts = typeof attribute === 'number' ? [attribute] : String(attribute).split('.');
  return (item) => {
    let v = item;
    for (const p of parts) {
      const key = typeof p === 'string' && /^\d+$/.test(p) && Array.isArray(v) ? Number(p) : p;
      v = v === undefined ? undefined : lookupMember(v, key);
    }
    return v;
  };
}

function lowerIfText(v: unknown, caseSensitive: boolean): unknown {
  return !caseSensitive && typeof v === 'string' ? v.toLowerCase() : v;
}

/** Python's round(): correctly rounded, ties to even. */
function pyRound(x: number, digits: number): number {
  const factor = 10 ** digits;
  const scaled = x * factor;
  const floor = Math.floor(scaled);
  const diff = scaled - floor;
  let r: number;
  if (Math.abs(diff - 0.5) < 1e-9 && Number((x * factor).toPrecision(15)) === floor + 0.5) {
    r = floor % 2 === 0 ? floor : floor + 1;
  } else r = Math.round(scaled);
  return r / factor;
}

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Python's int(text, base) (whitespace, sign, `0x`/`0o`/`0b` prefixes, `_` between digits), or undefined where it raises. */
function pyIntOf(text: string, base: number): bigint | undefined {
  if (!Number.isInteger(base) || (base !== 0 && (base < 2 || base > 36))) return undefined;
  const m = /^([-+]?)(.*)$/s.exec(text.trim())!;
  let body = m[2]!.toLowerCase();
  let b = base;
  const prefix = /^0([xob])/.exec(body);
  const prefixBase = prefix ? { x: 16, o: 8, b: 2 }[prefix[1] as 'x' | 'o' | 'b'] : undefined;
  if (prefix && (b === 0 || b === prefixBase)) {
    b = prefixBase!;
    body = body.slice(2);
    if (body.startsWith('_')) body = body.slice(1);
  } else if (b === 0) {
    b = 10;
    if (/^0+(_?0)*$/.test(body)) return 0n;
    if (body.startsWith('0')) return undefined;
  }
  const digit = `[${DIGITS.slice(0, b)}]`;
  if (!new RegExp(`^${digit}(_?${digit})*$`).test(body)) return undefined;
  let n = 0n;
  for (const c of body.replace(/_/g, '')) n = n * BigInt(b) + BigInt(DIGITS.indexOf(c));
  return m[1] === '-' ? -n : n;
}

/** Python's float(text), or undefined where it raises. */
function pyFloatOf(text: string): number | undefined {
  const s = text.trim();
  const d = '\\d(?:_?\\d)*';
  if (new RegExp(`^[-+]?(?:${d}(?:\\.(?:${d})?)?|\\.${d})(?:e[-+]?${d})?$`, 'i').test(s))
    return Number(s.replace(/_/g, ''));
  if (/^[-+]?(inf|infinity)$/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (/^[-+]?nan$/i.test(s)) return Number.NaN;
  return undefined;
}

/** A Python int as dm's number: one a JavaScript number cannot hold exactly fails, never rounds. */
function exactInt(n: bigint): number {
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new PyError('OverflowError', `the integer ${n} is larger than dm renders exactly`);
  }
  return Number(n);
}

/** Jinja2's `int` filter: int(value, base) for text, int(value) else, then int(float(value)), else the default. */
function toInt(value: unknown, dflt: unknown, base: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number' || value instanceof PyFloat) {
    const x = num(value);
    if (Number.isNaN(x)) return dflt;
    if (!Number.isFinite(x)) throw new PyError('OverflowError', 'cannot convert float infinity to integer');
    return exactInt(BigInt(Math.trunc(x)));
  }
  if (typeof value !== 'string') return dflt;
  const n = pyIntOf(value, num(base));
  if (n !== undefined) return exactInt(n);
  const x = pyFloatOf(value);
  if (x === undefined || !Number.isFinite(x)) return dflt;
  return exactInt(BigInt(Math.trunc(x)));
}

function toFloat(value: unknown, dflt: unknown): unknown {
  if (typeof value === 'string') {
    const x = pyFloatOf(value);
    return x === undefined ? dflt : Number.isFinite(x) ? makeFloat(x) : x;
  }
  if (typeof value === 'boolean') return makeFloat(value ? 1 : 0);
  if (typeof value === 'number' || value instanceof PyFloat) return makeFloat(num(value));
  return dflt;
}

function indent(s: unknown, args: unknown[]): string {
  const [width, first, blank] = bindArgs('indent', args, ['width', 'first', 'blank'], [4, false, false]);
  const indention = typeof width === 'string' ? width : ' '.repeat(num(width));
  if (typeof s !== 'string') {
    // Jinja2 does `s += "\n"`, which only strings survive.
    throw new PyError('TypeError', `indent expects a string, got ${typeName(s)}`);
  }
  const text = `${s}\n`;
  let rv: string;
  if (pyTruthy(blank)) rv = pySplitLines(text).join(`\n${indention}`);
  else {
    const lines = pySplitLines(text);
    rv = lines.shift() ?? '';
    if (lines.length) rv += `\n${lines.map((l) => (l ? indention + l : l)).join('\n')}`;
  }
  return pyTruthy(first) ? indention + rv : rv;
}

function htmlSafeJson(value: unknown, indentArg: unknown): string {
  const text = pyJsonDumps(value, {
    sortKeys: true,
    ...(indentArg === null || indentArg === undefined ? {} : { indent: num(indentArg) }),
  });
  return text
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/'/g, '\\u0027');
}

function sortItems(
  items: unknown[],
  reverse: unknown,
  caseSensitive: unknown,
  attribute: unknown,
): unknown[] {
  const get = attrGetter(attribute);
  const cs = pyTruthy(caseSensitive);
  const out = [...items].sort((a, b) => pySortKey(lowerIfText(get(a), cs), lowerIfText(get(b), cs)));
  return pyTruthy(reverse) ? out.reverse() : out;
}

/** Python's max()/min(): the first of the largest (smallest) items; undefined when empty. */
function extreme(items: unknown[], caseSensitive: unknown, attribute: unknown, sign: 1 | -1): unknown {
  const get = attrGetter(attribute);
  const cs = pyTruthy(caseSensitive);
  let best: unknown;
  let bestKey: unknown;
  items.forEach((item, i) => {
    const key = lowerIfText(get(item), cs);
    if (i === 0 || sign * pySortKey(key, bestKey) > 0) {
      best = item;
      bestKey = key;
    }
  });
  return best;
}

function testFunction(name: string): (v: unknown, ...args: unknown[]) => boolean {
  const test = TESTS[name];
  if (!test) throw new PyError('TemplateRuntimeError', `No test named '${name}'`);
  return test;
}

/** `select`/`reject` with a test name, or truthiness. */
function selectBy(
  items: unknown,
  args: unknown[],
  keep: boolean,
  attribute: ((x: unknown) => unknown) | undefined,
): PyIter {
  const { positional } = splitArgs(args);
  const [testName, ...testArgs] = positional;
  const get = attribute ?? ((x: unknown) => x);
  const predicate =
    testName === undefined
      ? (x: unknown) => pyTruthy(get(x))
      : (x: unknown) => testFunction(String(testName))(get(x), ...testArgs);
  // Jinja2 guards with `if value:`: a falsy value selects nothing instead of failing.
  if (!pyTruthy(items)) return PyIter.from2([]);
  return PyIter.from2(iterate(items).filter((x) => predicate(x) === keep));
}

export const FILTERS: Record<string, Fn> = {
  abs: (v) => (v instanceof PyFloat ? new PyFloat(Math.abs(v.value)) : Math.abs(num(v))),
  // getattr only: a dict's keys are not attributes.
  attr: (v, name) =>
    v === undefined || (isDict(v) && Object.hasOwn(v, String(name))) ? undefined : lookupMember(v, name),
  batch: (v, ...a) => {
    const [size, fill] = bindArgs('batch', a, ['linecount', 'fill_with'], [null]);
    const n = num(size);
    const items = [...iterate(v)];
    const out: unknown[][] = [];
    for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
    const last = out[out.length - 1];
    if (fill !== null && last) while (last.length < n) last.push(fill);
    return PyIter.from2(out);
  },
  capitalize: (v) => {
    const s = toText(v);
    return s.length ? s[0]!.toUpperCase() + s.slice(1).toLowerCase() : s;
  },
  center: (v, w = 80) => {
    const s = toText(v);
    const width = num(w);
    if (s.length >= width) return s;
    const pad = width - s.length;
    const left = Math.floor(pad / 2) + (pad & width & 1);
    return ' '.repeat(left) + s + ' '.repeat(pad - left);
  },
  count: (v) => length(v),
  d: (v, ...a) => FILTERS.default!(v, ...a),
  default: (v, ...a) => {
    const [dflt, boolean] = bindArgs('default', a, ['default_value', 'boolean'], ['', false]);
    if (v === undefined || (pyTruthy(boolean) && !pyTruthy(v))) return dflt;
    return v;
  },
  dictsort: (v, ...a) => {
    const [caseSensitive, by, reverse] = bindArgs(
      'dictsort',
      a,
      ['case_sensitive', 'by', 'reverse'],
      [false, 'key', false],
    );
    if (!isDict(v)) throw new PyError('TypeError', 'dictsort expects a dict');
    const pos = by === 'value' ? 1 : 0;
    const items = pyEntries(v).map(([k, x]) => PyTuple.of2([k, x]));
    const cs = pyTruthy(caseSensitive);
    items.sort((x, y) => pySortKey(lowerIfText(x[pos], cs), lowerIfText(y[pos], cs)));
    return pyTruthy(reverse) ? items.reverse() : items;
  },
  e: (v) => FILTERS.escape!(v),
  escape: (v) =>
    toText(v)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&#34;')
      .replace(/'/g, '&#39;'),
  first: (v) => {
    if (v === undefined) return undefined;
    const items = iterate(v);
    return items.length ? items[0] : undefined;
  },
  float: (v, ...a) => {
    const [dflt] = bindArgs('float', a, ['default'], [new PyFloat(0)]);
    if (v === undefined) throw new PyError('UndefinedError', 'float() of an undefined value');
    return toFloat(v, dflt);
  },
  format: (v, ...a) => {
    const { positional, kwargs } = splitArgs(a);
    const fmt = toText(v);
    if (Object.keys(kwargs).length) return percentFormat(fmt, kwargs);
    return percentFormat(fmt, PyTuple.of2(positional));
  },
  indent: (v, ...a) => indent(v, a),
  int: (v, ...a) => {
    const [dflt, base] = bindArgs('int', a, ['default', 'base'], [0, 10]);
    if (v === undefined) throw new PyError('UndefinedError', 'int() of an undefined value');
    return toInt(v, dflt, base);
  },
  items: (v) => {
    if (v === undefined) return PyIter.from2([]);
    if (!isDict(v)) throw new PyError('TypeError', `items filter expects a dict, got ${typeName(v)}`);
    return PyIter.from2(pyEntries(v).map(([k, x]) => PyTuple.of2([k, x])));
  },
  join: (v, ...a) => {
    const [sep, attribute] = bindArgs('join', a, ['d', 'attribute'], ['', null]);
    const get = attrGetter(attribute);
    return iterate(v)
      .map((x) => toText(get(x)))
      .join(toText(sep));
  },
  last: (v) => {
    if (v instanceof PyIter) throw new PyError('TypeError', "'generator' object is not reversible");
    const items = iterate(v);
    return items.length ? items[items.length - 1] : undefined;
  },
  length: (v) => length(v),
  list: (v) => [...iterate(v)],
  lower: (v) => toText(v).toLowerCase(),
  map: (v, ...a) => {
    const { positional, kwargs } = splitArgs(a);
    const items = pyTruthy(v) ? iterate(v) : [];
    if (positional.length === 0) {
      const get = attrGetter(kwargs.attribute);
      const dflt = kwargs.default;
      return PyIter.from2(
        items.map((x) => {
          const r = get(x);
          return r === undefined && 'default' in kwargs ? dflt : r;
        }),
      );
    }
    const [name, ...rest] = positional;
    const filter = FILTERS[String(name)];
    if (!filter) throw new PyError('TemplateRuntimeError', `No filter named '${String(name)}'`);
    return PyIter.from2(items.map((x) => filter(x, ...rest)));
  },
  max: (v, ...a) => {
    const [caseSensitive, attribute] = bindArgs('max', a, ['case_sensitive', 'attribute'], [false, null]);
    return extreme(iterate(v), caseSensitive, attribute, 1);
  },
  min: (v, ...a) => {
    const [caseSensitive, attribute] = bindArgs('min', a, ['case_sensitive', 'attribute'], [false, null]);
    return extreme(iterate(v), caseSensitive, attribute, -1);
  },
  pprint: (v) => pprint(v),
  reject: (v, ...a) => selectBy(v, a, false, undefined),
  rejectattr: (v, attr, ...a) => selectBy(v, a, false, attrGetter(attr)),
  replace: (v, ...a) => {
    const [old, rep, count] = bindArgs('replace', a, ['old', 'new', 'count'], [null]);
    return pyReplace(toText(v), toText(old), toText(rep), count);
  },
  reverse: (v) => {
    if (typeof v === 'string') return [...v].reverse().join('');
    return PyIter.from2([...iterate(v)].reverse());
  },
  round: (v, ...a) => {
    const [precision, method] = bindArgs('round', a, ['precision', 'method'], [0, 'common']);
    const x = num(v);
    const p = num(precision);
    const f = 10 ** p;
    let r: number;
    if (method === 'common') {
      r = pyRound(x, p);
      // round() of an int (or bool) stays an int in Python.
      if (!isFloat(v)) return r;
    } else if (method === 'ceil') r = Math.ceil(x * f) / f;
    else if (method === 'floor') r = Math.floor(x * f) / f;
    else throw new PyError('FilterArgumentError', 'method must be common, ceil or floor');
    return makeFloat(r);
  },
  safe: (v) => v,
  select: (v, ...a) => selectBy(v, a, true, undefined),
  selectattr: (v, attr, ...a) => selectBy(v, a, true, attrGetter(attr)),
  slice: (v, ...a) => {
    const [slices, fill] = bindArgs('slice', a, ['slices', 'fill_with'], [null]);
    const items = [...iterate(v)];
    const n = num(slices);
    const per = Math.floor(items.length / n);
    const extra = items.length % n;
    const out: unknown[][] = [];
    let offset = 0;
    for (let i = 0; i < n; i++) {
      const start = offset + i * per;
      if (i < extra) offset++;
      const end = offset + (i + 1) * per;
      const part = items.slice(start, end);
      if (fill !== null && i >= extra) part.push(fill);
      out.push(part);
    }
    return PyIter.from2(out);
  },
  sort: (v, ...a) => {
    const [reverse, caseSensitive, attribute] = bindArgs(
      'sort',
      a,
      ['reverse', 'case_sensitive', 'attribute'],
      [false, false, null],
    );
    return sortItems(iterate(v), reverse, caseSensitive, attribute);
  },
  string: (v) => toText(v),
  striptags: (v) =>
    toText(v)
      .replace(/<!--.*?-->|<[^>]*>/gs, '')
      .split(/\s+/)
      .filter(Boolean)
      .join(' '),
  sum: (v, ...a) => {
    const [attribute, start] = bindArgs('sum', a, ['attribute', 'start'], [null, 0]);
    const get = attrGetter(attribute);
    let total: unknown = start;
    for (const x of iterate(v)) total = pyAdd(total, get(x));
    return total;
  },
  title: (v) => toText(v).replace(/([^\s\-([{<]+)/g, (w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase()),
  tojson: (v, ...a) => {
    const [ind] = bindArgs('tojson', a, ['indent'], [null]);
    if (v === undefined) throw new PyError('TypeError', 'Object of type Undefined is not JSON serializable');
    return htmlSafeJson(v, ind);
  },
  trim: (v, ...a) => {
    const [chars] = bindArgs('trim', a, ['chars'], [null]);
    return lookupMember(toText(v), 'strip') instanceof Function
      ? (lookupMember(toText(v), 'strip') as Fn)(chars)
      : toText(v);
  },
  truncate: (v, ...a) => {
    const [len, killwords, end, leeway] = bindArgs(
      'truncate',
      a,
      ['length', 'killwords', 'end', 'leeway'],
      [255, false, '...', 5],
    );
    const s = toText(v);
    const n = num(len);
    const e = toText(end);
    if (s.length <= n + num(leeway)) return s;
    if (pyTruthy(killwords)) return s.slice(0, n - e.length) + e;
    const cut = s.slice(0, n - e.length);
    const i = cut.lastIndexOf(' ');
    return (i >= 0 ? cut.slice(0, i) : cut) + e;
  },
  unique: (v, ...a) => {
    const [caseSensitive, attribute] = bindArgs('unique', a, ['case_sensitive', 'attribute'], [false, null]);
    const get = attrGetter(attribute);
    const seen: unknown[] = [];
    const out: unknown[] = [];
    for (const x of iterate(v)) {
      const key = lowerIfText(get(x), pyTruthy(caseSensitive));
      checkHashable(key);
      if (!seen.some((s) => pyEquals(s, key))) {
        seen.push(key);
        out.push(x);
      }
    }
    return PyIter.from2(out);
  },
  upper: (v) => toText(v).toUpperCase(),
  urlencode: (v) => {
    if (isDict(v)) {
      return pyEntries(v)
        .map(([k, x]) => `${encodeURIComponent(k)}=${encodeURIComponent(toText(x))}`)
        .join('&');
    }
    return encodeURIComponent(toText(v)).replace(/%2F/g, '/');
  },
  wordwrap: (v, ...a) => wordwrap(v, a),
  xmlattr: (v, ...a) => xmlattr(v, a),
  urlize: (v, ...a) => urlize(v, a),
  groupby: (v, ...a) => groupby(v, a),
  filesizeformat: (v, ...a) => filesizeformat(v, a),
  wordcount: (v) => (toText(v).match(/\w+/g) ?? []).length,
};

const isInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v);

export const TESTS: Record<string, (v: unknown, ...args: unknown[]) => boolean> = {
  boolean: (v) => typeof v === 'boolean',
  callable: (v) => typeof v === 'function',
  defined: (v) => v !== undefined,
  divisibleby: (v, n) => num(v) % num(n) === 0,
  eq: (v, o) => pyEquals(v, o),
  equalto: (v, o) => pyEquals(v, o),
  '==': (v, o) => pyEquals(v, o),
  escaped: () => false,
  even: (v) => num(v) % 2 === 0,
  false: (v) => v === false,
  filter: (v) => typeof v === 'string' && Object.hasOwn(FILTERS, v),
  float: (v) => isFloat(v),
  ge: (v, o) => num(v) >= num(o),
  gt: (v, o) => num(v) > num(o),
  greaterthan: (v, o) => num(v) > num(o),
  in: (v, seq) => pyIn(v, seq),
  integer: (v) => isInt(v),
  // Jinja2's Undefined has __len__, __getitem__ and __iter__: it is an (empty) sequence.
  iterable: (v) => v === undefined || typeof v === 'string' || Array.isArray(v) || isDict(v),
  le: (v, o) => num(v) <= num(o),
  lower: (v) => typeof v === 'string' && v === v.toLowerCase(),
  lt: (v, o) => num(v) < num(o),
  lessthan: (v, o) => num(v) < num(o),
  mapping: (v) => isDict(v),
  ne: (v, o) => !pyEquals(v, o),
  none: (v) => v === null,
  // bool is a number in Python.
  number: (v) => typeof v === 'number' || typeof v === 'boolean' || v instanceof PyFloat,
  odd: (v) => Math.abs(num(v) % 2) === 1,
  sameas: (v, o) => v === o || (v === null && o === null),
  sequence: (v) => v === undefined || typeof v === 'string' || Array.isArray(v) || isDict(v),
  string: (v) => typeof v === 'string',
  test: (v) => typeof v === 'string' && Object.hasOwn(TESTS, v),
  true: (v) => v === true,
  undefined: (v) => v === undefined,
  upper: (v) => typeof v === 'string' && v === v.toUpperCase(),
};

/** Jinja2's `range()`: integers only. */
function range(...args: unknown[]): number[] {
  for (const a of args) {
    if (!(typeof a === 'number' && Number.isInteger(a)) && typeof a !== 'boolean') {
      throw new PyError('TypeError', `'${typeName(a)}' object cannot be interpreted as an integer`);
    }
  }
  const n = args.map((a) => Number(a));
  const [start, stop, step] =
    n.length === 1 ? [0, n[0]!, 1] : n.length === 2 ? [n[0]!, n[1]!, 1] : [n[0]!, n[1]!, n[2]!];
  if (n.length === 0 || n.length > 3) throw new PyError('TypeError', 'range expected 1 to 3 arguments');
  if (step === 0) throw new PyError('ValueError', 'range() arg 3 must not be zero');
  const count = Math.max(0, Math.ceil((stop - start) / step));
  if (count > 100_000)
    throw new PyError('OverflowError', `range too big (${count} items; at most 100000 in templates)`);
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(start + i * step);
  return out;
}

function dictOf(...args: unknown[]): PyDict {
  const { positional, kwargs } = splitArgs(args);
  const out: PyDict = {};
  for (const src of positional) {
    if (isDict(src)) for (const [k, v] of pyEntries(src)) pySetItem(out, k, v);
    else
      for (const pair of iterate(src)) pySetItem(out, pyStr((pair as unknown[])[0]), (pair as unknown[])[1]);
  }
  for (const [k, v] of Object.entries(kwargs)) pySetItem(out, k, v);
  return out;
}

const NAMESPACES = new WeakSet<object>();

/** Whether `value` came from `namespace()` (the only object `{% set ns.x = … %}` may assign to). */
export function isNamespace(value: unknown): value is PyDict {
  return typeof value === 'object' && value !== null && NAMESPACES.has(value);
}

export function makeGlobals(): PyDict {
  return {
    range,
    dict: dictOf,
    namespace: (...args: unknown[]) => {
      const ns = dictOf(...args);
      NAMESPACES.add(ns);
      return ns;
    },
    lipsum: () => {
      throw new PyError('TemplateRuntimeError', 'lipsum() is random text; dm does not support it');
    },
    cycler: (...items: unknown[]) => {
      let i = 0;
      const c: PyDict = {
        next: () => {
          const v = items[i % items.length];
          i++;
          c.current = items[i % items.length];
          return v;
        },
        reset: () => {
          i = 0;
          c.current = items[0];
          return null;
        },
        current: items[0],
      };
      return c;
    },
    joiner: (sep: unknown = ', ') => {
      let used = false;
      return () => {
        if (!used) {
          used = true;
          return '';
        }
        return sep;
      };
    },
  };
}

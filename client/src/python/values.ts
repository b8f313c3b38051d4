/**
 * Python's value semantics for data seen by Jinja templates (docs/expansion.md, "Jinja"): how values
 * print (`str()` and `repr()`), truthiness, equality, arithmetic with int/float distinction,
 * `%`-formatting and `json.dumps`. Data is plain JSON-like JS (strings, numbers, booleans, null,
 * arrays, plain objects); two wrappers carry what JS cannot: `PyFloat` for a float whose value is
 * integral (`1.0`, which JS would print as `1`) and `PyTuple` for tuples.
 */

/** A Python float with an integral value; non-integral JS numbers are floats already. */
export class PyFloat {
  constructor(readonly value: number) {}
  valueOf(): number {
    return this.value;
  }
  toString(): string {
    return pyFloatRepr(this.value);
  }
  toJSON(): number {
    return this.value;
  }
}

/** A tuple: an array that prints with parentheses. */
export class PyTuple extends Array<unknown> {
  static of2(items: readonly unknown[]): PyTuple {
    const t = new PyTuple();
    for (const item of items) t.push(item);
    return t;
  }
}

/** A dict view (`dict_items([...])`): iterates like a list, prints like Python. */
export class PyView extends Array<unknown> {
  viewName = 'dict_items';
  static make(name: string, items: readonly unknown[]): PyView {
    const v = new PyView();
    v.viewName = name;
    for (const item of items) v.push(item);
    return v;
  }
}

/** A one-shot iterator (what `map`, `select`, `reverse` … return in Jinja2). */
export class PyIter extends Array<unknown> {
  static from2(items: Iterable<unknown>): PyIter {
    const v = new PyIter();
    for (const item of items) v.push(item);
    return v;
  }
}

/** Raised for what Python would raise (TypeError, ValueError, UndefinedError …). */
export class PyError extends Error {
  constructor(
    readonly pyType: string,
    message: string,
  ) {
    super(`${pyType}: ${message}`);
    this.name = 'PyError';
  }
}

export type PyDict = Record<string, unknown>;

/**
 * Key order of a dict whose insertion order JS objects cannot keep: JS lists integer-like keys
 * ("array index" keys: `2`, `10`) first and ascending, Python in insertion order. Only dicts
 * where the two differ carry it (a non-enumerable symbol, invisible to JSON, Ajv and spreads);
 * `pyKeys` reads it. Kept by the YAML reader (document/yaml.ts), dict literals, and pySetItem.
 */
const KEY_ORDER = Symbol('dm.keyOrder');
type Ordered = { [KEY_ORDER]?: string[] };

/** Whether JS orders this key before others (a canonical array index, below 2^32 - 1). */
export function isIndexKey(key: string): boolean {
  const c = key.charCodeAt(0);
  if (c < 48 || c > 57) return false;
  if (!/^(?:0|[1-9][0-9]{0,9})$/.test(key)) return false;
  return key.length < 10 || Number(key) < 4294967295;
}

function setOrder(d: object, order: string[]): void {
  Object.defineProperty(d, KEY_ORDER, {
    value: order,
    enumerable: false,
    configurable: true,
    writable: true,
  });
}

/** The keys of a dict in Python's order (insertion order). */
export function pyKeys(d: object): string[] {
  const order = (d as Ordered)[KEY_ORDER];
  const keys = Object.keys(d);
  if (order === undefined) return keys;
  if (order.length === keys.length && order.every((k) => Object.hasOwn(d, k))) return order.slice();
  // Keys deleted or added behind pySetItem's back: the known order, then the others.
  const seen = new Set<string>();
  const out: string[] = [];
  for (const k of order) {
    if (Object.hasOwn(d, k) && !seen.has(k)) {
      seen.add(k);
      out.push(k);
    }
  }
  for (const k of keys) if (!seen.has(k)) out.push(k);
  setOrder(d, out);
  return out.slice();
}

export function pyEntries(d: PyDict): [string, unknown][] {
  return pyKeys(d).map((k) => [k, d[k]]);
}

export function pyValues(d: PyDict): unknown[] {
  return pyKeys(d).map((k) => d[k]);
}

/** `d[key] = value` keeping Python's insertion order (a new key goes last). */
export function pySetItem(d: PyDict, key: string, value: unknown): void {
  const own = Object.hasOwn(d, key);
  const order = (d as Ordered)[KEY_ORDER];
  if (order !== undefined) {
    if (!own) {
      const at = order.indexOf(key);
      if (at >= 0) order.splice(at, 1);
      order.push(key);
    }
  } else if (!own && isIndexKey(key)) {
    const keys = Object.keys(d);
    const last = keys[keys.length - 1];
    if (last !== undefined && (!isIndexKey(last) || Number(last) > Number(key))) setOrder(d, [...keys, key]);
  }
  if (key === '__proto__') {
    Object.defineProperty(d, key, { value, enumerable: true, configurable: true, writable: true });
  } else d[key] = value;
}

/** A new dict from pairs, in their order (later pairs win, as in Python). */
export function makeDict(pairs: Iterable<readonly [string, unknown]>): PyDict {
  const d: PyDict = {};
  for (const [k, v] of pairs) pySetItem(d, k, v);
  return d;
}

/** A shallow copy of a dict, order kept (`dict(d)`, `d.copy()`). */
export function copyDict(d: PyDict): PyDict {
  const order = (d as Ordered)[KEY_ORDER];
  const out: PyDict = { ...d };
  if (order !== undefined) setOrder(out, pyKeys(d));
  return out;
}

/** A deep copy of data (dicts, lists, scalars) keeping floats and key order. */
export function cloneData(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || value instanceof PyFloat) return value;
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneData(value[i]);
    return value instanceof PyTuple ? PyTuple.of2(out) : out;
  }
  const src = value as PyDict;
  const out: PyDict = {};
  for (const k of Object.keys(src)) {
    if (k === '__proto__') {
      Object.defineProperty(out, k, {
        value: cloneData(src[k]),
        enumerable: true,
        configurable: true,
        writable: true,
      });
    } else out[k] = cloneData(src[k]);
  }
  const order = (src as Ordered)[KEY_ORDER];
  if (order !== undefined) setOrder(out, pyKeys(src));
  return out;
}

/*
 * The wire form of data crossing to a rendering process (docs/expansion.md, "Isolation"): JSON and
 * structured clone keep neither `1.0` nor key order, so a float with an integral value travels as
 * {"\u0000float": n} and a dict whose order matters (or with a key starting with NUL, so that the
 * markers stay unambiguous) as {"\u0000dict": [k1, v1, k2, v2, …]}. The Python runner reads and
 * writes the same form (expand/python/runner-source.ts).
 */
export const WIRE_FLOAT = '\u0000float';
export const WIRE_DICT = '\u0000dict';

function needsWireDict(d: object): boolean {
  if ((d as Ordered)[KEY_ORDER] !== undefined) return true;
  for (const k in d) if (k.charCodeAt(0) === 0) return true;
  return false;
}

/** Whether data holds something only the wire form carries (then send `toWire(data)`). */
export function hasPythonValues(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (value instanceof PyFloat) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasPythonValues(value[i])) return true;
    return false;
  }
  if (needsWireDict(value)) return true;
  for (const k in value) if (hasPythonValues((value as PyDict)[k])) return true;
  return false;
}

export function toWire(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof PyFloat) return { [WIRE_FLOAT]: value.value };
  if (Array.isArray(value)) return value.map(toWire);
  const d = value as PyDict;
  if (needsWireDict(d)) {
    const flat: unknown[] = [];
    for (const k of pyKeys(d)) flat.push(k, toWire(d[k]));
    return { [WIRE_DICT]: flat };
  }
  const out: PyDict = {};
  for (const k of Object.keys(d)) out[k] = toWire(d[k]);
  return out;
}

export function fromWire(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = fromWire(value[i]);
    return value;
  }
  const d = value as PyDict;
  const keys = Object.keys(d);
  if (keys.length === 1) {
    const only = keys[0] as string;
    if (only === WIRE_FLOAT) return new PyFloat(Number(d[only]));
    if (only === WIRE_DICT) {
      const flat = d[only] as unknown[];
      const out: PyDict = {};
      for (let i = 0; i + 1 < flat.length; i += 2) pySetItem(out, String(flat[i]), fromWire(flat[i + 1]));
      return out;
    }
  }
  for (const k of keys) d[k] = fromWire(d[k]);
  return d;
}

export function isDict(value: unknown): value is PyDict {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof PyFloat) {
    return false;
  }
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function isList(value: unknown): value is unknown[] {
  return Array.isArray(value);
}

/** A number that Python sees as a float. */
export function isFloat(value: unknown): boolean {
  return value instanceof PyFloat || (typeof value === 'number' && !Number.isInteger(value));
}

export function isNumber(value: unknown): value is number | PyFloat {
  return (typeof value === 'number' || value instanceof PyFloat) && typeof value !== 'boolean';
}

/** Makes a float result: integral values are wrapped so they keep printing as `x.0`. */
export function makeFloat(n: number): number | PyFloat {
  return Number.isInteger(n) ? new PyFloat(n) : n;
}

export function num(value: unknown): number {
  if (value instanceof PyFloat) return value.value;
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  throw new PyError('TypeError', `expected a number, got ${typeName(value)}`);
}

export function typeName(value: unknown): string {
  if (value === undefined) return 'Undefined';
  if (value === null) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string') return 'str';
  if (value instanceof PyFloat) return 'float';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (value instanceof PyTuple) return 'tuple';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'function') return 'function';
  return 'dict';
}

/** Python's float repr: shortest round-trip digits, scientific below 1e-4 and from 1e16. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const exp = x.toExponential(); // shortest digits that round-trip, e.g. "1.5e-7"
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(exp);
  if (!match) return String(x);
  const sign = match[1] ?? '';
  const digits = (match[2] ?? '') + (match[3] ?? '');
  const e = Number(match[4]);
  if (e < -4 || e >= 16) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const es = Math.abs(e) < 10 ? `0${Math.abs(e)}` : String(Math.abs(e));
    return `${sign}${mantissa}e${e < 0 ? '-' : '+'}${es}`;
  }
  let out: string;
  if (e < 0) out = `0.${'0'.repeat(-e - 1)}${digits}`;
  else if (digits.length > e + 1) out = `${digits.slice(0, e + 1)}.${digits.slice(e + 1)}`;
  else out = `${digits}${'0'.repeat(e + 1 - digits.length)}.0`;
  return sign + out;
}

function numberRepr(value: number): string {
  if (Number.isInteger(value)) {
    return Math.abs(value) < 1e21 ? value.toFixed(0) : BigInt(value).toString();
  }
  return pyFloatRepr(value);
}

/** Python `repr()` of a string: single quotes unless the text has `'` and no `"`. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code >= 0x80 && code <= 0xa0) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

/** Python `repr()`. */
export function pyRepr(value: unknown, seen: Set<unknown> = new Set()): string {
  if (value === undefined) return 'Undefined';
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return pyStrRepr(value);
  if (typeof value === 'number') return numberRepr(value);
  if (value instanceof PyFloat) return pyFloatRepr(value.value);
  if (typeof value === 'function') return '<function>';
  if (typeof value !== 'object') return String(value);
  if (seen.has(value)) return Array.isArray(value) ? '[...]' : '{...}';
  seen.add(value);
  try {
    if (value instanceof PyView) return `${value.viewName}(${pyRepr([...value], seen)})`;
    if (value instanceof PyIter) {
      throw new PyError(
        'TypeError',
        'printing an iterator (the result of map, select, reverse …) is not reproducible; add |list',
      );
    }
    if (value instanceof PyTuple) {
      const items = value.map((v) => pyRepr(v, seen));
      return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
    }
    if (Array.isArray(value)) return `[${value.map((v) => pyRepr(v, seen)).join(', ')}]`;
    if (isDict(value)) {
      return `{${pyEntries(value)
        .map(([k, v]) => `${pyStrRepr(k)}: ${pyRepr(v, seen)}`)
        .join(', ')}}`;
    }
    return '<object>';
  } finally {
    seen.delete(value);
  }
}

/** Python `str()`; Jinja's Undefined prints as the empty string. */
export function pyStr(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  if (typeof value === 'number' && Number.isInteger(value)) return numberRepr(value);
  return pyRepr(value);
}

/** Python truthiness: empty containers, 0, '' and None are false. */
export function pyTruthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (value === true) return true;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (typeof value === 'string') return value.length > 0;
  if (value instanceof PyFloat) return value.value !== 0;
  if (Array.isArray(value)) return value.length > 0;
  if (isDict(value)) return Object.keys(value).length > 0;
  return true;
}

/** Python `==`: deep for containers, 1 == 1.0 == True. */
export function pyEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  const an = typeof a === 'number' || typeof a === 'boolean' || a instanceof PyFloat;
  const bn = typeof b === 'number' || typeof b === 'boolean' || b instanceof PyFloat;
  if (an && bn) return num(a) === num(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a instanceof PyTuple !== b instanceof PyTuple) return false;
    return a.length === b.length && a.every((v, i) => pyEquals(v, b[i]));
  }
  if (isDict(a) && isDict(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && pyEquals(a[k], b[k]));
  }
  return false;
}

function compareValues(a: unknown, b: unknown, op: string): number {
  if (a === undefined || b === undefined)
    throw new PyError('UndefinedError', `an undefined value was compared with '${op}'`);
  const an = typeof a === 'number' || typeof a === 'boolean' || a instanceof PyFloat;
  const bn = typeof b === 'number' || typeof b === 'boolean' || b instanceof PyFloat;
  if (an && bn) return num(a) - num(b);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (
    Array.isArray(a) &&
    Array.isArray(b) &&
    a instanceof PyTuple === b instanceof PyTuple &&
    !(a instanceof PyView) &&
    !(b instanceof PyView)
  ) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      if (!pyEquals(a[i], b[i])) return compareValues(a[i], b[i], op);
    }
    return a.length - b.length;
  }
  throw new PyError(
    'TypeError',
    `'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`,
  );
}

export function pyCompare(op: string, a: unknown, b: unknown): boolean {
  switch (op) {
    case '==':
      return pyEquals(a, b);
    case '!=':
      return !pyEquals(a, b);
    case '<':
      return compareValues(a, b, op) < 0;
    case '<=':
      return compareValues(a, b, op) <= 0;
    case '>':
      return compareValues(a, b, op) > 0;
    case '>=':
      return compareValues(a, b, op) >= 0;
    default:
      throw new PyError('TypeError', `unknown comparison '${op}'`);
  }
}

/** Python sort order for `sort`/`dictsort`: numbers, strings, lists; mixed types raise. */
export function pySortKey(a: unknown, b: unknown): number {
  return compareValues(a, b, '<');
}

function undefinedOperand(op: string): PyError {
  return new PyError('UndefinedError', `an undefined value was used with '${op}'`);
}

function arith(op: string, a: unknown, b: unknown, f: (x: number, y: number) => number): unknown {
  if (a === undefined || b === undefined) throw undefinedOperand(op);
  const x = num(a);
  const y = num(b);
  const r = f(x, y);
  return isFloat(a) || isFloat(b) ? makeFloat(r) : r;
}

function checkNumeric(op: string, a: unknown, b: unknown): void {
  const ok = (v: unknown) => typeof v === 'number' || typeof v === 'boolean' || v instanceof PyFloat;
  if (!ok(a) || !ok(b)) {
    if (a === undefined || b === undefined) throw undefinedOperand(op);
    throw new PyError(
      'TypeError',
      `unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`,
    );
  }
}

export function pyAdd(a: unknown, b: unknown): unknown {
  if (typeof a === 'string' && typeof b === 'string') return a + b;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a instanceof PyTuple !== b instanceof PyTuple || a instanceof PyView || b instanceof PyView) {
      throw new PyError(
        'TypeError',
        `can only concatenate ${typeName(a)} (not "${typeName(b)}") to ${typeName(a)}`,
      );
    }
    const r = [...a, ...b];
    return a instanceof PyTuple ? PyTuple.of2(r) : r;
  }
  if (a === undefined || b === undefined) throw undefinedOperand('+');
  checkNumeric('+', a, b);
  return arith('+', a, b, (x, y) => x + y);
}

export function pySub(a: unknown, b: unknown): unknown {
  checkNumeric('-', a, b);
  return arith('-', a, b, (x, y) => x - y);
}

function isInt(v: unknown): v is number | boolean {
  return typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v));
}

function isSequence(v: unknown): v is string | unknown[] {
  return typeof v === 'string' || Array.isArray(v);
}

function repeat(seq: string | unknown[], times: number | boolean): unknown {
  const n = Number(times);
  if (typeof seq === 'string') return n > 0 ? seq.repeat(n) : '';
  const r: unknown[] = [];
  for (let i = 0; i < n; i++) r.push(...seq);
  return seq instanceof PyTuple ? PyTuple.of2(r) : r;
}

export function pyMul(a: unknown, b: unknown): unknown {
  if (isSequence(a) && isInt(b)) return repeat(a, b);
  if (isSequence(b) && isInt(a)) return repeat(b, a);
  if (isSequence(a) || isSequence(b)) {
    const other = isSequence(a) ? b : a;
    throw new PyError('TypeError', `can't multiply sequence by non-int of type '${typeName(other)}'`);
  }
  checkNumeric('*', a, b);
  return arith('*', a, b, (x, y) => x * y);
}

export function pyDiv(a: unknown, b: unknown): unknown {
  checkNumeric('/', a, b);
  if (num(b) === 0) throw new PyError('ZeroDivisionError', 'division by zero');
  return makeFloat(num(a) / num(b));
}

export function pyFloorDiv(a: unknown, b: unknown): unknown {
  checkNumeric('//', a, b);
  if (num(b) === 0) throw new PyError('ZeroDivisionError', 'integer division or modulo by zero');
  return arith('//', a, b, (x, y) => Math.floor(x / y));
}

export function pyMod(a: unknown, b: unknown): unknown {
  if (typeof a === 'string') return percentFormat(a, b);
  checkNumeric('%', a, b);
  if (num(b) === 0) throw new PyError('ZeroDivisionError', 'integer division or modulo by zero');
  return arith('%', a, b, (x, y) => ((x % y) + y) % y);
}

export function pyPow(a: unknown, b: unknown): unknown {
  checkNumeric('**', a, b);
  const r = num(a) ** num(b);
  return isFloat(a) || isFloat(b) || num(b) < 0 ? makeFloat(r) : r;
}

export function pyNeg(a: unknown): unknown {
  if (a instanceof PyFloat) return new PyFloat(-a.value);
  if (typeof a === 'number') return -a;
  if (typeof a === 'boolean') return a ? -1 : 0;
  throw new PyError('TypeError', `bad operand type for unary -: '${typeName(a)}'`);
}

/** `str % args`, printf-style, as Python does it. */
export function percentFormat(format: string, args: unknown): string {
  const list = args instanceof PyTuple ? [...args] : [args];
  const mapping = isDict(args) ? args : undefined;
  let index = 0;
  const out = format.replace(
    /%(\(([^)]*)\))?([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?([diouxXeEfFgGcrsa%])/g,
    (_m, _g, key: string | undefined, flags: string, width: string | undefined, prec, conv: string) => {
      if (conv === '%') return '%';
      let value: unknown;
      if (key !== undefined) {
        if (!mapping) throw new PyError('TypeError', 'format requires a mapping');
        if (!Object.hasOwn(mapping, key)) throw new PyError('KeyError', pyStrRepr(key));
        value = mapping[key];
      } else {
        if (index >= list.length) throw new PyError('TypeError', 'not enough arguments for format string');
        value = list[index++];
      }
      const precision = prec === undefined ? undefined : Number(prec);
      let text: string;
      switch (conv) {
        case 's':
          text = pyStr(value);
          if (precision !== undefined) text = text.slice(0, precision);
          break;
        case 'r':
        case 'a':
          text = pyRepr(value);
          break;
        case 'd':
        case 'i':
        case 'u':
          text = String(Math.trunc(num(value)));
          break;
        case 'x':
          text = Math.trunc(num(value)).toString(16);
          break;
        case 'X':
          text = Math.trunc(num(value)).toString(16).toUpperCase();
          break;
        case 'o':
          text = Math.trunc(num(value)).toString(8);
          break;
        case 'f':
        case 'F':
          text = num(value).toFixed(precision ?? 6);
          break;
        case 'e':
        case 'E': {
          const t = num(value).toExponential(precision ?? 6);
          text = t.replace(/e([+-])(\d)$/, 'e$10$2');
          if (conv === 'E') text = text.toUpperCase();
          break;
        }
        case 'g':
        case 'G':
          text = pyStr(makeFloat(Number(num(value).toPrecision(precision || 6))));
          text = text.replace(/\.0$/, '');
          break;
        case 'c':
          text = typeof value === 'number' ? String.fromCodePoint(value) : pyStr(value);
          break;
        default:
          text = pyStr(value);
      }
      if (flags.includes('+') && /[dieEfFgG]/.test(conv) && !text.startsWith('-')) text = `+${text}`;
      const w = width === undefined ? 0 : Number(width);
      if (text.length < w) {
        if (flags.includes('-')) text = text.padEnd(w);
        else if (flags.includes('0') && /[dieEfFgGxXo]/.test(conv)) {
          const neg = text.startsWith('-') || text.startsWith('+');
          text = neg ? text[0] + text.slice(1).padStart(w - 1, '0') : text.padStart(w, '0');
        } else text = text.padStart(w);
      }
      return text;
    },
  );
  // Python skips this check when the argument is mapping-like (a dict, a list, Undefined).
  const mappingLike =
    !(args instanceof PyTuple) && (Array.isArray(args) || isDict(args) || args === undefined);
  if (mapping === undefined && !mappingLike && index < list.length) {
    throw new PyError('TypeError', 'not all arguments converted during string formatting');
  }
  return out;
}

/**
 * `json.dumps(value, sort_keys=…, indent=…)` with Python's separators (`, ` and `: `) and
 * `ensure_ascii`.
 */
export function pyJsonDumps(value: unknown, options: { sortKeys?: boolean; indent?: number } = {}): string {
  const indent = options.indent;
  const esc = (s: string): string =>
    // biome-ignore lint/suspicious/noControlCharactersInRegex: json.dumps escapes control characters
    `"${s.replace(/[\\"\u0000-\u001f\u007f-\uffff]/g, (ch) => {
      switch (ch) {
        case '\\':
          return '\\\\';
        case '"':
          return '\\"';
        case '\n':
          return '\\n';
        case '\r':
          return '\\r';
        case '\t':
          return '\\t';
        case '\b':
          return '\\b';
        case '\f':
          return '\\f';
        default: {
          const c = ch.charCodeAt(0);
          return c === 0x7f ? ch : `\\u${c.toString(16).padStart(4, '0')}`;
        }
      }
    })}"`;
  const walk = (v: unknown, level: number): string => {
    if (v === undefined) throw new PyError('TypeError', 'Object of type Undefined is not JSON serializable');
    if (v === null) return 'null';
    if (v === true) return 'true';
    if (v === false) return 'false';
    if (typeof v === 'string') return esc(v);
    if (v instanceof PyFloat) return pyFloatRepr(v.value);
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
      return Number.isInteger(v) ? numberRepr(v) : pyFloatRepr(v);
    }
    const nl = indent === undefined ? '' : `\n${' '.repeat(indent * (level + 1))}`;
    const end = indent === undefined ? '' : `\n${' '.repeat(indent * level)}`;
    const sep = indent === undefined ? ', ' : ',';
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      return `[${nl}${v.map((x) => walk(x, level + 1)).join(sep + nl)}${end}]`;
    }
    if (isDict(v)) {
      let keys = pyKeys(v);
      if (keys.length === 0) return '{}';
      if (options.sortKeys) keys = [...keys].sort();
      return `{${nl}${keys.map((k) => `${esc(k)}: ${walk(v[k], level + 1)}`).join(sep + nl)}${end}}`;
    }
    throw new PyError('TypeError', `Object of type ${typeName(v)} is not JSON serializable`);
  };
  return walk(value, 0);
}

/** Converts template data back to plain JSON-like data (PyFloat → number, tuples → arrays). */
export function toPlain(value: unknown): unknown {
  if (value instanceof PyFloat) return value.value;
  if (Array.isArray(value)) return value.map(toPlain);
  if (isDict(value)) return makeDict(pyKeys(value).map((k) => [k, toPlain(value[k])]));
  return value;
}

/**
 * Replaces every PyFloat in data by its number, in place (for modules that take data as JSON
 * holds it: a PyFloat does not survive structuredClone). Key order is left as it is.
 */
export function plainFloatsInPlace(value: unknown): unknown {
  if (value instanceof PyFloat) return value.value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (v !== null && typeof v === 'object') value[i] = plainFloatsInPlace(v);
    }
  } else {
    const d = value as PyDict;
    for (const k in d) {
      const v = d[k];
      if (v !== null && typeof v === 'object') d[k] = plainFloatsInPlace(v);
    }
  }
  return value;
}

export function checkHashable(value: unknown): void {
  if (isDict(value) || (Array.isArray(value) && !(value instanceof PyTuple))) {
    throw new PyError('TypeError', `unhashable type: '${typeName(value)}'`);
  }
}

/** Python's `in` operator (Jinja's Undefined iterates as empty). */
export function pyIn(needle: unknown, haystack: unknown): boolean {
  if (typeof haystack === 'string') {
    if (typeof needle !== 'string') {
      throw new PyError(
        'TypeError',
        `'in <string>' requires string as left operand, not ${typeName(needle)}`,
      );
    }
    return haystack.includes(needle);
  }
  if (Array.isArray(haystack)) return haystack.some((x) => pyEquals(x, needle));
  if (isDict(haystack)) {
    checkHashable(needle);
    return typeof needle === 'string'
      ? Object.hasOwn(haystack, needle)
      : Object.hasOwn(haystack, pyStr(needle));
  }
  // Jinja2's Undefined iterates as empty.
  if (haystack === undefined) return false;
  throw new PyError('TypeError', `argument of type '${typeName(haystack)}' is not iterable`);
}

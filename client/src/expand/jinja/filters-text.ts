/**
 * Jinja2 3.1 filters that format text (docs/expansion.md, "Jinja: nunjucks with Jinja2's
 * semantics"), ported from Jinja2 and Python's textwrap and pprint so that the output is the
 * same bytes: `urlize`, `wordwrap`, `pprint`, `filesizeformat`, `xmlattr`, `groupby`.
 */
import {
  isDict,
  num,
  PyError,
  PyFloat,
  PyTuple,
  percentFormat,
  pyEntries,
  pyRepr,
  pySortKey,
  pyStr,
  pyStrRepr,
} from '../../python/values.js';
import { bindArgs, GroupTuple, iterate, lookupMember, pySplitLines } from './python-methods.js';

const len = (s: string) => [...s].length;

/** markupsafe.escape of a value's text. */
export function escapeHtml(value: unknown): string {
  return pyStr(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&#34;')
    .replace(/'/g, '&#39;');
}

// ---------------------------------------------------------------- urlize (jinja2/utils.py)

const HTTP_RE =
  /^((https?:\/\/|www\.)(([\p{L}\p{N}_%-]+\.)+)?([a-z]{2,63}|xn--[\p{L}\p{N}_%]{2,59})|([\p{L}\p{N}_%-]{2,63}\.)+(com|net|int|edu|gov|org|info|mil)|(https?:\/\/)((\d{1,3})(\.\d{1,3}){3}|\[([\da-f]{0,4}:){2}([\da-f]{0,4}:?){1,6}\]))(?::\d{1,5})?(?:[/?#]\S*)?$/iu;
const EMAIL_RE = /^\S+@[\p{L}\p{N}_][\p{L}\p{N}_.-]*\.[\p{L}\p{N}_]+$/u;

export function urlize(value: unknown, args: unknown[]): string {
  const [trimLimit, nofollow, target, relArg, extraSchemes] = bindArgs(
    'urlize',
    args,
    ['trim_url_limit', 'nofollow', 'target', 'rel', 'extra_schemes'],
    [null, false, null, null, null],
  );
  const relParts = new Set(
    pyStr(relArg ?? '')
      .split(/\s+/)
      .filter(Boolean),
  );
  if (nofollow) relParts.add('nofollow');
  relParts.add('noopener');
  const rel = [...relParts].sort().join(' ');
  const schemes = extraSchemes === null || extraSchemes === undefined ? [] : iterate(extraSchemes).map(pyStr);
  const trim = (x: string) =>
    trimLimit !== null && trimLimit !== undefined && len(x) > num(trimLimit)
      ? `${[...x].slice(0, num(trimLimit)).join('')}...`
      : x;
  const relAttr = rel ? ` rel="${escapeHtml(rel)}"` : '';
  const targetAttr = target ? ` target="${escapeHtml(target)}"` : '';
  const words = escapeHtml(value).split(/(\s+)/);
  return words
    .map((word) => {
      let head = '';
      let middle = word;
      let tail = '';
      const lead = /^([(<]|&lt;)+/.exec(middle);
      if (lead) {
        head = lead[0];
        middle = middle.slice(lead[0].length);
      }
      if (/([)>.,\n]|&gt;)$/.test(middle)) {
        const m = /([)>.,\n]|&gt;)+$/.exec(middle);
        if (m) {
          tail = m[0];
          middle = middle.slice(0, m.index);
        }
      }
      for (const [open, close] of [
        ['(', ')'],
        ['<', '>'],
        ['&lt;', '&gt;'],
      ] as const) {
        const count = (s: string, sub: string) => s.split(sub).length - 1;
        const starts = count(middle, open);
        if (starts <= count(middle, close)) continue;
        for (let k = Math.min(starts, count(tail, close)); k > 0; k--) {
          const end = tail.indexOf(close) + close.length;
          middle += tail.slice(0, end);
          tail = tail.slice(end);
        }
      }
      if (HTTP_RE.test(middle)) {
        const href =
          middle.startsWith('https://') || middle.startsWith('http://') ? middle : `https://${middle}`;
        middle = `<a href="${href}"${relAttr}${targetAttr}>${trim(middle)}</a>`;
      } else if (middle.startsWith('mailto:') && EMAIL_RE.test(middle.slice(7))) {
        middle = `<a href="${middle}">${middle.slice(7)}</a>`;
      } else if (
        middle.includes('@') &&
        !middle.startsWith('www.') &&
        !middle.includes(':') &&
        EMAIL_RE.test(middle)
      ) {
        middle = `<a href="mailto:${middle}">${middle}</a>`;
      } else {
        for (const scheme of schemes) {
          if (middle !== scheme && middle.startsWith(scheme))
            middle = `<a href="${middle}"${relAttr}${targetAttr}>${middle}</a>`;
        }
      }
      return `${head}${middle}${tail}`;
    })
    .join('');
}

// ---------------------------------------------------------------- wordwrap (Python's textwrap)

const WP = `[\\p{L}\\p{N}_!"'&.,?]`;
const LT = `[^\\d\\P{L}]`;
const WS = '[\\t\\n\\x0b\\x0c\\r ]';
const NWS = '[^\\t\\n\\x0b\\x0c\\r ]';
const WORDSEP = new RegExp(
  `(${WS}+|(?<=${WP})-{2,}(?=[\\p{L}\\p{N}_])|${NWS}+?(?:-(?:(?<=${LT}{2}-)|(?<=${LT}-${LT}-))(?=${LT}-?${LT})|(?=${WS}|$)|(?<=${WP})(?=-{2,}[\\p{L}\\p{N}_])))`,
  'u',
);
const WORDSEP_SIMPLE = new RegExp(`(${WS}+)`, 'u');

function textwrap(text: string, width: number, breakLong: boolean, breakOnHyphens: boolean): string[] {
  if (width <= 0) throw new PyError('ValueError', `invalid width ${width} (must be > 0)`);
  const chunks = text.split(breakOnHyphens ? WORDSEP : WORDSEP_SIMPLE).filter((c) => c);
  chunks.reverse();
  const lines: string[] = [];
  const blank = (s: string) => s.replace(/^[\s]+|[\s]+$/g, '') === '';
  while (chunks.length) {
    const line: string[] = [];
    let size = 0;
    if (blank(chunks[chunks.length - 1]!) && lines.length) chunks.pop();
    while (chunks.length) {
      const l = len(chunks[chunks.length - 1]!);
      if (size + l <= width) {
        line.push(chunks.pop()!);
        size += l;
      } else break;
    }
    if (chunks.length && len(chunks[chunks.length - 1]!) > width) {
      const spaceLeft = width < 1 ? 1 : width - size;
      const chunk = [...chunks[chunks.length - 1]!];
      if (breakLong) {
        let end = spaceLeft;
        if (breakOnHyphens && chunk.length > spaceLeft) {
          const hyphen = chunk.slice(0, spaceLeft).lastIndexOf('-');
          if (hyphen > 0 && chunk.slice(0, hyphen).some((c) => c !== '-')) end = hyphen + 1;
        }
        line.push(chunk.slice(0, end).join(''));
        chunks[chunks.length - 1] = chunk.slice(end).join('');
      } else if (!line.length) line.push(chunks.pop()!);
    }
    if (line.length && blank(line[line.length - 1]!)) {
      size -= len(line[line.length - 1]!);
      line.pop();
    }
    if (line.length) lines.push(line.join(''));
  }
  return lines;
}

export function wordwrap(value: unknown, args: unknown[]): string {
  const [width, breakLong, wrapstring, breakOnHyphens] = bindArgs(
    'wordwrap',
    args,
    ['width', 'break_long_words', 'wrapstring', 'break_on_hyphens'],
    [79, true, null, true],
  );
  const sep = wrapstring === null || wrapstring === undefined ? '\n' : pyStr(wrapstring);
  return pySplitLines(pyStr(value))
    .map((line) => textwrap(line, num(width), Boolean(breakLong), Boolean(breakOnHyphens)).join(sep))
    .join(sep);
}

// ---------------------------------------------------------------- pprint (Python's pprint, width 80)

function sortedEntries(d: Record<string, unknown>): [unknown, unknown][] {
  return pyEntries(d).sort((a, b) => pySortKey(a[0], b[0]));
}

/** repr with dict keys sorted, as pprint's safe_repr. */
function sortedRepr(v: unknown): string {
  if (isDict(v)) {
    return `{${sortedEntries(v)
      .map(([k, x]) => `${sortedRepr(k)}: ${sortedRepr(x)}`)
      .join(', ')}}`;
  }
  if (v instanceof PyTuple) {
    const items = v.map(sortedRepr);
    return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
  }
  if (Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype)
    return `[${v.map(sortedRepr).join(', ')}]`;
  return pyRepr(v);
}

const WIDTH = 80;

function pformat(v: unknown, out: string[], indent: number, allowance: number, level: number): void {
  const rep = sortedRepr(v);
  if (len(rep) <= WIDTH - indent - allowance) {
    out.push(rep);
    return;
  }
  if (isDict(v)) {
    out.push('{');
    const items = sortedEntries(v);
    const inner = indent + 1;
    items.forEach(([k, x], i) => {
      const last = i === items.length - 1;
      const krep = sortedRepr(k);
      out.push(krep, ': ');
      pformat(x, out, inner + len(krep) + 2, last ? allowance + 1 : 1, level + 1);
      if (!last) out.push(`,\n${' '.repeat(inner)}`);
    });
    out.push('}');
  } else if (Array.isArray(v) && (v instanceof PyTuple || Object.getPrototypeOf(v) === Array.prototype)) {
    const tuple = v instanceof PyTuple;
    const end = tuple ? (v.length === 1 ? ',)' : ')') : ']';
    out.push(tuple ? '(' : '[');
    const inner = indent + 1;
    v.forEach((x, i) => {
      const last = i === v.length - 1;
      if (i > 0) out.push(`,\n${' '.repeat(inner)}`);
      pformat(x, out, inner, last ? allowance + end.length : 1, level + 1);
    });
    out.push(end);
  } else if (typeof v === 'string' && v.length > 0) {
    const top = level === 1;
    const ind = top ? indent + 1 : indent;
    const allow = top ? allowance + 1 : allowance;
    const lines = pySplitLines(v, true);
    const chunks: string[] = [];
    let maxWidth1 = WIDTH - ind;
    let lastRep = '';
    lines.forEach((line, i) => {
      lastRep = pyStrRepr(line);
      if (i === lines.length - 1) maxWidth1 -= allow;
      if (len(lastRep) <= maxWidth1) chunks.push(lastRep);
      else {
        const parts = line.match(/\S*\s*/g)!.slice(0, -1);
        let maxWidth2 = WIDTH - ind;
        let current = '';
        parts.forEach((part, j) => {
          const candidate = current + part;
          if (j === parts.length - 1 && i === lines.length - 1) maxWidth2 -= allow;
          if (len(pyStrRepr(candidate)) > maxWidth2) {
            if (current) chunks.push(pyStrRepr(current));
            current = part;
          } else current = candidate;
        });
        if (current) chunks.push(pyStrRepr(current));
      }
    });
    if (chunks.length === 1) {
      out.push(lastRep);
      return;
    }
    if (top) out.push('(');
    out.push(chunks.join(`\n${' '.repeat(ind)}`));
    if (top) out.push(')');
  } else out.push(rep);
}

export function pprint(value: unknown): string {
  const out: string[] = [];
  pformat(value, out, 0, 0, 1);
  return out.join('');
}

// ---------------------------------------------------------------- filesizeformat, xmlattr

export function filesizeformat(value: unknown, args: unknown[]): string {
  const [binary] = bindArgs('filesizeformat', args, ['binary'], [false]);
  const bytes = typeof value === 'string' ? Number(value.trim()) : num(value);
  if (Number.isNaN(bytes) && typeof value === 'string') {
    throw new PyError('ValueError', `could not convert string to float: ${pyStrRepr(value)}`);
  }
  const base = binary ? 1024 : 1000;
  const prefixes = binary
    ? ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB']
    : ['kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
  if (bytes === 1) return '1 Byte';
  if (bytes < base) return `${Math.trunc(bytes)} Bytes`;
  let unit = 0;
  let prefix = '';
  for (const [i, p] of prefixes.entries()) {
    unit = base ** (i + 2);
    prefix = p;
    if (bytes < unit) break;
  }
  return `${percentFormat('%.1f', new PyFloat((base * bytes) / unit))} ${prefix}`;
}

export function xmlattr(value: unknown, args: unknown[]): string {
  const [autospace] = bindArgs('xmlattr', args, ['autospace'], [true]);
  if (!isDict(value))
    throw new PyError('AttributeError', `'${typeof value}' object has no attribute 'items'`);
  const items: string[] = [];
  for (const [key, v] of pyEntries(value)) {
    if (v === null || v === undefined) continue;
    if (/[\s/>=]/.test(String(key))) {
      throw new PyError('ValueError', `Invalid character in attribute name: ${pyRepr(key)}`);
    }
    items.push(`${escapeHtml(key)}="${escapeHtml(v)}"`);
  }
  const rv = items.join(' ');
  return autospace && rv ? ` ${rv}` : rv;
}

// ---------------------------------------------------------------- groupby

export function groupby(value: unknown, args: unknown[]): GroupTuple[] {
  const [attribute, dflt, caseSensitive] = bindArgs(
    'groupby',
    args,
    ['attribute', 'default', 'case_sensitive'],
    [undefined, null, false],
  );
  const parts = typeof attribute === 'number' ? [attribute] : pyStr(attribute).split('.');
  const get = (item: unknown): unknown => {
    let v = item;
    for (const p of parts) {
      const key = typeof p === 'string' && /^\d+$/.test(p) ? Number(p) : p;
      v = v === undefined ? undefined : lookupMember(v, key);
      if (v === undefined && typeof key === 'number') v = lookupMember(item, String(key));
    }
    if (v === undefined) {
      if (dflt !== null) return dflt;
      throw new PyError(
        'UndefinedError',
        `'${isDict(item) ? 'dict' : typeof item} object' has no attribute '${pyStr(attribute)}'`,
      );
    }
    return v;
  };
  const key = (item: unknown) => {
    const k = get(item);
    return !caseSensitive && typeof k === 'string' ? k.toLowerCase() : k;
  };
  const items = iterate(value).map((item) => ({ item, k: key(item) }));
  items.sort((a, b) => pySortKey(a.k, b.k));
  const out: GroupTuple[] = [];
  for (const { item, k } of items) {
    const last = out[out.length - 1];
    if (last && pySortKey(last.dmKey, k) === 0) (last[1] as unknown[]).push(item);
    else {
      const group = new GroupTuple();
      group.push(caseSensitive ? k : get(item), [item]);
      group.dmKey = k;
      out.push(group);
    }
  }
  return out;
}

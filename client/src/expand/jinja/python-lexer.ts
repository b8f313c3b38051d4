/**
 * Jinja2's lexer where nunjucks' differs (docs/expansion.md, "Jinja: nunjucks with Jinja2's
 * semantics"), as a layer over nunjucks' token stream (compat.ts installs it on each parser):
 *
 * - number literals as Python reads them: `1_000`, `0b101`, `0o17`, `0xFF`, `1e10`, `2.5e-3`,
 *   `1_0.5` (nunjucks reads most of them as names); an integer literal beyond what a JavaScript
 *   number holds exactly is refused rather than rounded;
 * - string literals with Python's escapes (`\x00`, `\u00e9`, `\101`, an unknown escape such as
 *   `\d` kept with its backslash); `\N{…}` is refused (dm has no table of Unicode names);
 * - adjacent string literals are one string (`"a" "b"`);
 * - `x.0`, `x.1.name`: an integer after a dot is an index, `x[0]`;
 * - a name that is not a Python identifier (`🐍a`) is a syntax error, worded as Jinja2 words it.
 */

import { PYTHON_CHARACTER_ESCAPES } from '../../python/escapes.js';
import { type NjToken, type NjTokenizer, token } from './nunjucks-internals.js';

/** A syntax error worded as Jinja2 words it, with its line. */
export class LexerSyntaxError extends Error {
  constructor(
    message: string,
    readonly lineno: number,
  ) {
    super(message);
  }
}

// Jinja2's own patterns (jinja2/lexer.py), case-insensitive; the float one first, as Jinja2 tries it.
const FLOAT = /(?:\d+_)*\d+(?:(?:\.(?:\d+_)*\d+)?e[+-]?(?:\d+_)*\d+|\.(?:\d+_)*\d+)/iy;
const INTEGER = /(?:0b(?:_?[01])+|0o(?:_?[0-7])+|0x(?:_?[\da-f])+|[1-9](?:_?\d)*|0(?:_?0)*)/iy;
const IDENTIFIER = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u;
const IDENTIFIER_CHAR = /[\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}_]/u;

function matchAt(re: RegExp, str: string, at: number): string | undefined {
  re.lastIndex = at;
  return re.exec(str)?.[0];
}

/** The integer a Python integer literal denotes, as the decimal text nunjucks' parser reads. */
function integerText(literal: string, lineno: number): string {
  const value = BigInt(literal.replace(/_/g, '').toLowerCase());
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new LexerSyntaxError(
      `integer literal ${literal} is larger than dm renders exactly (${Number.MAX_SAFE_INTEGER})`,
      lineno,
    );
  }
  return value.toString();
}

/** In a string literal also a quote, and a backslash-newline (the line goes on). */
const SIMPLE_ESCAPES: Record<string, string> = {
  ...PYTHON_CHARACTER_ESCAPES,
  "'": "'",
  '"': '"',
  '\n': '',
};

/** A string literal's body read with Python's escapes (Jinja2 decodes with `unicode-escape`). */
export function pythonString(body: string, lineno: number): string {
  if (!body.includes('\\')) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== '\\' || i + 1 >= body.length) {
      out += ch;
      continue;
    }
    const next = body[i + 1]!;
    if (Object.hasOwn(SIMPLE_ESCAPES, next)) {
      out += SIMPLE_ESCAPES[next];
      i++;
    } else if (/[0-7]/.test(next)) {
      const digits = /^[0-7]{1,3}/.exec(body.slice(i + 1))![0];
      out += String.fromCodePoint(Number.parseInt(digits, 8));
      i += digits.length;
    } else if (next === 'x' || next === 'u' || next === 'U') {
      const size = next === 'x' ? 2 : next === 'u' ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + size);
      if (!new RegExp(`^[0-9a-fA-F]{${size}}$`).test(hex) || Number.parseInt(hex, 16) > 0x10ffff) {
        throw new LexerSyntaxError(`invalid \\${next} escape in a string literal`, lineno);
      }
      out += String.fromCodePoint(Number.parseInt(hex, 16));
      i += 1 + size;
    } else if (next === 'N') {
      throw new LexerSyntaxError(
        'a \\N{…} escape (a Unicode character by name) is not supported by dm: write the character itself',
        lineno,
      );
    } else out += ch; // an unknown escape keeps its backslash, as Python's
  }
  return out;
}

/**
 * Wraps a tokenizer's `nextToken` (`base`) with Jinja2's readings above. Tokens read ahead (to
 * join strings, to turn `.0` into `[0]`) wait in a queue.
 */
export function pythonTokens(tz: NjTokenizer, base: () => NjToken | null): () => NjToken | null {
  const queue: NjToken[] = [];
  const make = (type: string, value: string, lineno: number, colno: number): NjToken => ({
    type,
    value,
    lineno,
    colno,
  });
  const advanceTo = (index: number, colno: number) => {
    tz.index = index;
    tz.colno = colno;
  };
  const lexOne = (): NjToken | null => {
    const start = tz.index;
    const colno = tz.colno;
    const inCode = tz.in_code;
    const tok = base();
    if (!tok || !inCode) return tok;
    const str = tz.str;
    if (
      (tok.type === token('TOKEN_INT') ||
        tok.type === token('TOKEN_FLOAT') ||
        tok.type === token('TOKEN_SYMBOL')) &&
      /\d/.test(str[start] ?? '')
    ) {
      const float = matchAt(FLOAT, str, start);
      if (float) {
        advanceTo(start + float.length, colno + float.length);
        return make(token('TOKEN_FLOAT'), String(Number(float.replace(/_/g, ''))), tok.lineno, tok.colno);
      }
      const integer = matchAt(INTEGER, str, start) ?? str[start]!;
      advanceTo(start + integer.length, colno + integer.length);
      return make(token('TOKEN_INT'), integerText(integer, tok.lineno), tok.lineno, tok.colno);
    }
    if (tok.type === token('TOKEN_SYMBOL')) {
      if (!IDENTIFIER.test(tok.value)) {
        const chars = [...tok.value];
        const bad = chars.findIndex((c, i) => !(IDENTIFIER_CHAR.test(c) && (i > 0 || !/\p{Nd}/u.test(c))));
        const offset = chars.slice(0, Math.max(bad, 0)).join('').length;
        throw new LexerSyntaxError(
          `unexpected char '${chars[Math.max(bad, 0)]}' at ${start + offset}`,
          tok.lineno,
        );
      }
      return tok;
    }
    if (tok.type === token('TOKEN_OPERATOR') && tok.value === '.' && /\d/.test(str[tz.index] ?? '')) {
      // `x.0`: an index. Jinja2 reads no float right after a dot.
      const at = tz.index;
      const integer = matchAt(INTEGER, str, at) ?? str[at]!;
      advanceTo(at + integer.length, tz.colno + integer.length);
      queue.push(
        make(token('TOKEN_INT'), integerText(integer, tok.lineno), tok.lineno, tok.colno + 1),
        make(token('TOKEN_RIGHT_BRACKET'), ']', tok.lineno, tok.colno + 1),
      );
      return make(token('TOKEN_LEFT_BRACKET'), '[', tok.lineno, tok.colno);
    }
    if (tok.type === token('TOKEN_STRING')) {
      const raw = str.slice(start, tz.index);
      const closed = raw.length >= 2 && raw.endsWith(raw[0]!);
      return make(
        token('TOKEN_STRING'),
        pythonString(raw.slice(1, closed ? -1 : undefined), tok.lineno),
        tok.lineno,
        tok.colno,
      );
    }
    return tok;
  };
  const next = (): NjToken | null => queue.shift() ?? lexOne();
  return () => {
    const tok = next();
    if (!tok || tok.type !== token('TOKEN_STRING')) return tok;
    // Adjacent string literals are one string; what was read ahead to see it waits in the queue.
    let value = tok.value;
    for (;;) {
      const ahead: NjToken[] = [];
      let t = next();
      while (t && t.type === token('TOKEN_WHITESPACE')) {
        ahead.push(t);
        t = next();
      }
      if (t && t.type === token('TOKEN_STRING')) {
        value += t.value;
        continue;
      }
      if (t) ahead.push(t);
      queue.unshift(...ahead);
      break;
    }
    return value === tok.value ? tok : { ...tok, value };
  };
}

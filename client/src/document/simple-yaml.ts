/**
 * A fast reader for the plain block YAML that templates render (docs/expansion.md, "Speed"):
 * block mappings and sequences, one-line plain, single- and double-quoted scalars, and one-line
 * flow mappings and sequences of those. It gives the value js-yaml gives for such text, or
 * `undefined` for anything else (comments after a value, block scalars, anchors, tags, multi-line
 * scalars, keys that are not plain strings, a duplicated key, odd indentation, characters outside
 * a safe set), and the caller reads that text with the full parser, which also owns every error
 * and warning. yaml.test.ts holds it to the full parser on random documents.
 */
import { pySetItem } from '../python/values.js';

/** Resolves a plain scalar as the schema in use does (yaml.ts passes its PyYAML dialect's). */
export type ResolvePlain = (source: string) => { value: unknown; isString: boolean };

const NOT_SIMPLE = Symbol('not simple');
/** Text with any other character goes to the full parser (tabs, CR, controls, surrogates, BOM). */
const OUTSIDE_SAFE = /[^\n\x20-\x7e\u00a0-\ud7ff\ue000-\ufefe\uff00-\ufffd]/;
/** A block mapping key followed by `:` and a space or the end of the line. */
const BLOCK_KEY = /^([A-Za-z0-9_/][A-Za-z0-9_./-]*):(?: +|$)/;
/** A plain scalar in a flow collection (no `:`, `#`, quotes or flow indicators). */
const FLOW_PLAIN = /^(?:[A-Za-z0-9_./+]|-(?=[A-Za-z0-9_./+]))[A-Za-z0-9_./+ -]*$/;
/** First characters a block plain scalar may not start with (indicators), `-` handled apart. */
const INDICATOR_START = /^(?:[?:,[\]{}#&*!|>'"%@`]|-(?: |$))/;
const MAX_DEPTH = 100;
const MAX_KEY = 1024;

interface Line {
  indent: number;
  /** The line without its indentation and trailing spaces. */
  text: string;
}

class Reader {
  private index = 0;
  constructor(
    private readonly lines: Line[],
    private readonly resolve: ResolvePlain,
  ) {}

  document(): unknown {
    const first = this.lines[0];
    if (first?.indent !== 0) throw NOT_SIMPLE;
    const c = first.text.charCodeAt(0);
    // A document that is one flow collection (`{}`, `[a, b]`).
    const value = c === 0x7b || c === 0x5b ? this.inlineValue(first.text, 0, true) : this.node(0);
    if (this.index !== this.lines.length) throw NOT_SIMPLE;
    return value;
  }

  /** The block collection whose first line is the current one, at its indentation. */
  private node(depth: number): unknown {
    if (depth > MAX_DEPTH) throw NOT_SIMPLE;
    const line = this.lines[this.index] as Line;
    if (isDash(line.text)) return this.sequence(line.indent, depth);
    return this.mapping(line.indent, line.text, depth);
  }

  private sequence(indent: number, depth: number): unknown[] {
    const out: unknown[] = [];
    for (let line = this.lines[this.index]; line && line.indent === indent; line = this.lines[this.index]) {
      if (!isDash(line.text)) break;
      let rest = line.text.slice(1);
      const spaces = rest.length - rest.trimStart().length;
      rest = rest.slice(spaces);
      if (rest === '') {
        // `-` alone: the item is the block below it, or null.
        this.index++;
        const next = this.lines[this.index];
        out.push(next && next.indent > indent ? this.node(depth + 1) : null);
        this.expectNotDeeper(indent);
      } else if (BLOCK_KEY.test(rest)) {
        out.push(this.mapping(indent + 1 + spaces, rest, depth + 1));
      } else {
        out.push(this.inlineValue(rest, depth));
        this.index++;
        this.expectNotDeeper(indent);
      }
    }
    return out;
  }

  /**
   * Entries at `indent`; the first entry's text is `firstText` (the current line's, or what
   * follows a sequence's `- `).
   */
  private mapping(indent: number, firstText: string, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    let text: string | undefined = firstText;
    while (text !== undefined) {
      const match = BLOCK_KEY.exec(text);
      if (!match) throw NOT_SIMPLE;
      const key = match[1] as string;
      if (key.length > MAX_KEY || Object.hasOwn(out, key)) throw NOT_SIMPLE;
      if (!this.resolve(key).isString) throw NOT_SIMPLE;
      const rest = text.slice(match[0].length);
      this.index++;
      let value: unknown;
      if (rest !== '') {
        value = this.inlineValue(rest, depth);
        this.expectNotDeeper(indent);
      } else {
        const next = this.lines[this.index];
        if (next && (next.indent > indent || (next.indent === indent && isDash(next.text)))) {
          value = this.node(depth + 1);
          this.expectNotDeeper(indent);
        } else value = null;
      }
      pySetItem(out, key, value);
      const next = this.lines[this.index];
      text = next && next.indent === indent ? next.text : undefined;
    }
    return out;
  }

  /** The line after a value must not be more indented than its key or `- `. */
  private expectNotDeeper(indent: number): void {
    const next = this.lines[this.index];
    if (next && next.indent > indent) throw NOT_SIMPLE;
  }

  /** A scalar or flow collection that fills the rest of a line. */
  private inlineValue(text: string, depth: number, wholeLine = false): unknown {
    if (wholeLine) this.index++;
    const c = text.charCodeAt(0);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */ || c === 0x22 /* " */ || c === 0x27 /* ' */) {
      const flow = new FlowReader(text, this.resolve);
      const value = flow.value(depth);
      if (!flow.atEnd()) throw NOT_SIMPLE;
      return value;
    }
    if (INDICATOR_START.test(text) || text.includes(': ') || text.includes(' #') || text.endsWith(':'))
      throw NOT_SIMPLE;
    return this.resolve(text).value;
  }
}

function isDash(text: string): boolean {
  return text.charCodeAt(0) === 0x2d && (text.length === 1 || text.charCodeAt(1) === 0x20);
}

/** One-line flow collections and quoted scalars. */
class FlowReader {
  private at = 0;
  constructor(
    private readonly text: string,
    private readonly resolve: ResolvePlain,
  ) {}

  atEnd(): boolean {
    this.spaces();
    return this.at === this.text.length;
  }

  private spaces(): void {
    while (this.text.charCodeAt(this.at) === 0x20) this.at++;
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) throw NOT_SIMPLE;
    this.spaces();
    const c = this.text.charCodeAt(this.at);
    if (c === 0x7b) return this.map(depth + 1);
    if (c === 0x5b) return this.seq(depth + 1);
    if (c === 0x22 || c === 0x27) return this.quoted();
    return this.plain().value;
  }

  private plain(): { value: unknown; isString: boolean } {
    const start = this.at;
    while (this.at < this.text.length && !',]}'.includes(this.text.charAt(this.at))) this.at++;
    const token = this.text.slice(start, this.at).trimEnd();
    if (!FLOW_PLAIN.test(token)) throw NOT_SIMPLE;
    return this.resolve(token);
  }

  private quoted(): string {
    const text = this.text;
    const quote = text.charAt(this.at);
    let end = this.at + 1;
    if (quote === "'") {
      for (;;) {
        end = text.indexOf("'", end);
        if (end === -1) throw NOT_SIMPLE;
        if (text.charAt(end + 1) !== "'") break;
        end += 2;
      }
      const value = text.slice(this.at + 1, end).replaceAll("''", "'");
      this.at = end + 1;
      return value;
    }
    for (;;) {
      const c = text.charAt(end);
      if (c === '') throw NOT_SIMPLE;
      if (c === '"') break;
      end += c === '\\' ? 2 : 1;
    }
    let value: unknown;
    try {
      // JSON's escapes are a subset of YAML's with the same meanings; anything else falls back.
      value = JSON.parse(text.slice(this.at, end + 1));
    } catch {
      throw NOT_SIMPLE;
    }
    this.at = end + 1;
    return value as string;
  }

  /** A key: quoted, or a plain scalar that resolves to a string; then `: `. */
  private key(): string {
    const c = this.text.charCodeAt(this.at);
    let key: string;
    if (c === 0x22 || c === 0x27) key = this.quoted();
    else {
      const start = this.at;
      while (this.at < this.text.length && !':,[]{}'.includes(this.text.charAt(this.at))) this.at++;
      key = this.text.slice(start, this.at);
      if (!FLOW_PLAIN.test(key) || key.endsWith(' ') || !this.resolve(key).isString) throw NOT_SIMPLE;
    }
    if (key.length > MAX_KEY || this.text.charAt(this.at) !== ':' || this.text.charAt(this.at + 1) !== ' ')
      throw NOT_SIMPLE;
    this.at += 2;
    return key;
  }

  private map(depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.at++;
    this.spaces();
    if (this.text.charAt(this.at) === '}') {
      this.at++;
      return out;
    }
    for (;;) {
      this.spaces();
      const key = this.key();
      if (Object.hasOwn(out, key)) throw NOT_SIMPLE;
      pySetItem(out, key, this.value(depth));
      this.spaces();
      const c = this.text.charAt(this.at++);
      if (c === '}') return out;
      if (c !== ',' || this.text.charAt(this.at) !== ' ') throw NOT_SIMPLE;
    }
  }

  private seq(depth: number): unknown[] {
    const out: unknown[] = [];
    this.at++;
    this.spaces();
    if (this.text.charAt(this.at) === ']') {
      this.at++;
      return out;
    }
    for (;;) {
      const item = this.value(depth);
      this.spaces();
      // `[a: b]` is a one-pair mapping in YAML: left to the full parser.
      if (this.text.charAt(this.at) === ':') throw NOT_SIMPLE;
      out.push(item);
      const c = this.text.charAt(this.at++);
      if (c === ']') return out;
      if (c !== ',' || this.text.charAt(this.at) !== ' ') throw NOT_SIMPLE;
    }
  }
}

/**
 * The value of `text` when it is simple block YAML (see above), else `undefined`. `resolve`
 * decides what a plain scalar means (the dialect's implicit tags).
 */
export function parseSimpleYaml(text: string, resolve: ResolvePlain): unknown {
  if (OUTSIDE_SAFE.test(text)) return undefined;
  const lines: Line[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const raw = text.slice(start, end);
    start = end + 1;
    const body = raw.trimStart();
    if (body === '') continue;
    if (body.charCodeAt(0) === 0x23 /* # */) continue;
    const indent = raw.length - body.length;
    // Document markers and directives.
    if (indent === 0 && (body.startsWith('---') || body.startsWith('...') || body.startsWith('%')))
      return undefined;
    lines.push({ indent, text: body.trimEnd() });
  }
  if (lines.length === 0) return undefined;
  try {
    return new Reader(lines, resolve).document();
  } catch (error) {
    if (error === NOT_SIMPLE) return undefined;
    throw error;
  }
}

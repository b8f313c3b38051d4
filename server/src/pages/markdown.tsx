/**
 * Markdown for descriptions and READMEs on the pages (docs/pages.md, "Markdown"), rendered
 * straight to JSX: paragraphs, headings, lists, block quotes, code blocks, rules, and inline code,
 * emphasis, strong and links. There is no raw HTML: a `<b>` in the text is shown as that text,
 * because every piece of data goes in as a JSX text child or attribute, which hono/jsx escapes.
 * Links keep only http(s) and mailto targets (anything else is shown as its text); images are
 * shown as links. Input is cut at MAX_MARKDOWN_BYTES and nesting is bounded; every scan looks at
 * a character a bounded number of times (no search ahead is repeated from each of a run of `[`, `*`
 * or backticks, no regular expression backtracks over a run of spaces), so time and output are
 * linear in the input: a README is untrusted and the pages serve every indexed registry's.
 */
import type { Child } from 'hono/jsx';

/** Longest text rendered; the rest is dropped with a note. */
export const MAX_MARKDOWN_BYTES = 64 * 1024;
const MAX_DEPTH = 8;
/** How far ahead a closing `*`, `_` or backtick run is looked for (keeps the scan linear). */
const WINDOW = 1000;

/** Where `marker` next occurs in `text` from `from`, within WINDOW characters; -1 if not. */
function nextWithin(text: string, marker: string, from: number): number {
  const at = text.slice(from, from + WINDOW).indexOf(marker);
  return at < 0 ? -1 : from + at;
}

type Inline = Child;

const SAFE_URL = /^(?:https?:\/\/[^\s<>"]+|mailto:[^\s<>"]+)$/i;

export function safeUrl(url: string): string | undefined {
  return SAFE_URL.test(url) ? url : undefined;
}

/** Emphasis, code spans, links and escapes of one block's text. */
function inline(text: string, depth = 0): Inline[] {
  const out: Inline[] = [];
  // Per marker, where candidates are already known not to close (see closingMarker).
  const scanned = new Map<string, number>();
  // Where each `[` closes, found in one pass when the first `[` is met (see bracketPairs).
  let pairs: Int32Array | undefined;
  let plain = '';
  const flush = () => {
    if (plain) out.push(plain);
    plain = '';
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1]!)) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === '`') {
      const run = /^`+/.exec(text.slice(i))![0];
      // No search for the same run is repeated over the same characters: one that fails leaves no
      // run as long within WINDOW, so the next run it could meet starts after that window.
      const end = nextWithin(text, run, i + run.length);
      if (end > 0) {
        flush();
        out.push(<code>{text.slice(i + run.length, end).trim() || text.slice(i + run.length, end)}</code>);
        i = end + run.length;
        continue;
      }
      plain += run;
      i += run.length;
      continue;
    }
    if (ch === '<') {
      const auto = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(text.slice(i));
      if (auto) {
        flush();
        out.push(
          <a href={auto[1]} rel="nofollow noopener noreferrer">
            {auto[1]}
          </a>,
        );
        i += auto[0].length;
        continue;
      }
    }
    if ((ch === '[' || (ch === '!' && text[i + 1] === '[')) && depth < MAX_DEPTH) {
      pairs ??= bracketPairs(text);
      const link = linkAt(text, ch === '!' ? i + 1 : i, pairs);
      if (link) {
        flush();
        const label = ch === '!' ? [link.label || link.url] : inline(link.label, depth + 1);
        const href = safeUrl(link.url);
        out.push(
          href ? (
            <a href={href} rel="nofollow noopener noreferrer">
              {label}
            </a>
          ) : (
            <span>{label}</span>
          ),
        );
        i = link.end;
        continue;
      }
    }
    if ((ch === '*' || ch === '_') && depth < MAX_DEPTH) {
      const strong = text.startsWith(ch.repeat(2), i);
      const marker = strong ? ch.repeat(2) : ch;
      const start = i + marker.length;
      const end = closingMarker(text, marker, start, scanned);
      const wordInside = ch === '_' && i > 0 && /[\p{L}\p{N}]/u.test(text[i - 1]!);
      if (end > start && !/\s/.test(text[start]!) && !wordInside) {
        flush();
        const content = inline(text.slice(start, end), depth + 1);
        out.push(strong ? <strong>{content}</strong> : <em>{content}</em>);
        i = end + marker.length;
        continue;
      }
    }
    plain += ch;
    i++;
  }
  flush();
  return out;
}

/**
 * Where `marker` closes emphasis opened before `from`, within WINDOW; -1 if nowhere. Whether a
 * candidate closes depends only on the candidate and its neighbours, so the candidates a failed
 * search rejected are skipped by the next one (`scanned`): the scans of one text stay linear
 * (`*a ` repeated over 64 KiB once took half a second).
 */
function closingMarker(text: string, marker: string, from: number, scanned: Map<string, number>): number {
  const limit = from + WINDOW;
  let at = nextWithin(text, marker, Math.max(from, scanned.get(marker) ?? 0));
  while (at > 0 && at < limit) {
    const before = text[at - 1]!;
    const after = text[at + marker.length];
    const doubled = marker.length === 1 && (after === marker || before === marker);
    // `_` closes only at a word's end (snake_case stays as written).
    const midWord = marker[0] === '_' && after !== undefined && /[\p{L}\p{N}]/u.test(after);
    if (!/\s/.test(before) && !doubled && !midWord) return at;
    at = nextWithin(text, marker, at + marker.length);
  }
  scanned.set(
    marker,
    Math.max(scanned.get(marker) ?? 0, at > 0 ? at : Math.min(limit, text.length) - marker.length + 1),
  );
  return -1;
}

/**
 * For each `[` of `text`, where its matching `]` is (-1: none), brackets after a `\\` left out:
 * one pass with a stack. Escapes are paired from the text's start; for a `[` that inline() reaches
 * (never an escaped one) that is the pairing a scan from the `[` itself would see, because a run of
 * backslashes after it cannot start before it. Looking ahead from each `[` instead cost up to 1,000
 * steps a character on `[[[[…`.
 */
function bracketPairs(text: string): Int32Array {
  const pairs = new Int32Array(text.length).fill(-1);
  const open: number[] = [];
  for (let j = 0; j < text.length; j++) {
    const c = text[j];
    if (c === '\\') j++;
    else if (c === '[') open.push(j);
    else if (c === ']') {
      const at = open.pop();
      if (at !== undefined) pairs[at] = j;
    }
  }
  return pairs;
}

/** How far after `](` a link's destination and title are looked for. */
const DESTINATION_WINDOW = 2100;
const SPACES = /\s*/y;
/** `<url> "title")` after the spaces that follow `(`. */
const DESTINATION = /<?((?:[^\s()<>]|\([^\s()<>]*\))*)>?(?:\s+"[^"]*")?\s*\)/y;
/** `"title")` after `(` and spaces: a link with an empty destination. */
const TITLE_ONLY = /"[^"]*"\s*\)/y;

/**
 * `[label](url "title")` starting at `[`, its `]` within 1,000 characters. The destination is read
 * as the expression `\(\s*<?(…)>?(?:\s+"[^"]*")?\s*\)` would, without its backtracking over the
 * spaces after `(`, which was quadratic in them: after all of them, the rest must match; failing
 * that, `"title")` with an empty destination (the only other way that expression could match).
 */
function linkAt(
  text: string,
  open: number,
  pairs: Int32Array,
): { label: string; url: string; end: number } | undefined {
  const close = pairs[open] ?? -1;
  if (close < 0 || close >= open + 1000 || text[close + 1] !== '(') return undefined;
  const rest = text.slice(close + 1, close + 1 + DESTINATION_WINDOW);
  SPACES.lastIndex = 1;
  SPACES.exec(rest);
  const start = SPACES.lastIndex;
  DESTINATION.lastIndex = start;
  let m = DESTINATION.exec(rest);
  let end = DESTINATION.lastIndex;
  if (!m && start > 1) {
    TITLE_ONLY.lastIndex = start;
    m = TITLE_ONLY.exec(rest);
    end = TITLE_ONLY.lastIndex;
  }
  if (!m) return undefined;
  return { label: text.slice(open + 1, close), url: m[1] ?? '', end: close + 1 + end };
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const HEADING_START = /^ {0,3}(#{1,6})/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const ITEM_START = /^( {0,3})([-*+]|\d{1,9}[.)])\s+/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
/** What `.` does not match in a regular expression: a heading's or an item's text has none. */
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * An ATX heading: its level (count of `#`) and text, as `^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$`
 * matches it, decided without that expression's backtracking, which took time cubic in a run of
 * spaces inside a heading (`# a` and 2,000 spaces and `b`: 4 s). The text is what lies between
 * the spaces after the `#`s and the closing ones (spaces, `#`s, spaces); failing that, a line of
 * `#`s with only spaces and `#`s after them is an empty heading.
 */
function headingOf(line: string): { level: number; text: string } | undefined {
  const start = HEADING_START.exec(line);
  if (!start) return undefined;
  const level = start[1]!.length;
  const rest = line.slice(start[0].length);
  const spaces = /^\s+/.exec(rest);
  if (spaces) {
    const body = rest.slice(spaces[0].length);
    const text = body.slice(0, closingStart(body));
    if (!LINE_BREAK.test(text)) return { level, text };
  }
  return closingStart(rest) === 0 ? { level, text: '' } : undefined;
}

/** Where the longest end of `text` that is spaces, then `#`s, then spaces begins. */
function closingStart(text: string): number {
  let at = text.length;
  while (at > 0 && /\s/.test(text[at - 1]!)) at--;
  while (at > 0 && text[at - 1] === '#') at--;
  while (at > 0 && /\s/.test(text[at - 1]!)) at--;
  return at;
}

/**
 * A list item's indent, marker and text, as `^( {0,3})([-*+]|\d{1,9}[.)])\s+(.*)$` matches it,
 * without that expression's backtracking over the spaces after the marker when the text holds a
 * line separator (quadratic in those spaces).
 */
function listItem(line: string): { indent: number; marker: string; text: string } | undefined {
  const m = ITEM_START.exec(line);
  if (!m) return undefined;
  const text = line.slice(m[0].length);
  return LINE_BREAK.test(text) ? undefined : { indent: m[1]!.length, marker: m[2]!, text };
}

/**
 * Block structure of `lines`. Headings are shifted so the first level is `topLevel` (the page's own
 * h1/h2 stay the outline).
 */
function blocks(lines: string[], topLevel: number, depth: number): Child[] {
  const out: Child[] = [];
  let i = 0;
  let paragraph: string[] = [];
  const endParagraph = () => {
    if (paragraph.length > 0) out.push(<p>{inline(paragraph.join('\n').trim())}</p>);
    paragraph = [];
  };
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      endParagraph();
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      endParagraph();
      const marker = fence[1]!;
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trimStart().startsWith(marker)) body.push(lines[i++]!);
      i++;
      out.push(
        <pre>
          <code>{body.join('\n')}</code>
        </pre>,
      );
      continue;
    }
    const heading = headingOf(line);
    if (heading) {
      endParagraph();
      const level = Math.min(6, topLevel + heading.level - 1);
      const content = inline(heading.text);
      out.push(
        level === 3 ? (
          <h3>{content}</h3>
        ) : level === 4 ? (
          <h4>{content}</h4>
        ) : level === 5 ? (
          <h5>{content}</h5>
        ) : (
          <h6>{content}</h6>
        ),
      );
      i++;
      continue;
    }
    if (RULE.test(line)) {
      endParagraph();
      out.push(<hr />);
      i++;
      continue;
    }
    if (QUOTE.test(line) && depth < MAX_DEPTH) {
      endParagraph();
      const inner: string[] = [];
      while (i < lines.length && lines[i]!.trim() !== '') {
        const q = QUOTE.exec(lines[i]!);
        inner.push(q ? q[1]! : lines[i]!);
        i++;
      }
      out.push(<blockquote>{blocks(inner, topLevel, depth + 1)}</blockquote>);
      continue;
    }
    const item = listItem(line);
    if (item && depth < MAX_DEPTH) {
      endParagraph();
      const ordered = /\d/.test(item.marker[0]!);
      // Siblings are indented no deeper than the first item (the first is always taken, so the
      // loop always moves on: an indented first item once looped forever).
      const indent = Math.max(1, item.indent);
      const items: string[][] = [];
      while (i < lines.length) {
        const current = lines[i]!;
        const m = listItem(current);
        if (m && /\d/.test(m.marker[0]!) === ordered && (items.length === 0 || m.indent <= indent)) {
          items.push([m.text]);
        } else if (current.trim() !== '' && items.length > 0 && !headingOf(current) && !FENCE.test(current)) {
          // A continuation or a nested list: indented lines belong to the item.
          items[items.length - 1]!.push(current.replace(/^ {1,4}/, ''));
        } else if (current.trim() === '' && /^ {2,}\S/.test(lines[i + 1] ?? '')) {
          items[items.length - 1]!.push('');
        } else break;
        i++;
      }
      const rendered = items.map((text) => {
        const nested = blocks(text, topLevel, depth + 1);
        // A one-paragraph item shows its text without the <p>.
        const only = text.every((t) => !listItem(t) && t.trim() !== '');
        return <li>{only ? inline(text.join('\n').trim()) : nested}</li>;
      });
      const start = ordered ? Number.parseInt(item.marker, 10) : 1;
      out.push(ordered ? <ol start={start === 1 ? undefined : start}>{rendered}</ol> : <ul>{rendered}</ul>);
      continue;
    }
    if (/^ {4,}\S/.test(line) && paragraph.length === 0) {
      const body: string[] = [];
      while (i < lines.length && (/^ {4}/.test(lines[i]!) || lines[i]!.trim() === '')) {
        body.push(lines[i]!.slice(4));
        i++;
      }
      while (body.length > 0 && body[body.length - 1]!.trim() === '') body.pop();
      out.push(
        <pre>
          <code>{body.join('\n')}</code>
        </pre>,
      );
      continue;
    }
    paragraph.push(line);
    i++;
  }
  endParagraph();
  return out;
}

/** Cuts `text` to at most `max` UTF-8 bytes, never inside a character. */
function cut(text: string, max: number): { text: string; cut: boolean } {
  if (Buffer.byteLength(text) <= max) return { text, cut: false };
  // The longest prefix that fits, counted in one pass (measuring ever shorter prefixes was
  // quadratic: a README of 100,000 CJK characters took seconds). UTF-8 takes 1 to 3 bytes a
  // UTF-16 unit, 4 a surrogate pair, and 3 a half alone (as Buffer.byteLength counts it).
  let end = 0;
  let bytes = 0;
  while (end < text.length) {
    const c = text.charCodeAt(end);
    if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00) {
      if (bytes + 4 <= max) {
        bytes += 4;
        end += 2;
        continue;
      }
      // A prefix ending on the high half alone (3 bytes) fits: the half is dropped.
      if (bytes + 3 <= max) return { text: text.slice(0, end), cut: true };
      break;
    }
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (bytes + size > max) break;
    bytes += size;
    end++;
  }
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end--;
  return { text: text.slice(0, end), cut: true };
}

/**
 * The JSX of a Markdown text. `topLevel` is the heading level a `#` heading gets (3 by default:
 * the page has its h1 and section h2s).
 */
export function Markdown(props: { text: string; topLevel?: 3 | 4 }) {
  const { text, cut: wasCut } = cut(props.text.replace(/\r\n?/g, '\n'), MAX_MARKDOWN_BYTES);
  return (
    <div class="markdown">
      {blocks(text.split('\n'), props.topLevel ?? 3, 0)}
      {wasCut && <p class="muted">{`(cut at ${MAX_MARKDOWN_BYTES / 1024} KiB)`}</p>}
    </div>
  );
}

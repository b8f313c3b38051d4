/**
 * The pages' Markdown renderer as it was before its scans were made linear (commit 81d6e03), kept
 * ONLY as the oracle of the differential test in markdown.test.ts: on short texts, where its scans
 * are fast, the renderer must give the same HTML. Not used anywhere else; never change it.
 */
import type { Child } from 'hono/jsx';

/** Longest text rendered; the rest is dropped with a note. */
const MAX_MARKDOWN_BYTES = 64 * 1024;
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

function safeUrl(url: string): string | undefined {
  return SAFE_URL.test(url) ? url : undefined;
}

/** Emphasis, code spans, links and escapes of one block's text. */
function inline(text: string, depth = 0): Inline[] {
  const out: Inline[] = [];
  // Per marker, where candidates are already known not to close (see closingMarker).
  const scanned = new Map<string, number>();
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
      const link = linkAt(text, ch === '!' ? i + 1 : i);
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

/** `[label](url "title")` starting at `[`. */
function linkAt(text: string, open: number): { label: string; url: string; end: number } | undefined {
  let level = 0;
  let close = -1;
  for (let j = open; j < text.length && j < open + 1000; j++) {
    const c = text[j];
    if (c === '\\') {
      j++;
      continue;
    }
    if (c === '[') level++;
    else if (c === ']' && --level === 0) {
      close = j;
      break;
    }
  }
  if (close < 0 || text[close + 1] !== '(') return undefined;
  const m = /^\(\s*<?((?:[^\s()<>]|\([^\s()<>]*\))*)>?(?:\s+"[^"]*")?\s*\)/.exec(
    text.slice(close + 1, close + 1 + 2100),
  );
  if (!m) return undefined;
  return { label: text.slice(open + 1, close), url: m[1] ?? '', end: close + 1 + m[0].length };
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;

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
    const heading = HEADING.exec(line);
    if (heading) {
      endParagraph();
      const level = Math.min(6, topLevel + heading[1]!.length - 1);
      const content = inline(heading[2] ?? '');
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
    const item = ITEM.exec(line);
    if (item && depth < MAX_DEPTH) {
      endParagraph();
      const ordered = /\d/.test(item[2]![0]!);
      // Siblings are indented no deeper than the first item (the first is always taken, so the
      // loop always moves on: an indented first item once looped forever).
      const indent = Math.max(1, item[1]!.length);
      const items: string[][] = [];
      while (i < lines.length) {
        const current = lines[i]!;
        const m = ITEM.exec(current);
        if (m && /\d/.test(m[2]![0]!) === ordered && (items.length === 0 || m[1]!.length <= indent)) {
          items.push([m[3]!]);
        } else if (
          current.trim() !== '' &&
          items.length > 0 &&
          !HEADING.test(current) &&
          !FENCE.test(current)
        ) {
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
        const only = text.every((t) => !ITEM.test(t) && t.trim() !== '');
        return <li>{only ? inline(text.join('\n').trim()) : nested}</li>;
      });
      const start = ordered ? Number.parseInt(item[2]!, 10) : 1;
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
  let end = Math.min(text.length, max);
  while (Buffer.byteLength(text.slice(0, end)) > max) end--;
  if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end--;
  return { text: text.slice(0, end), cut: true };
}

/**
 * The JSX of a Markdown text. `topLevel` is the heading level a `#` heading gets (3 by default:
 * the page has its h1 and section h2s).
 */
export function ReferenceMarkdown(props: { text: string; topLevel?: 3 | 4 }) {
  const { text, cut: wasCut } = cut(props.text.replace(/\r\n?/g, '\n'), MAX_MARKDOWN_BYTES);
  return (
    <div class="markdown">
      {blocks(text.split('\n'), props.topLevel ?? 3, 0)}
      {wasCut && <p class="muted">{`(cut at ${MAX_MARKDOWN_BYTES / 1024} KiB)`}</p>}
    </div>
  );
}

/**
 * The pages' Markdown (docs/pages.md, "Markdown") and the "use it" pieces: property-based — for any
 * text, the output has only the allowed tags and attributes, only http(s)/mailto links, and
 * every character of the input's text shows up escaped; the same HTML as the renderer before its
 * scans were made linear (markdown-reference.tsx) on short random texts; hostile texts cost about
 * what a plain one of the same size does — plus cases for the minimal configuration and the source
 * link.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MAX_MARKDOWN_BYTES, Markdown } from '../../server/src/pages/markdown.js';
import { propertyRows } from '../../server/src/pages/properties.js';
import { minimalConfig, sourceLink } from '../../server/src/pages/use-it.js';
import { ReferenceMarkdown } from './markdown-reference.js';

const render = async (text: string) => String(await Markdown({ text }).toString());

const ALLOWED_TAGS = new Set([
  'div',
  'p',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'blockquote',
  'pre',
  'code',
  'hr',
  'em',
  'strong',
  'a',
  'span',
]);

/** Every tag of `html` with its attributes, checked against the allow-list. */
function checkMarkup(html: string): void {
  for (const m of html.matchAll(/<\/?([a-zA-Z0-9]+)([^>]*)>/g)) {
    const [, tag = '', attrs = ''] = m;
    assert.ok(ALLOWED_TAGS.has(tag), `tag <${tag}> in ${html}`);
    for (const a of attrs.matchAll(/\s([a-zA-Z-]+)(?:="([^"]*)")?/g)) {
      const [, name = '', value = ''] = a;
      assert.ok(['href', 'rel', 'class', 'start'].includes(name), `attribute ${name} in ${html}`);
      if (name === 'href') assert.match(value, /^(https?:\/\/|mailto:)/i, html);
    }
  }
  assert.doesNotMatch(html.replace(/<[^>]*>/g, ''), /[<>]/, 'a bare < or > outside a tag');
}

const decode = (text: string) =>
  text
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

const pieces = fc.constantFrom(
  '*',
  '**',
  '_',
  '`',
  '```',
  '[',
  ']',
  '(',
  ')',
  '<',
  '>',
  '"',
  "'",
  '&',
  '#',
  '- ',
  '1. ',
  '> ',
  '\n',
  '\n\n',
  '    ',
  '\\',
  '!',
  'javascript:',
  'https://x.test/',
  'mailto:a@b',
  '<script>',
  '<img src=x onerror=alert(1)>',
  'word',
  ' ',
);

describe('Markdown on the pages', () => {
  it('never emits a tag, attribute or link outside the allow-list, whatever the text (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(pieces, fc.string()), { maxLength: 60 }), async (parts) => {
        checkMarkup(await render(parts.join('')));
      }),
      { numRuns: 400 },
    );
  });

  it('shows every word of a text without links (property)', async () => {
    // Without ( and < there are no links, so no text is moved into an href; without fences no
    // info string (```yaml) is dropped.
    const noLinks = fc.string().map((t) => t.replace(/[(<]/g, ' '));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(pieces, noLinks), { maxLength: 40 }), async (parts) => {
        const text = parts
          .join('')
          .replace(/[(<]/g, ' ')
          .replace(/`{3,}|~{3,}/g, ' ');
        const shown = decode(await render(text));
        for (const word of text.split(/[^A-Za-z0-9]+/)) {
          if (word.length >= 3) assert.ok(shown.includes(word), `${word} missing from ${shown}`);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('ends on a list item indented by 2 or 3 spaces (found by the property above: it once looped until out of memory)', async () => {
    for (const text of ['>    1. > ```- javascript: ', '   - a\n   - b\n - c', '  1. x\n\n  2. y']) {
      const html = await render(text);
      checkMarkup(html);
      assert.match(html, /<li>/, text);
    }
    assert.equal(await render('   - a\n   - b'), '<div class="markdown"><ul><li>a</li><li>b</li></ul></div>');
  });

  it('renders the usual constructs', async () => {
    assert.equal(
      await render('# T\n\nA **b** `c` [d](https://e.test/f) *g*\n\n1. one\n2. two\n\n> q\n\n---\n'),
      '<div class="markdown"><h3>T</h3><p>A <strong>b</strong> <code>c</code> <a href="https://e.test/f" rel="nofollow noopener noreferrer">d</a> <em>g</em></p><ol><li>one</li><li>two</li></ol><blockquote><p>q</p></blockquote><hr/></div>',
    );
  });

  it('cuts text longer than the bound, and stays linear on pathological input', async () => {
    const long = await render('*a '.repeat(MAX_MARKDOWN_BYTES));
    assert.match(long, /\(cut at 64 KiB\)/);
    checkMarkup(await render(`${'['.repeat(30_000)}${'`'.repeat(30_000)}`));
    checkMarkup(await render('> '.repeat(5_000)));
  });
});

/** Pieces of text where links, code spans, emphasis, headings and list items start and end. */
const syntax = fc.constantFrom(
  '[',
  ']',
  '(',
  ')',
  '![',
  '](',
  '!',
  '*',
  '**',
  '_',
  '__',
  '\\',
  '`',
  '``',
  '<',
  '>',
  '"',
  ' ',
  '   ',
  '\t',
  '\n',
  '\n\n',
  '\u2028',
  '#',
  '# ',
  '- ',
  '1. ',
  '> ',
  'a',
  'b c',
  'https://x.test/p',
  'mailto:a@b',
  '<https://x.test>',
);

/** `unit` repeated to `size` characters. */
const fill = (unit: string, size: number) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

/** The least time of `rounds` renderings of each text, taken in turns so both see the same load. */
async function leastTimes(texts: string[], rounds: number): Promise<number[]> {
  const least = texts.map(() => Number.POSITIVE_INFINITY);
  for (let round = 0; round < rounds; round++) {
    for (const [k, text] of texts.entries()) {
      const start = process.hrtime.bigint();
      await render(text);
      least[k] = Math.min(least[k]!, Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  return least;
}

describe('Markdown scans stay linear', () => {
  const reference = async (text: string) => String(await ReferenceMarkdown({ text }).toString());
  const sameAsReference = (parts: fc.Arbitrary<string>, maxLength: number) =>
    fc.asyncProperty(fc.array(parts, { maxLength }), async (pieces) => {
      const text = pieces.join('');
      assert.equal(await render(text), await reference(text), JSON.stringify(text));
    });

  it('gives the same HTML as the renderer before its scans were made linear (differential property)', async () => {
    // Runs of about WINDOW characters put closing markers just inside and just outside the
    // 1,000-character windows.
    const filler = fc.integer({ min: 990, max: 1010 }).map((n) => 'x'.repeat(n));
    await fc.assert(
      sameAsReference(
        fc.oneof({ weight: 12, arbitrary: syntax }, { weight: 2, arbitrary: fc.string() }, filler),
        60,
      ),
      { numRuns: 3000 },
    );
  });

  it('gives the same links as the renderer before, escapes, titles and spaces included (differential property)', async () => {
    const link = fc.constantFrom(
      '[',
      ']',
      '](',
      '(',
      ')',
      '![',
      '\\',
      ' ',
      '  ',
      '"',
      ' "t u"',
      '<',
      '>',
      'a',
      'https://x.test',
    );
    await fc.assert(sameAsReference(link, 30), { numRuns: 4000 });
    const edges = [996, 997, 998, 999, 1000, 1001].flatMap((n) => [
      `[${'x'.repeat(n)}](https://x.test)`,
      `![${'x'.repeat(n)}](https://x.test)`,
      `[a](https://x.test/${'p'.repeat(n + 1084)})`,
      `[a](${' '.repeat(n + 1096)}"t")`,
    ]);
    for (const text of ['[a]( "t t")', '[a](  <https://x.test> "t")', '[a\\]b](https://x.test)', ...edges]) {
      assert.equal(await render(text), await reference(text), text.slice(0, 40));
    }
  });

  it('cuts long texts at the same character as the renderer before, multi-byte and surrogate pairs included (differential property)', async () => {
    // Just over the bound, where the previous cut (measuring ever shorter prefixes) was fast.
    const tail = fc
      .array(fc.constantFrom('a', 'é', '中', '😀', '\uD83D', '\uDE00', '\n', ' '), { maxLength: 12 })
      .map((units) => units.join(''));
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 40 }), tail, async (short, end) => {
        const text = `${'x'.repeat(MAX_MARKDOWN_BYTES - short)}${end}`;
        assert.equal(await render(text), await reference(text), JSON.stringify(end));
      }),
      { numRuns: 300 },
    );
    // A pair that does not fit after a half alone: the half stays, as before.
    const edge = `${'x'.repeat(MAX_MARKDOWN_BYTES - 6)}\uD83D😀`;
    assert.equal(await render(edge), await reference(edge));
  });

  it('renders hostile texts at about the cost of a plain text of the same size (ratio, not time)', {
    timeout: 300_000,
  }, async () => {
    // Each once cost 1,000 steps a character or more: a search ahead from every `[` (links), the
    // destination expression backtracking over spaces, the heading expression (cubic: hours at
    // 64 KiB), the list item one over a run of spaces, and the cut of a text of multi-byte
    // characters (ever shorter prefixes measured: seconds).
    const size = MAX_MARKDOWN_BYTES;
    const hostile: Record<string, string> = {
      'opening brackets': fill('[', size),
      images: fill('![', size),
      'nested brackets': fill('[', size / 2) + fill(']', size / 2),
      'unclosed links': fill('[a](', size),
      'spaces in a destination': fill(`[a](${' '.repeat(2000)}x`, size),
      'spaces in a heading': fill(`# a${' '.repeat(size)}`, size - 1) + 'b',
      'spaces in a list item': fill(`- ${' '.repeat(size)}`, size - 3) + 'x\u2028y',
      'autolink openings': fill('<https://a', size),
      'escaped brackets': fill('\\[', size),
      // Three bytes a character: three times the bound, cut to it.
      'multi-byte characters': fill('中', size),
    };
    const plain = fill('Plain words of a README, with sentences.\n', size);
    const names = Object.keys(hostile);
    const times = await leastTimes([plain, ...names.map((name) => hostile[name]!)], 9);
    const [base = 0, ...rest] = times;
    const ratios = names.map((name, k) => `${name}: ${(rest[k]! / base).toFixed(1)}`);
    // A scan that is not linear costs hundreds of times a plain text at this size; 30 leaves room
    // for a busy machine's noise (the least of nine runs) without letting one through.
    for (const [k, name] of names.entries()) {
      assert.ok(
        rest[k]! <= 30 * base,
        `${name} took ${rest[k]!.toFixed(1)} ms, plain text ${base.toFixed(1)} ms (${ratios.join(', ')})`,
      );
    }
  });
});

describe('the "use it" block and the source link', () => {
  it('the minimal configuration lists required properties without a default', () => {
    const rows = propertyRows({
      required: ['name', 'replicas', 'tls'],
      properties: {
        name: { type: 'string' },
        replicas: { type: 'integer', default: 3 },
        'odd key': { type: 'string' },
        tls: { type: 'object', required: ['secret'], properties: { secret: { type: 'string' } } },
      },
    });
    assert.equal(
      minimalConfig('My_App', 'github.com/o/r/my-app:v1.0', rows),
      'resources:\n- name: my-my-app\n  type: github.com/o/r/my-app:v1.0\n  properties:\n    name:   # required, string\n    tls:   # required, object\n',
    );
    assert.equal(
      minimalConfig('x', 'github.com/o/r/x:v1.0', []),
      'resources:\n- name: my-x\n  type: github.com/o/r/x:v1.0\n',
    );
  });

  it('links GitHub sources at the commit, shows git URLs without credentials, and hides local paths', () => {
    const commit = 'a'.repeat(40);
    assert.deepEqual(
      sourceLink({ sourceType: 'github', source: 'github.com/o/r', path: 'reg' }, 'redis/v1.1', commit),
      {
        kind: 'link',
        label: `github.com/o/r/reg/redis/v1.1 @ ${commit.slice(0, 12)}`,
        href: `https://github.com/o/r/tree/${commit}/reg/redis/v1.1`,
      },
    );
    assert.deepEqual(
      sourceLink(
        { sourceType: 'git', source: 'https://u:secret@git.test/o/r.git?t=1', path: '' },
        'x/v1',
        commit,
      ),
      { kind: 'text', label: `https://git.test/o/r.git x/v1 @ ${commit.slice(0, 12)}` },
    );
    assert.deepEqual(
      sourceLink({ sourceType: 'directory', source: '/srv/reg', path: '' }, 'x/v1', 'dir-1234'),
      {
        kind: 'local',
        commit: null,
      },
    );
    assert.deepEqual(sourceLink({ sourceType: 'git', source: '/srv/repo', path: '' }, 'x/v1', commit), {
      kind: 'local',
      commit,
    });
  });
});

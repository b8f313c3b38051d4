/**
 * The one rule for content names and paths (content-names.ts, docs/registry-layout.md "Paths and
 * names") against an oracle written from the docs, and `printable` (issue 25 items 8, 11, 12).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { pathProblem, printable, registryNameProblem, versionNameProblem } from './content-names.js';

/** The documented rule, written separately: relative, `/`-separated, no empty/./.. segment, ... */
function oracle(path: string): boolean {
  if (path === '' || path.length > 4096 || path.startsWith('/')) return false;
  for (const ch of path) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\' || c < 0x20 || (c >= 0x7f && c <= 0x9f)) return false;
  }
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

const piece = fc.oneof(
  fc.constantFrom(
    'a',
    'web',
    'v1.0.0',
    '..',
    '.',
    '',
    '/',
    '\\',
    '\u0000',
    '\u001b',
    '\u007f',
    '\u0085',
    '\u202e',
    'é',
  ),
  fc.string({ maxLength: 4 }),
);
const candidate = fc.array(piece, { maxLength: 8 }).map((p) => p.join(''));

describe('content names', () => {
  it('pathProblem agrees with the documented rule', () => {
    fc.assert(
      fc.property(candidate, (path) => {
        assert.equal(pathProblem(path) === undefined, oracle(path), JSON.stringify(path));
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses the hostile paths of the issue, with a reason', () => {
    for (const [path, why] of [
      ['../../../../etc/cron.d/pwn', "'..'"],
      ['/abs/file', 'absolute'],
      ['a\u0007b.txt', 'control'],
      ['docs/notes\\old.txt', 'backslash'],
      ['a//b', 'empty'],
    ] as const) {
      assert.match(pathProblem(path) ?? 'accepted', new RegExp(why), path);
    }
    assert.equal(pathProblem('templates/web/v1.0.0/web.jinja'), undefined);
  });

  it('registry and version names: the forms references use', () => {
    assert.equal(registryNameProblem('github.com/acme/templates'), undefined);
    assert.equal(registryNameProblem('localhost:8080/acme/t'), undefined);
    for (const bad of ['../../x', 'github.com/acme/..', 'github.com/acme', '/etc/x/y', 'a/b/c/d', 7]) {
      assert.notEqual(registryNameProblem(bad), undefined, String(bad));
    }
    assert.equal(versionNameProblem({ collection: '', template: 'web', version: 'v1.0.0' }), undefined);
    assert.notEqual(versionNameProblem({ collection: '', template: '..', version: 'v1' }), undefined);
    assert.notEqual(versionNameProblem({ collection: 'a/b', template: 'web', version: 'v1' }), undefined);
    assert.notEqual(versionNameProblem({ collection: '', template: 'web', version: 'latest' }), undefined);
  });

  it('printable leaves no control or bidi character, keeps the rest, and is idempotent', () => {
    const unprintable = {
      test: (text: string) =>
        [...text].some((ch) => {
          const c = ch.codePointAt(0)!;
          return (
            c < 0x20 ||
            (c >= 0x7f && c <= 0x9f) ||
            [0x61c, 0x200e, 0x200f].includes(c) ||
            (c >= 0x202a && c <= 0x202e) ||
            (c >= 0x2066 && c <= 0x2069)
          );
        }),
    };
    fc.assert(
      fc.property(candidate, (text) => {
        const shown = printable(text);
        assert.ok(!unprintable.test(shown), JSON.stringify(shown));
        assert.equal(printable(shown), shown);
        if (!unprintable.test(text)) assert.equal(shown, text);
      }),
      { numRuns: 2000 },
    );
    assert.equal(printable('evil\u202etxt.exe'), 'evil\\u{202e}txt.exe');
    assert.equal(printable('a\u001b[31mb'), 'a\\u{1b}[31mb');
  });
});

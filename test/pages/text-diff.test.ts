/**
 * The diff page's line diff (pages/text-diff.ts): property-based — the edit script rebuilds both
 * texts, hunks cover every change with their line numbers — and the bound on edits.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DiffPage, MAX_LISTED_CHANGES } from '../../server/src/pages/diff-page.js';
import { propertyRows } from '../../server/src/pages/properties.js';
import { hunks, lineOps } from '../../server/src/pages/text-diff.js';
import { MAX_DIFF_READ_BYTES, propertyChanges, versionDiff } from '../../server/src/pages/version-diff.js';

const lines = fc.array(fc.constantFrom('a', 'b', 'c', 'd', ''), { maxLength: 30 });
const text = (l: string[]) => l.map((x) => `${x}\n`).join('');

describe('line diff', () => {
  it('rebuilds both sides from the edit script (property)', () => {
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const ops = lineOps(text(a), text(b), 1000);
        assert.ok(ops);
        assert.deepEqual(
          ops.filter((o) => o.kind !== '+').map((o) => o.line),
          a,
        );
        assert.deepEqual(
          ops.filter((o) => o.kind !== '-').map((o) => o.line),
          b,
        );
        if (text(a) === text(b)) assert.equal(hunks(ops).length, 0);
      }),
      { numRuns: 500 },
    );
  });

  it('hunks hold every change, and their starts are the changed lines minus the context (property)', () => {
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const ops = lineOps(text(a), text(b), 1000)!;
        const hs = hunks(ops);
        const changes = (list: { kind: string }[]) => list.filter((o) => o.kind !== ' ').length;
        assert.equal(
          hs.reduce((n, h) => n + changes(h.ops), 0),
          changes(ops),
        );
        for (const h of hs) {
          const fromLines = h.ops.filter((o) => o.kind !== '+').map((o) => o.line);
          assert.deepEqual(a.slice(h.fromStart - 1, h.fromStart - 1 + fromLines.length), fromLines);
          const toLines = h.ops.filter((o) => o.kind !== '-').map((o) => o.line);
          assert.deepEqual(b.slice(h.toStart - 1, h.toStart - 1 + toLines.length), toLines);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('gives up beyond the edit bound', () => {
    const a = Array.from({ length: 300 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 300 }, (_, i) => `b${i}`);
    assert.equal(lineOps(text(a), text(b), 100), undefined);
    assert.ok(lineOps(text(a), text(b), 600));
  });

  it('names the properties added, removed and changed', () => {
    const from = propertyRows({
      required: ['a'],
      properties: { a: { type: 'string' }, b: { type: 'integer', default: 1 } },
    });
    const to = propertyRows({
      properties: { a: { type: 'string' }, b: { type: 'string', default: 2 }, c: { type: 'boolean' } },
    });
    assert.deepEqual(propertyChanges(from, to), [
      { name: 'a', status: 'changed', detail: 'no longer required' },
      { name: 'b', status: 'changed', detail: 'type integer → string; default 1 → 2' },
      { name: 'c', status: 'added', detail: 'boolean' },
    ]);
  });
});

describe('the diff of two versions at the files bound', () => {
  const SIZE = 60 * 1024;
  const fileList = (side: string) =>
    Array.from({ length: 1000 }, (_, i) => ({
      path: `data/f${String(i).padStart(4, '0')}.yaml`,
      size: SIZE,
      sha256: `${side}${i}`,
    }));

  it(`reads at most ${MAX_DIFF_READ_BYTES} bytes of file text, and says why the rest is not shown`, async () => {
    let read = 0;
    const diff = await versionDiff(fileList('a'), fileList('b'), [], [], async (side, path) => {
      read += SIZE;
      // Every line differs: each file is read in full and shows no diff (over the edit bound).
      return `${`${side} ${path}\n`.repeat(SIZE / 32)}`;
    });
    assert.equal(diff.files.length, 1000);
    assert.ok(read > 0 && read <= MAX_DIFF_READ_BYTES, `${read} bytes read`);
    assert.ok(diff.files.every((f) => f.hunks !== null || f.note !== null));
    assert.match(diff.files.at(-1)?.note ?? '', /reads at most 4 MiB of files/);
  });

  it(`lists at most ${MAX_LISTED_CHANGES} changed files on the page, counting them all`, async () => {
    const diff = await versionDiff(fileList('a'), fileList('b'), [], [], async () => undefined);
    const html = (
      await DiffPage({
        registry: 'local.dm/a/b',
        collection: '',
        name: 'big',
        from: 'v1',
        to: 'v2',
        versions: ['v2', 'v1'],
        diff,
      }).toString()
    ).toString();
    assert.match(html, /0 added, 0 removed, 1000 changed, 0 unchanged; the first 200 are listed/);
    assert.equal((html.match(/<section aria-label="data\/f/g) ?? []).length, MAX_LISTED_CHANGES);
    assert.equal((html.match(/<th scope="row" data-label="Path">/g) ?? []).length, MAX_LISTED_CHANGES);
  });
});

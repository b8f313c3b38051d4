/**
 * The diff page's line diff (pages/text-diff.ts): property-based — the edit script rebuilds both
 * texts, hunks cover every change with their line numbers — and the bound on edits.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { propertyRows } from '../../server/src/pages/properties.js';
import { hunks, lineOps } from '../../server/src/pages/text-diff.js';
import { propertyChanges } from '../../server/src/pages/version-diff.js';

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

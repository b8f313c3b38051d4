import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DmError } from '../error.js';
import { formatMergedYaml, parseMergeDocuments } from './load-documents.js';
import { mergeManyDict, mergeRaw, mergeUserData, parseDefaultMergeHow } from './merge-documents.js';
import { extractMergeHow, parseMergeHowList, parseMergeHowString } from './merge-how.js';
import { type MergeMap, toMergeValue, toPlainValue } from './value.js';
import { mergeValues, mergeValuesFiles } from './values.js';

/** YAML (one document) in the engine's form. */
const y = (text: string) => parseMergeDocuments(text, 'test.yaml')[0];
const plain = (value: unknown) => toPlainValue(value);
const kind = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    if (error instanceof DmError) return error.code;
    throw error;
  }
  return 'no error';
};

describe('parseMergeHowString()', () => {
  it('splits, lower-cases, strips and turns - into _ (docs/merging.md "Specifications")', () => {
    assert.deepEqual(parseMergeHowString('list(append)+dict(no_replace,recurse_list)+str()'), [
      { name: 'list', options: ['append'] },
      { name: 'dict', options: ['no_replace', 'recurse_list'] },
      { name: 'str', options: [] },
    ]);
    assert.deepEqual(parseMergeHowString(' Dict( No-Replace , Recurse-List,, ) '), [
      { name: 'dict', options: ['no_replace', 'recurse_list'] },
    ]);
    assert.deepEqual(parseMergeHowString('++x()+'), [{ name: 'x', options: [] }]);
    assert.deepEqual(parseMergeHowString('dict(a)(b)'), [{ name: 'dict', options: ['a)(b'] }]);
  });
  for (const bad of ['dict', 'dict (replace)', 'dict(replace', '9x()', 'dict(a\nb)']) {
    it(`rejects ${JSON.stringify(bad)} with ValueError`, () => {
      assert.equal(
        kind(() => parseMergeHowString(bad)),
        'ValueError',
      );
    });
  }
});

describe('parseMergeHowList()', () => {
  it('keeps the case of mapping names and settings as given; bare strings index like sequences', () => {
    assert.deepEqual(parseMergeHowList(y('[{name: " Dict-x ", settings: [No_Replace]}]')), [
      { name: 'Dict_x', options: ['No_Replace'] },
    ]);
    assert.deepEqual(parseMergeHowList(['dict']), [{ name: 'd', options: 'ict' }]);
    assert.deepEqual(parseMergeHowList([['list', 'append'], [''], [null]]), [
      { name: 'list', options: ['append'] },
    ]);
  });
  it('raises KeyError for a mapping without name or settings', () => {
    assert.equal(
      kind(() => parseMergeHowList(y('[{name: dict}]'))),
      'KeyError',
    );
    assert.equal(
      kind(() => parseMergeHowList(y('[{settings: []}]'))),
      'KeyError',
    );
  });
});

describe('extractMergeHow()', () => {
  it('reads merge_how, removes it, and leaves merge_type as data', () => {
    const doc = y('{a: 1, merge_how: "dict(replace)", merge_type: "list()"}') as MergeMap;
    const { specs, body } = extractMergeHow(doc);
    assert.deepEqual(specs, [{ name: 'dict', options: ['replace'] }]);
    assert.deepEqual(plain(body), { a: 1, merge_type: 'list()' });
    assert.equal(doc.has('merge_how'), true, 'the input is not changed');
  });
  it('falls back to merge_type when merge_how is null, removing both', () => {
    const { specs, body } = extractMergeHow(y('{merge_how: null, merge_type: "str()", a: 1}') as MergeMap);
    assert.deepEqual(specs, [{ name: 'str', options: [] }]);
    assert.deepEqual([...body.keys()], ['a']);
  });
});

describe('mergeRaw(): the mergers (docs/merging.md "Specifications")', () => {
  const cases: [string, string, string, unknown][] = [
    ['dict()', '{a: 1, n: {x: 1}}', '{a: 2, n: {y: 2}, b: 3}', { a: 1, n: { x: 1, y: 2 }, b: 3 }],
    ['dict(replace)', '{a: 1, n: {x: 1}}', '{a: 2, n: {y: 2}}', { a: 2, n: { y: 2 } }],
    ['dict(no_replace,replace)', '{a: 1}', '{a: 2}', { a: 2 }],
    ['dict(allow_delete)', '{a: 1, b: 2, c: 3}', '{a: null, b: false, d: null}', { b: 2, c: 3, d: null }],
    ['dict()', '{a: 1}', '[1, 2]', { a: 1 }],
    ['dict()+list(append)', '{l: [1]}', '{l: [2]}', { l: [1] }],
    ['dict(recurse_list)+list(append)', '{l: [1]}', '{l: [2]}', { l: [1, 2] }],
    ['dict(recurse_list)+list(prepend)', '{l: [1]}', '{l: {k: v}}', { l: ['k', 1] }],
    ['dict()+list(prepend)', '{l: [1]}', '{l: {k: v, j: w}}', { l: ['k', 'j', 1] }],
    ['dict(recurse_str)+list(append)', '{l: [1]}', '{l: ab}', { l: [1, 'a', 'b'] }],
    ['list()', '[1, 2, 3]', '[a]', ['a', 2, 3]],
    ['list()', '[1, 2]', '[a, b, c]', ['a', 'b']],
    ['list()', '[]', '[a]', []],
    ['list()', '[1]', 'x', 'x'],
    ['list(recurse_dict)+dict()', '[{a: 1}]', '[{b: 2}]', [{ a: 1, b: 2 }]],
    ['list(no_replace)', '[1, 2]', '[a, b, c]', [1, 2]],
    ['list(append,prepend,replace)', '[1]', '[2]', [1, 2]],
    ['str()', 'abc', 'def', 'def'],
    ['str(append)', 'abc', 'def', 'abcdef'],
    ['str()', 'abc', '{a: 1}', { a: 1 }],
    ['list()+str()', '5', '6', 5],
  ];
  for (const [how, a, b, expected] of cases) {
    it(`${how}: ${a} ⊕ ${b}`, () => {
      assert.deepEqual(plain(mergeRaw(y(a), y(b), how)), expected);
    });
  }
  const errors: [string, string, string, string][] = [
    ['str(append)', 'abc', '{a: 1}', 'TypeError'],
    ['list(append)', '[1]', 'null', 'TypeError'],
    ['list(no_replace)', '[1]', '5', 'TypeError'],
    ['list(no_replace)', '[1]', '{a: 1}', 'KeyError'],
    ['list(no_replace)', '[]', '{a: 1}', 'no error'],
    ['dict()+nope()', '{}', '{}', 'ImportError'],
  ];
  for (const [how, a, b, expected] of errors) {
    it(`${how}: ${a} ⊕ ${b} → ${expected}`, () => {
      assert.equal(
        kind(() => mergeRaw(y(a), y(b), how)),
        expected,
      );
    });
  }
  it('names the path of a failing merge and never changes its inputs', () => {
    const a = y('{x: {y: [{z: abc}]}}');
    const b = y('{x: {y: [{z: {k: v}}]}}');
    const before = structuredClone(a);
    assert.throws(
      () => mergeRaw(a, b, 'dict(recurse_list)+list(recurse_dict)+str(append)'),
      (e: unknown) => e instanceof DmError && e.code === 'TypeError' && e.message.includes('at x.y[0].z'),
    );
    mergeRaw(a, b, 'dict(recurse_list)+list(recurse_dict)+str()');
    assert.deepEqual(a, before);
  });
  it('keeps Python key order: survivors in place, new keys at the end, integer-like keys too', () => {
    const out = mergeRaw(y('{c: 1, "2": 1, a: 1}'), y('{z: 2, a: 2, "1": 2}'), 'dict(replace)') as MergeMap;
    assert.deepEqual([...out.keys()], ['c', '2', 'a', 'z', '1']);
    assert.equal(formatMergedYaml(out), "c: 1\n'2': 1\na: 2\nz: 2\n'1': 2\n");
  });
});

describe('mergeUserData()', () => {
  it('merges each part by its own merge_how, defaulting to dict(replace)+list()+str(), skipping failures', () => {
    const { result, skipped } = mergeUserData(
      [
        { document: y('{a: {x: 1}, l: [1]}') },
        { document: y('{a: {y: 2}}') },
        { document: y('{l: [2], merge_how: "dict(recurse_list)+list(append)"}') },
        { document: y('[not, a, mapping]'), source: 'c.yaml' },
        { document: y('{l: {k: v}, merge_how: "dict()+list(no_replace)"}') },
        { document: y('{b: 1}'), headers: { 'Merge-Type': 'list()' } },
      ],
      {},
    );
    assert.deepEqual(plain(result), { a: { y: 2 }, l: [1, 2] });
    assert.deepEqual(
      skipped.map((s) => [s.index, s.code]),
      [
        [3, 'ValueError'],
        [4, 'KeyError'],
      ],
    );
    assert.match(skipped[0]!.message, /^c\.yaml: /);
  });
  it('uses a given default for parts that name none', () => {
    const defaults = parseDefaultMergeHow('dict(no_replace,recurse_list)+list(append)');
    const { result } = mergeUserData([{ document: y('{l: [1]}') }, { document: y('{l: [2]}') }], {
      defaultMergeHow: defaults,
    });
    assert.deepEqual(plain(result), { l: [1, 2] });
    assert.equal(parseDefaultMergeHow(''), undefined);
    assert.throws(
      () => parseDefaultMergeHow('dict'),
      (e: unknown) => e instanceof DmError && e.category === 'usage',
    );
    assert.throws(
      () => parseDefaultMergeHow('dcit()'),
      (e: unknown) => e instanceof DmError && e.code === 'ImportError',
    );
  });
});

describe('mergeManyDict()', () => {
  it('lets earlier sources win by default and later ones with reverse', () => {
    const sources = [{ document: y('{a: 1, b: 1}') }, { document: y('{a: 2, c: 2}') }, { document: null }];
    assert.deepEqual(plain(mergeManyDict(sources)), { a: 1, b: 1, c: 2 });
    assert.deepEqual(plain(mergeManyDict(sources, { reverse: true })), { a: 2, c: 2, b: 1 });
  });
  it('propagates errors with the source named', () => {
    assert.throws(
      () =>
        mergeManyDict([
          { document: y('{a: text}') },
          { document: y('{a: {k: v}, merge_how: dict()+str(append)}'), source: 'b.yaml' },
        ]),
      (e: unknown) =>
        e instanceof DmError && e.code === 'TypeError' && e.message.startsWith('b.yaml, at a: '),
    );
  });
});

describe('mergeValues()', () => {
  it('merges plain documents: later files win, mappings merge deeply, lists are replaced', () => {
    assert.deepEqual(
      mergeValues([
        { replicas: 1, image: { repo: 'r', tag: '1' }, ports: [80], keep: true },
        { replicas: 3, image: { tag: '2' }, ports: [443] },
      ]),
      { replicas: 3, image: { tag: '2', repo: 'r' }, ports: [443], keep: true },
    );
    assert.deepEqual(mergeValues([]), {});
    assert.deepEqual(mergeValues([null, {}, { a: 1 }]), { a: 1 });
  });
  it('honours a file’s own merge_how (how it merges into the later files)', () => {
    assert.deepEqual(
      mergeValues([{ ports: [80], merge_how: 'list(append)+dict(recurse_list)+str()' }, { ports: [443] }]),
      { ports: [443, 80] },
    );
  });
  it('treats a __proto__ key as data, and returns plain objects', () => {
    const polluted = JSON.parse('{"__proto__": {"polluted": true}, "a": {"__proto__": {"x": 1}}}');
    const out = mergeValues([polluted, JSON.parse('{"a": {"__proto__": {"y": 2}}}')]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.keys(out), ['a', '__proto__']);
    assert.deepEqual(JSON.parse(JSON.stringify(out)), {
      ['__proto__']: { polluted: true },
      a: JSON.parse('{"__proto__": {"y": 2, "x": 1}}'),
    });
  });
  it('refuses cycles and deep nesting with a DmError', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.throws(() => mergeValues([cyclic]), DmError);
    let deep: unknown = 1;
    for (let i = 0; i < 2000; i++) deep = { d: deep };
    assert.throws(
      () => toMergeValue(deep),
      (e: unknown) => e instanceof DmError && e.code === 'DOCUMENT_TOO_DEEP',
    );
  });
});

describe('mergeValuesFiles()', () => {
  it('reads every document of every file, later ones winning, and names the file in errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dm-values-'));
    try {
      writeFileSync(join(dir, 'a.yaml'), 'a: 1\nn: {x: 1}\n---\nb: 1\n');
      writeFileSync(join(dir, 'b.yaml'), '# comment only\n');
      writeFileSync(join(dir, 'c.yaml'), 'a: 2\nn: {y: 2}\n');
      writeFileSync(join(dir, 'bad.yaml'), 'a: [1\n');
      const files = ['a.yaml', 'b.yaml', 'c.yaml'].map((f) => join(dir, f));
      assert.deepEqual(mergeValuesFiles(files), { a: 2, n: { y: 2, x: 1 }, b: 1 });
      assert.throws(
        () => mergeValuesFiles([join(dir, 'bad.yaml')]),
        (e: unknown) => e instanceof DmError && e.code === 'INVALID_YAML' && e.message.includes('bad.yaml:2'),
      );
      assert.throws(
        () => mergeValuesFiles([join(dir, 'missing.yaml')]),
        (e: unknown) => e instanceof DmError && e.category === 'not-found',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

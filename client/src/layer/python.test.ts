import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePythonRegex, pyRepr, pyStr, pySub } from './python.js';

describe('pyStr()', () => {
  const table: [unknown, string][] = [
    ['text', 'text'],
    [true, 'True'],
    [false, 'False'],
    [null, 'None'],
    [123, '123'],
    [3.2, '3.2'],
    [0.00001, '1e-05'],
    [0.0001, '0.0001'],
    [1.5e16, '1.5e+16'],
    [Number.POSITIVE_INFINITY, 'inf'],
    [{ k: 1, "it's": [1, 'x', null, true] }, `{'k': 1, "it's": [1, 'x', None, True]}`],
    [['a\nb'], "['a\\nb']"],
  ];
  for (const [value, expected] of table) {
    it(`pyStr() prints ${JSON.stringify(value)} as Python's str() does: ${expected}`, () => {
      assert.equal(pyStr(value), expected);
    });
  }
  it('pyRepr() quotes strings like Python', () => {
    assert.equal(pyRepr('a'), "'a'");
    assert.equal(pyRepr("a'b"), `"a'b"`);
  });
});

describe('pySub()', () => {
  const re = (p: string) => {
    const r = compilePythonRegex(p, true);
    assert.ok(r instanceof RegExp);
    return r;
  };
  it('pySub() replaces every match and inserts $-sequences literally', () => {
    assert.equal(pySub(re('X'), '$&$1', 'aXbX'), 'a$&$1b$&$1');
  });
  it('pySub() interprets Python template escapes and group references', () => {
    assert.equal(pySub(re('(b)(c)'), '\\2\\1', 'abcd'), 'acbd');
    assert.equal(pySub(re('(?P<x>b)'), '[\\g<x>\\g<0>]', 'abc'), 'a[bb]c');
    assert.equal(pySub(re('b'), 'x\\ny', 'abc'), 'ax\nyc');
    assert.equal(pySub(re('b'), '\\.', 'abc'), 'a\\.c');
  });
  it('pySub() rejects what Python rejects: bad escapes and missing groups', () => {
    assert.deepEqual(pySub(re('b'), '\\q', 'abc'), { error: 'bad escape \\q in the substituted value' });
    assert.ok(typeof pySub(re('b'), '\\3', 'abc') === 'object');
    assert.ok(typeof pySub(re('b'), 'x\\', 'abc') === 'object');
  });
  it('compilePythonRegex() reports an invalid pattern instead of throwing', () => {
    assert.equal(typeof compilePythonRegex('(', true), 'string');
    assert.equal(typeof compilePythonRegex('a'.repeat(2000), true), 'string');
  });
});

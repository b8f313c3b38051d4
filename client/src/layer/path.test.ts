import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeActionPath, parsePath, readPath, writePath } from './path.js';

describe('parsePath()', () => {
  it('parsePath() reads names, quoted names, hyphens and indices', () => {
    assert.deepEqual(parsePath(".values.conf.paste.'filter:authtoken'.password"), [
      { key: 'values' },
      { key: 'conf' },
      { key: 'paste' },
      { key: 'filter:authtoken' },
      { key: 'password' },
    ]);
    assert.deepEqual(parsePath('$.chart[0].values[10]'), [
      { key: 'chart' },
      { index: 0 },
      { key: 'values' },
      { index: 10 },
    ]);
    assert.deepEqual(parsePath('.site-alt.x'), [{ key: 'site-alt' }, { key: 'x' }]);
    assert.deepEqual(parsePath('a.b'), [{ key: 'a' }, { key: 'b' }]);
    assert.deepEqual(parsePath('.'), []);
    assert.deepEqual(parsePath('$'), []);
  });
  for (const bad of ['.1a', '.a.*', '..a', '.a[-1]', '.a[0:2]', '.a.', ".'open", '.a b']) {
    it(`parsePath() rejects ${bad}`, () => {
      assert.equal(typeof parsePath(bad), 'string');
    });
  }
  it('parsePath() requires a root when asked (dest paths)', () => {
    assert.equal(typeof parsePath('a.b', { requireRoot: true }), 'string');
  });
});

describe('normalizeActionPath()', () => {
  it('normalizeActionPath() strips a leading .data only as a whole segment (quirk Q2 not copied)', () => {
    assert.equal(normalizeActionPath('.data'), '.');
    assert.equal(normalizeActionPath('$.data.a[0]'), '.a[0]');
    assert.equal(normalizeActionPath('.data[1]'), '$[1]');
    assert.equal(normalizeActionPath('.database.x'), '.database.x');
  });
});

describe('writePath()', () => {
  it('writePath() creates mappings and lists padded with {}', () => {
    const steps = parsePath('.values.endpoints[1].admin');
    assert.ok(Array.isArray(steps));
    const result = writePath({}, steps, 'v');
    assert.deepEqual(result, { ok: true, data: { values: { endpoints: [{}, { admin: 'v' }] } } });
  });
  it('writePath() refuses to walk through a scalar or null', () => {
    const steps = parsePath('.a.b');
    assert.ok(Array.isArray(steps));
    assert.equal(writePath({ a: 'text' }, steps, 1).ok, false);
    assert.equal(writePath({ a: null }, steps, 1).ok, false);
  });
  it('writePath() refuses to pad a list beyond the limit', () => {
    const steps = parsePath('.a[100000000]');
    assert.ok(Array.isArray(steps));
    assert.equal(writePath({}, steps, 1).ok, false);
  });
  it('readPath() treats keys like __proto__ and constructor as data', () => {
    const steps = parsePath('.constructor');
    assert.ok(Array.isArray(steps));
    assert.deepEqual(readPath({}, steps), { found: false, value: undefined });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import { formatYaml, parseYaml, parseYamlDocuments } from './yaml.js';

describe('parseYaml()', () => {
  it('reads the YAML 1.2 core schema by default: y, n, yes, on stay strings', () => {
    assert.deepEqual(parseYaml('a: y\nb: n\nc: yes\nd: on\ne: true\nf: 0o17\n'), {
      a: 'y',
      b: 'n',
      c: 'yes',
      d: 'on',
      e: true,
      f: 15,
    });
  });
  it("reads PyYAML's booleans and merge keys in the pyyaml dialect, but not y/n", () => {
    assert.deepEqual(
      parseYaml('a: yes\nb: On\nc: OFF\nd: y\ne: n\nbase: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n', {
        dialect: 'pyyaml',
      }),
      { a: true, b: true, c: false, d: 'y', e: 'n', base: { x: 1 }, m: { x: 1, y: 2 } },
    );
  });
  it('names the file and line of a syntax error', () => {
    assert.throws(
      () => parseYaml('a: 1\nb: [1\nc: 2\n', { source: 'site.yaml' }),
      (e: unknown) =>
        e instanceof DmError && e.code === 'INVALID_YAML' && /^site\.yaml:\d+: invalid YAML/.test(e.message),
    );
  });
  it('refuses more than one document, and oversized input', () => {
    assert.throws(() => parseYaml('a: 1\n---\nb: 2\n'), /expected one YAML document, found 2/);
    assert.throws(
      () => parseYaml('x'.repeat(20), { maxBytes: 10 }),
      (e: unknown) => e instanceof DmError && e.code === 'YAML_TOO_LARGE',
    );
  });
  it('reads multi-document streams, keeping empty documents as null', () => {
    assert.deepEqual(parseYamlDocuments('---\na: 1\n---\n---\nb: 2\n'), [{ a: 1 }, null, { b: 2 }]);
  });
  it('formatYaml() output parses back to the same data (property)', () => {
    const scalar = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => (Object.is(x, -0) ? 0 : x)), // JSON has no -0
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        scalar,
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string(), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        assert.deepEqual(parseYaml(formatYaml(v)), JSON.parse(JSON.stringify(v)));
      }),
      { numRuns: 500 },
    );
  });
  it('never throws anything but DmError on arbitrary text (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.boolean(), (text, pyyaml) => {
        try {
          parseYaml(text, pyyaml ? { dialect: 'pyyaml' } : {});
        } catch (e) {
          assert.ok(e instanceof DmError, String(e));
        }
      }),
      { numRuns: 2000 },
    );
  });
});

/**
 * Where dm deliberately differs from cloud-init (docs/merging.md, "Deliberate differences"). Each
 * test pins dm's side; where cloud-init can answer, it is asked too, so the difference stays real.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DmError } from '../../client/src/error.js';
import { mergeRaw, mergeUserData, mergeValues, parseMergeDocuments } from '../../client/src/merge/index.js';
import { CloudInitReference, findCloudInit } from './cloud-init-reference.js';

describe('deliberate differences from cloud-init (docs/merging.md)', () => {
  let reference: CloudInitReference;
  before(() => {
    reference = new CloudInitReference(findCloudInit());
  });
  after(() => reference?.close());

  it('a file that is not YAML is an error naming file:line, not a skipped "empty cloud config" part', () => {
    assert.throws(
      () => parseMergeDocuments('a: [1\nb: 2\n', 'x.yaml'),
      (e: unknown) => e instanceof DmError && e.code === 'INVALID_YAML' && /^x\.yaml:2: /.test(e.message),
    );
  });

  it('YAML 1.2 core schema: yes/no/on/off stay strings (PyYAML reads booleans)', () => {
    const [doc] = parseMergeDocuments('a: yes\nb: on\nc: 2001-12-14\n', 'x.yaml');
    assert.deepEqual([...(doc as Map<string, unknown>).values()], ['yes', 'on', '2001-12-14']);
  });

  it('duplicate keys keep the last, as PyYAML does (no longer a difference: issue 16), with a warning', () => {
    const stderr = process.stderr.write;
    const warnings: string[] = [];
    process.stderr.write = ((s: string) => warnings.push(String(s)) > 0) as typeof process.stderr.write;
    try {
      const [doc] = parseMergeDocuments('a: 1\na: 2\n', 'x.yaml');
      assert.deepEqual([...(doc as Map<string, unknown>).entries()], [['a', 2]]);
    } finally {
      process.stderr.write = stderr;
    }
    assert.deepEqual(warnings, [
      "warning: x.yaml:2: duplicated mapping key 'a': the last value wins (as PyYAML reads it)\n",
    ]);
  });

  it('keys true and 1 are different keys (Python treats them as one)', () => {
    const a = new Map<unknown, unknown>([[true, 'bool']]) as Map<string, unknown>;
    const b = new Map<unknown, unknown>([[1, 'int']]) as Map<string, unknown>;
    const ours = mergeRaw(a, b, 'dict(replace)') as Map<unknown, unknown>;
    assert.deepEqual([...ours.keys()], [true, 1]);
  });

  it('mergeValues and -o json give plain objects: integer-like keys come first (the YAML output keeps Python order)', () => {
    const out = mergeValues([{ b: 1 }, parseMergeDocuments('a: 1\n"10": 2\n', 'x.yaml')[0]]);
    assert.deepEqual(Object.keys(out), ['10', 'a', 'b']);
    const { result } = mergeUserData([{ document: parseMergeDocuments('a: 1\n"10": 2\n', 'x.yaml')[0] }]);
    assert.deepEqual([...result.keys()], ['a', '10']);
  });

  it('documents nest up to 1,000 levels (cloud-init hits Python’s recursion limit far sooner)', async () => {
    let deep: Map<string, unknown> = new Map([['leaf', 'x']]);
    for (let i = 0; i < 300; i++) deep = new Map([['d', deep]]);
    assert.ok(mergeRaw(deep, deep, 'dict()') instanceof Map);
    const encode = (m: unknown): unknown =>
      m instanceof Map ? { $map: [...m].map(([k, v]) => [k, encode(v)]) } : m;
    const theirs = await reference.request({
      mode: 'merger',
      merge_how: 'dict()',
      a: encode(deep),
      b: encode(deep),
    });
    assert.equal(theirs.error, 'RecursionError', 'cloud-init fails on 300 levels');
  });
});

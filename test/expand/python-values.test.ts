/**
 * Data as Python holds it (docs/expansion.md, "Python values"): the YAML reader's pyyaml dialect
 * keeps floats with an integral value and the written order of integer-like keys, formatYaml
 * writes them back as PyYAML reads them, and the wire form carries both to the rendering
 * processes. Random data is compared with PyYAML itself.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatYaml, parseYaml } from '../../client/src/document/yaml.js';
import {
  fromWire,
  hasPythonValues,
  pyFloatRepr,
  pyKeys,
  pySetItem,
  toWire,
} from '../../client/src/python/values.js';
import { findOracle } from '../support/python-oracle.js';
import { typed } from './typed-data.js';

const PY_TYPED = `
import json, sys, yaml
def typed(v):
    if isinstance(v, dict):
        return {'dict': [[k, typed(x)] for k, x in v.items()]}
    if isinstance(v, list):
        return [typed(x) for x in v]
    if isinstance(v, float):
        return {'float': repr(v)}
    return v
print(json.dumps([typed(yaml.safe_load(t)) for t in json.load(sys.stdin)]))
`;

const KEYS = ['a', 'b', 'zz', '0', '1', '2', '10', '07', '-1', '4294967294', '4294967295', '\u0000x'];
const scalar = fc.oneof(
  fc.constantFrom(
    '1.0',
    '2.50',
    '-3.0',
    '0.0',
    '1.5e+3',
    '1.0e+20',
    '0.1',
    '-0.0',
    '7',
    '"s"',
    'true',
    'null',
  ),
  fc.integer({ min: -1000, max: 1000 }).map((n) => `${n}.0`),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((n) => pyFloatRepr(n)),
);
const yamlValue: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`),
    fc
      .uniqueArray(fc.constantFrom(...KEYS), { maxLength: 5 })
      .chain((keys) =>
        fc
          .array(tie('value'), { minLength: keys.length, maxLength: keys.length })
          .map((vs) => `{${keys.map((k, i) => `${JSON.stringify(k)}: ${vs[i]}`).join(', ')}}`),
      ),
  ),
})).value;

describe('Python values in the YAML reader and writer', () => {
  it('parseYaml() in the pyyaml dialect keeps 1.0 a float and integer-like keys in written order', () => {
    const data = parseYaml('x: 1.0\ny: 2\nz: 2.5\nd: {b: 1, "10": 2, "2": 3}\n', { dialect: 'pyyaml' });
    assert.deepEqual(typed(data), {
      dict: [
        ['x', { float: '1.0' }],
        ['y', 2],
        ['z', { float: '2.5' }],
        [
          'd',
          {
            dict: [
              ['b', 1],
              ['10', 2],
              ['2', 3],
            ],
          },
        ],
      ],
    });
    // The core dialect (lock files, config, values) is unchanged: plain numbers.
    assert.deepEqual(parseYaml('x: 1.0\n'), { x: 1 });
  });

  it('pySetItem() puts a new integer-like key last, as a Python dict does', () => {
    const d: Record<string, unknown> = { b: 1 };
    pySetItem(d, '10', 2);
    pySetItem(d, '2', 3);
    pySetItem(d, 'b', 4);
    assert.deepEqual(pyKeys(d), ['b', '10', '2']);
    delete d['10'];
    pySetItem(d, '10', 5);
    assert.deepEqual(pyKeys(d), ['b', '2', '10']);
    assert.deepEqual(JSON.parse(JSON.stringify(d)), { b: 4, 2: 3, 10: 5 });
  });

  it('random data read by parseYaml() is what PyYAML safe_load reads, and formatYaml() writes it back for PyYAML', () => {
    const python = findOracle();
    assert.ok(python, 'no Python with jinja2 and yaml: install python3-jinja2 and python3-yaml');
    const texts = fc.sample(yamlValue, { numRuns: 300, seed: 20261126 }).map((v) => `v: ${v}\n`);
    const written = texts.map((t) => formatYaml(parseYaml(t, { dialect: 'pyyaml' })));
    const run = spawnSync(python, ['-c', PY_TYPED], {
      input: JSON.stringify([...texts, ...written]),
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    assert.equal(run.status, 0, run.stderr);
    const expected = JSON.parse(run.stdout) as unknown[];
    for (const [i, text] of texts.entries()) {
      const got = typed(parseYaml(text, { dialect: 'pyyaml' }));
      assert.deepEqual(got, expected[i], `reading ${text}`);
      assert.deepEqual(expected[texts.length + i], expected[i], `PyYAML reading dm's ${written[i]}`);
    }
  });

  it('toWire() then a structured clone and fromWire() give back floats and key order', () => {
    fc.assert(
      fc.property(yamlValue, (v) => {
        const data = parseYaml(`v: ${v}\n`, { dialect: 'pyyaml' });
        const wire = hasPythonValues(data) ? toWire(data) : data;
        const back = hasPythonValues(data) ? fromWire(structuredClone(wire)) : structuredClone(wire);
        assert.deepEqual(typed(back), typed(data));
      }),
      { seed: 20261126, numRuns: 300 },
    );
  });
});

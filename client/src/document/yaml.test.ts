import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import { PyFloat } from '../python/values.js';
import { dumpYaml, duplicatedKeys, formatBlocks, formatYaml, parseYaml, parseYamlDocuments } from './yaml.js';

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

const BOMB = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
for (const l of 'bcdefgh')
  BOMB.push(
    `${l}: &${l} [${Array(10)
      .fill(`*${String.fromCharCode(l.charCodeAt(0) - 1)}`)
      .join(', ')}]`,
  );
const BOMB_TEXT = `${BOMB.join('\n')}\n`;

describe('parseYaml() limits', () => {
  it('parseYaml() refuses an alias bomb at once, naming the source', () => {
    for (const parse of [parseYaml, parseYamlDocuments]) {
      assert.throws(
        () => parse(BOMB_TEXT, { source: 'bomb.yaml' }),
        (e: unknown) =>
          e instanceof DmError && e.code === 'YAML_TOO_LARGE' && /^bomb\.yaml: limit/.test(e.message),
      );
    }
    assert.throws(
      () => parseYamlDocuments(BOMB_TEXT, { source: 'bomb.yaml', mappings: 'maps' }),
      (e: unknown) => e instanceof DmError && e.code === 'YAML_TOO_LARGE',
    );
  });
  it('parseYaml() accepts aliases within the node budget', () => {
    assert.deepEqual(parseYaml('a: &a [1, 2]\nb: *a\n', { maxNodes: 10 }), { a: [1, 2], b: [1, 2] });
  });
});

describe('duplicated mapping keys (as PyYAML reads them)', () => {
  it('parseYaml() keeps the last value of a duplicated key and warns with file:line and the key', () => {
    const warnings: string[] = [];
    const doc = parseYaml('a: 1\nb:\n  c: 1\n  c: 2\na: 3\n', {
      source: 'schema.yaml',
      onWarning: (m) => warnings.push(m),
    });
    assert.deepEqual(doc, { a: 3, b: { c: 2 } });
    assert.deepEqual(warnings, [
      "schema.yaml:4: duplicated mapping key 'c': the last value wins (as PyYAML reads it)",
      "schema.yaml:5: duplicated mapping key 'a': the last value wins (as PyYAML reads it)",
    ]);
  });
  it('parseYamlDocuments() with Map mappings keeps the last value too', () => {
    const warnings: string[] = [];
    const [doc] = parseYamlDocuments('k: 1\nk: 2\n', {
      mappings: 'maps',
      onWarning: (m) => warnings.push(m),
    });
    assert.deepEqual(doc, new Map([['k', 2]]));
    assert.equal(warnings.length, 1);
  });
  it('no warning without a duplicated key', () => {
    const warnings: string[] = [];
    parseYaml('a: 1\nb: {a: 2}\nc: [{a: 1}, {a: 2}]\n', { onWarning: (m) => warnings.push(m) });
    assert.deepEqual(warnings, []);
  });
  it('duplicatedKeys() finds exactly the repetitions, at their lines (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 12 }),
        fc.boolean(),
        (keys, nested) => {
          const indent = nested ? '  ' : '';
          const text = `${nested ? 'outer:\n' : ''}${keys.map((k, i) => `${indent}${k}: ${i}\n`).join('')}`;
          const expected: { key: string; line: number }[] = [];
          keys.forEach((k, i) => {
            if (keys.indexOf(k) < i) expected.push({ key: k, line: i + 1 + (nested ? 1 : 0) });
          });
          assert.deepEqual(duplicatedKeys(text), expected);
          if (keys.length > 0) {
            const doc = parseYaml(text, { onWarning: () => {} }) as Record<string, unknown>;
            const map = (nested ? doc.outer : doc) as Record<string, number>;
            for (const k of new Set(keys)) assert.equal(map[k], keys.lastIndexOf(k));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

const LOOKALIKES = [
  'yes',
  'No',
  'ON',
  'off',
  'y',
  'n',
  'Y',
  'true',
  'False',
  'null',
  'Null',
  '~',
  '',
  '1',
  '-1',
  '+1',
  '1.0',
  '.5',
  '-.5',
  '1e3',
  '1.5e+3',
  '0x1F',
  '0o17',
  '017',
  '1_000',
  '1:30',
  '1:30.5',
  '2001-12-14',
  '2001-12-14 21:59:43.10 -5',
  '.inf',
  '-.Inf',
  '.NaN',
  '=',
  '<<',
  '-',
  '---',
  '...',
  'a: b',
  'a:',
  'a #b',
  'a#b',
  ' a',
  'a ',
  'a  b',
  'x:y',
  'http://h/p',
  'nginx:1.25',
  'r0-svc',
  'apps/v1/Deployment',
  '/usr/bin',
  './x',
  '@a',
  'a@b',
  '%a',
  'a%',
  '(a)',
  'a,b',
  'a=b',
  '~a',
  'a~',
  'a - b',
  '- a',
  '? a',
  'a?',
  "it's",
  'a"b',
  'tab\there',
  'line\nbreak',
  'é',
  'a\u00a0b',
];
const tricky = fc.oneof(
  fc.constantFrom(...LOOKALIKES),
  fc.string({ unit: fc.constantFrom(...'aZ09_./:@,+=()%~ -#\'"!&*?|>{}[]yYnN\n\t'.split('')), maxLength: 8 }),
);
/** Strings of the characters formatBlocks writes itself, where its quoting decisions are. */
const friendly = fc.oneof(
  fc.constantFrom(...LOOKALIKES),
  fc.string({ unit: fc.constantFrom(...'aZ09_./:@,+=()%~ -yYnNeE'.split('')), maxLength: 6 }),
);
const documentOf = (text: fc.Arbitrary<string>): fc.Arbitrary<Record<string, unknown>> => {
  const node = fc.letrec<{ node: unknown }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.integer({ min: -2000, max: 2000 }),
      fc.constantFrom(
        -0,
        1e21,
        2 ** 53,
        0.1,
        -2.5,
        1.5e300,
        Number.POSITIVE_INFINITY,
        Number.NaN,
        true,
        false,
        null,
        undefined,
      ),
      fc.double(),
      fc.integer({ min: -5, max: 5 }).map((n) => new PyFloat(n)),
      fc.array(tie('node'), { maxLength: 4 }),
      fc.dictionary(text, tie('node'), { maxKeys: 4 }),
    ),
  })).node;
  return fc.dictionary(text, node, { minKeys: 1, maxKeys: 5 });
};

describe('formatYaml() fast path', () => {
  for (const [name, text, least] of [
    ['any text', tricky, 50],
    ['its own characters', friendly, 300],
  ] as const) {
    it(`formatBlocks() writes exactly what js-yaml dump writes, or leaves the document to it: ${name} (property)`, () => {
      let mine = 0;
      fc.assert(
        fc.property(documentOf(text), (doc) => {
          const written = formatBlocks(doc);
          if (written === undefined) return;
          mine++;
          assert.equal(written, dumpYaml(doc));
        }),
        { numRuns: 3000, seed: 20261126 },
      );
      assert.ok(mine >= least, `the fast path wrote only ${mine} of 3000 documents`);
    });
  }

  it('formatBlocks() takes an expansion output of the usual shapes', () => {
    const doc = {
      config: {
        resources: [
          {
            name: 'r0-svc',
            type: 'Service',
            properties: { ports: [{ port: 80, protocol: 'TCP' }], empty: {} },
          },
          {
            name: 'r0-cm',
            type: 'ConfigMap',
            properties: { data: { replicas: '1', on: 'yes', f: new PyFloat(1) } },
          },
        ],
      },
      layout: { resources: [{ name: 'r0', type: 'a.jinja', properties: { image: 'nginx:1.25', list: [] } }] },
    };
    const text = formatBlocks(doc);
    assert.ok(text !== undefined);
    assert.equal(text, dumpYaml(doc));
    assert.match(text, /replicas: '1'\n/);
    assert.match(text, /'on': 'yes'\n/);
    assert.match(text, /f: 1\.0\n/);
  });
});

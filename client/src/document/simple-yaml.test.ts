import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { PyFloat } from '../python/values.js';
import { parseSimpleYaml } from './simple-yaml.js';
import { dumpYaml, parseYaml, parseYamlFully, resolvePyYamlPlain } from './yaml.js';

/** The same value (types, key order) or the same error, by the fast path and by js-yaml alone. */
function outcome(read: () => unknown): { value?: unknown; text?: string; error?: string } {
  const warnings: string[] = [];
  try {
    const value = read();
    return { value, text: dumpYaml(value), ...(warnings.length ? { error: warnings.join() } : {}) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function sameAsFullParser(text: string): boolean {
  const fast = outcome(() => parseYaml(text, { dialect: 'pyyaml', source: 't.yaml', onWarning: () => {} }));
  const full = outcome(() =>
    parseYamlFully(text, { dialect: 'pyyaml', source: 't.yaml', onWarning: () => {} }),
  );
  assert.deepStrictEqual(fast, full, `text:\n${text}`);
  return parseSimpleYaml(text, resolvePyYamlPlain) !== undefined;
}

// Tokens chosen to sit on the edges of what the fast reader takes: PyYAML's booleans and floats,
// YAML indicators, comments, quotes, keys that are not strings, flow characters.
const WORDS = [
  'a',
  'name',
  'x-y',
  'app.kubernetes.io/name',
  '__proto__',
  '10',
  '2',
  '1.0',
  '1e3',
  '1.5e+3',
  '-.5',
  '.5',
  '0x1F',
  '0o17',
  '017',
  '-1',
  '+1',
  '~',
  'null',
  'Null',
  'yes',
  'No',
  'on',
  'OFF',
  'y',
  'n',
  'true',
  '.inf',
  '-.Inf',
  '.nan',
  '1:30',
  '',
  ' ',
  'a b',
  'a  b',
  'a: b',
  'a:b',
  'a #b',
  'a#b',
  '#c',
  '- a',
  '-',
  '--',
  '---',
  '...',
  '?',
  '? a',
  ':',
  'http://x.io/a?b=c',
  "it's",
  '"q"',
  "'",
  '"',
  '\\',
  '\\n',
  '[a]',
  '{a: 1}',
  'a, b',
  'a]',
  '}',
  '&x',
  '*x',
  '!t',
  '|',
  '>',
  '%x',
  '@x',
  '`x',
  '<<',
  'é',
  '\u00e9\u4e2d',
  '\t',
  'a\tb',
  '\r',
  '\u0085',
  'x:',
  'é: 1',
];
const word = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom('a', 'name', 'web-svc', 'x/y', 'v1.2', 'port', 'a b', '8080', '1.0'),
  },
  { weight: 1, arbitrary: fc.constantFrom(...WORDS) },
);

type Tree = string | number | boolean | null | Tree[] | { [k: string]: Tree };
const tree = fc.letrec<{ node: Tree }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    word,
    fc.integer({ min: -1000, max: 1000 }),
    fc.constantFrom(1.5, -0.25, 2.0, true, false, null),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(word, tie('node'), { maxKeys: 4 }),
  ),
})).node;

/** How a scalar is written: as it is (plain), or quoted either way. */
function scalar(value: Tree, style: number): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (style === 1) return `'${text.replaceAll("'", "''")}'`;
  if (style === 2) return JSON.stringify(text);
  return text;
}

/** A random rendering of `value`: block or flow collections, plain or quoted scalars, odd spacing. */
function write(value: Tree, pick: () => number, indent: number): string[] {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value) || (value !== null && typeof value === 'object')) {
    if (pick() % 4 === 0) return [pad + flow(value, pick)];
    const lines: string[] = [];
    const entries: [string | null, Tree][] = Array.isArray(value)
      ? value.map((v) => [null, v])
      : Object.entries(value);
    if (entries.length === 0) return [pad + (Array.isArray(value) ? '[]' : '{}')];
    for (const [key, v] of entries) {
      const head = key === null ? `${pad}-` : `${pad}${scalar(key, pick() % 5 === 0 ? 1 : 0)}:`;
      const nested = Array.isArray(v) || (v !== null && typeof v === 'object');
      if (nested && key === null && pick() % 2 === 0) {
        // `- key: value` with the mapping's other keys below it, as templates write lists.
        const inner = write(v, pick, indent + 2);
        lines.push(`${pad}- ${(inner[0] as string).trimStart()}`, ...inner.slice(1));
      } else if (nested && pick() % 3 !== 0) {
        const step = key !== null && Array.isArray(v) && pick() % 2 === 0 ? 0 : 1 + (pick() % 3);
        lines.push(head, ...write(v, pick, indent + step));
      } else if (nested) {
        lines.push(`${head} ${flow(v, pick)}`);
      } else {
        const sep = [' ', '  ', ''][pick() % 3];
        lines.push(`${head}${sep}${scalar(v, pick() % 3)}${pick() % 7 === 0 ? ' # c' : ''}`);
      }
      if (pick() % 11 === 0) lines.push(pick() % 2 ? '' : `${' '.repeat(pick() % 5)}# note`);
    }
    return lines;
  }
  return [pad + scalar(value, pick() % 3)];
}

function flow(value: Tree, pick: () => number): string {
  if (Array.isArray(value)) return `[${value.map((v) => flow(v, pick)).join(pick() % 5 ? ', ' : ',')}]`;
  if (value !== null && typeof value === 'object') {
    const parts = Object.entries(value).map(([k, v]) => `${scalar(k, pick() % 3)}: ${flow(v, pick)}`);
    return `{${parts.join(', ')}}`;
  }
  return scalar(value, pick() % 3);
}

describe('resolvePyYamlPlain()', () => {
  it('answers a text it resolved before as the first time, and makes a float anew each time', () => {
    for (const text of [
      'name',
      '1',
      '-2',
      '1.0',
      '2.5',
      'yes',
      'Off',
      '~',
      'null',
      '0x1F',
      '1e3',
      '1.5e+3',
      '',
    ]) {
      const first = resolvePyYamlPlain(text);
      const again = resolvePyYamlPlain(text);
      assert.deepStrictEqual(again, first, text);
      if (first.value instanceof PyFloat) assert.notEqual(again.value, first.value, text);
    }
    assert.ok(resolvePyYamlPlain('1.0').value instanceof PyFloat);
    assert.equal(resolvePyYamlPlain('yes').value, true);
    assert.equal(resolvePyYamlPlain('0x1F').value, 31);
  });
});

describe('parseSimpleYaml() against the full parser', () => {
  it('reads the shapes templates render', () => {
    const text = [
      'resources:',
      '- name: web-svc',
      '  type: Service',
      '  properties:',
      '    selector: {app: web}',
      '    labels: {"app": "web", "tier": "a\\u003cb"}',
      '    ports:',
      '    - port: 80',
      '      open: yes',
      "      note: 'it''s'",
      '    ratio: 1.0',
      '    list: [1, two, "3"]',
      '    empty:',
      '- name: x',
    ].join('\n');
    const value = parseSimpleYaml(text, resolvePyYamlPlain) as { resources: Record<string, unknown>[] };
    assert.ok(value !== undefined);
    const props = value.resources[0]?.properties as Record<string, unknown>;
    assert.deepEqual(props.labels, { app: 'web', tier: 'a<b' });
    assert.ok(props.ratio instanceof PyFloat);
    assert.deepEqual(props.ports, [{ port: 80, open: true, note: "it's" }]);
    assert.equal(props.empty, null);
    sameAsFullParser(text);
  });

  it('leaves everything else to the full parser, errors and warnings included', () => {
    for (const text of [
      'a: 1\na: 2\n',
      'a: &x 1\nb: *x\n',
      'a: |\n  x\n',
      'a: b\n  c\n',
      'a:\n  - 1\n - 2\n',
      'a: [1,\n  2]\n',
      '<<: {x: 1}\n',
      '1: a\n',
      'a: 1 # c\n',
      'a: 1\n---\nb: 2\n',
      'a:\tb\n',
      '- a\nb: 1\n',
      'a: {b: 1, b: 2}\n',
      '',
    ]) {
      assert.equal(parseSimpleYaml(text, resolvePyYamlPlain), undefined, text);
      sameAsFullParser(text);
    }
  });

  it('gives what js-yaml gives, or steps aside, on random documents', () => {
    let fast = 0;
    let runs = 0;
    fc.assert(
      fc.property(
        fc.dictionary(word, tree, { minKeys: 1, maxKeys: 4 }),
        fc.array(fc.nat(), { minLength: 64, maxLength: 64 }),
        (value, choices) => {
          let i = 0;
          const pick = () => choices[i++ % choices.length] as number;
          const text = `${write(value, pick, 0).join('\n')}${pick() % 2 ? '\n' : ''}`;
          runs++;
          if (sameAsFullParser(text)) fast++;
        },
      ),
      { numRuns: 3000 },
    );
    // The generator must reach the fast path often enough for the comparison to mean something.
    assert.ok(fast > runs / 10, `fast path taken ${fast} of ${runs} times`);
  });

  it('gives what js-yaml gives on random edits of rendered text', () => {
    const base =
      'resources:\n- name: a\n  type: T\n  properties:\n    x: {k: "v", n: 1}\n    l:\n    - 1\n    - b\n';
    fc.assert(
      fc.property(
        fc.nat({ max: base.length }),
        fc.nat({ max: 3 }),
        fc.constantFrom(...WORDS, '\n', ' ', '  ', '- ', ': ', '#', '"', "'", '{', '['),
        (at, remove, insert) => {
          sameAsFullParser(base.slice(0, at) + insert + base.slice(at + remove));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

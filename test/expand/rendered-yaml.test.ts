/**
 * Reading rendered template output as PyYAML does (client/src/expand/rendered-yaml.ts): Jinja2
 * drops the template's final newline, so output often ends inside a block scalar without a line
 * break, where js-yaml and PyYAML disagree. Random YAML texts ending (or not) in block scalars
 * are parsed by dm and by PyYAML's safe_load and must give the same data. Fixed seed.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { mayEndInBlockScalar, parseRenderedYaml } from '../../client/src/expand/rendered-yaml.js';
import { findOracle } from '../support/python-oracle.js';

const header = fc.constantFrom('|', '>', '|-', '|+', '>-', '>+', '| # c');
const scriptLine = fc.constantFrom('echo hi', 'a: b', '- item', '#!/bin/sh', 'x | y', '', '  indented');
const block = fc
  .tuple(header, fc.array(scriptLine, { minLength: 1, maxLength: 4 }), fc.constantFrom(2, 4))
  .map(([h, lines, n]) => {
    const pad = ' '.repeat(n);
    const body = lines.map((l, i) => (i === 0 ? `${pad}first` : l === '' ? '' : pad + l));
    return `${h}\n${body.join('\n')}`;
  });
const scalar = fc.constantFrom('1', 'text', "'q'", 'true', '2.5', 'null');
const value = fc.oneof(block, scalar);
const doc = fc
  .array(fc.tuple(fc.constantFrom('a', 'b', 'script', 'value'), value, fc.boolean()), {
    minLength: 1,
    maxLength: 3,
  })
  .map((entries) => {
    const out: string[] = ['resources:', '- name: r', '  type: T', '  properties:'];
    entries.forEach(([k, v, nested], i) => {
      const key = `${k}${i}`;
      const indent = nested ? '      ' : '    ';
      if (nested) out.push(`    n${i}:`);
      out.push(`${indent}${key}: ${v.split('\n').join(`\n${indent}`)}`);
    });
    return out.join('\n');
  });

const PY = `import json, sys, yaml
def load(t):
    try:
        return ['ok', yaml.safe_load(t)]
    except yaml.YAMLError:
        return ['error']
print(json.dumps([load(t) for t in json.load(sys.stdin)]))`;

describe('rendered output read as PyYAML reads it', () => {
  it('a block scalar on the last line without a line break has no final newline', () => {
    const data = parseRenderedYaml('v: |\n  echo hi', { dialect: 'pyyaml' });
    assert.deepEqual(data, { v: 'echo hi' });
    assert.deepEqual(parseRenderedYaml('v: |\n  echo hi\n', { dialect: 'pyyaml' }), { v: 'echo hi\n' });
    assert.deepEqual(parseRenderedYaml('a:\n  - |\n    x\n    y', { dialect: 'pyyaml' }), { a: ['x\ny'] });
    assert.deepEqual(parseRenderedYaml('v: 1', { dialect: 'pyyaml' }), { v: 1 });
    assert.equal(mayEndInBlockScalar('a:\n  b: 1'), false);
    assert.equal(mayEndInBlockScalar('a: |\n  b: 1'), true);
  });

  it('random texts ending in block scalars: the same data as PyYAML safe_load', () => {
    const python = findOracle();
    assert.ok(python, 'no python3 with PyYAML: the differential test needs one');
    const texts = fc.sample(doc, { numRuns: 300, seed: Number(process.env.DM_FUZZ_SEED ?? 16) });
    const result = spawnSync(python, ['-c', PY], {
      input: JSON.stringify(texts),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    assert.equal(result.status, 0, result.stderr);
    const expected = JSON.parse(result.stdout) as [string, unknown?][];
    let blocksAtEnd = 0;
    texts.forEach((text, i) => {
      const [status, data] = expected[i]!;
      assert.equal(status, 'ok', `PyYAML refused a generated text:\n${text}`);
      if (mayEndInBlockScalar(text)) blocksAtEnd++;
      assert.deepEqual(parseRenderedYaml(text, { dialect: 'pyyaml' }), data, text);
    });
    assert.ok(blocksAtEnd > 50, `only ${blocksAtEnd} texts end in a block scalar`);
  });
});

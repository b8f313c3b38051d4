/**
 * Realistic DM configurations (test/expand/dm-corpus/) expanded by dm and by a small Python
 * reference (dm_reference.py: Jinja2, PyYAML and DM's expansion rules), compared as parsed
 * data: {config, layout} must be the same. The reference needs python3 with jinja2 and yaml.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { formatYaml, parseYaml } from '../../client/src/document/yaml.js';
import { RenderSandbox } from '../../client/src/expand/index.js';
import { findOracle } from '../support/python-oracle.js';
import { CORPUS_NOW, configurations, expandCorpusConfiguration } from './dm-corpus-files.js';
import { typed } from './typed-data.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = [join(here, '../../..'), join(here, '../..')].find((d) =>
  existsSync(join(d, 'test/expand/dm_reference.py')),
)!;
const corpus = join(repoRoot, 'test/expand/dm-corpus');

const sandbox = new RenderSandbox({ timeoutMs: 10_000 });
after(() => sandbox.close());

describe('realistic DM configurations: dm and the Python reference agree', () => {
  const python = findOracle();
  const configs = configurations(corpus);

  it('the corpus has configurations and the reference has its Python', () => {
    assert.ok(python, 'no python3 with jinja2 and yaml: the reference cannot run');
    assert.ok(configs.length >= 2, `only ${configs.length} configurations`);
  });

  for (const config of configs) {
    const name = relative(corpus, config);
    it(`expands ${name} as the reference does`, async () => {
      const deployment = relative(corpus, dirname(config)).replace(/\//g, '-');
      const ref = spawnSync(
        python!,
        [join(repoRoot, 'test/expand/dm_reference.py'), config, deployment, 'my-project', CORPUS_NOW],
        { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      );
      assert.equal(ref.status, 0, ref.stderr);
      const expected = JSON.parse(ref.stdout) as unknown;
      // dm expands with its default (strict), which lets through for a user's own files what DM
      // did (docs/expansion.md, "Schemas"): each warning it gives is listed in
      // expected-warnings.txt next to the configuration.
      const violations: string[] = [];
      const result = await expandCorpusConfiguration(sandbox, config, deployment, (w) => {
        if (w.code === 'SCHEMA_VIOLATION') violations.push(w.message);
      });
      const listed = join(dirname(config), 'expected-warnings.txt');
      const expectedViolations = existsSync(listed)
        ? readFileSync(listed, 'utf8')
            .split('\n')
            .filter((l) => l.trim() && !l.startsWith('#'))
        : [];
      assert.deepEqual(
        violations.map((v) => expectedViolations.find((e) => v.includes(e)) ?? v),
        expectedViolations,
      );
      const got = { config: result.config, layout: result.layout };
      assert.deepEqual(typed(got), expected);
      // What dm expand prints reads back as the same data (floats and key order included).
      assert.deepEqual(typed(parseYaml(formatYaml(got), { dialect: 'pyyaml' })), expected);
    });
  }
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isValidName } from '../reference/reference.js';
import { tryParseVersion } from '../reference/version.js';
import { comparePaths } from './compare-paths.js';
import { pathProblem } from './content-names.js';
import { ALL_FINDING_CODES, FINDING_CODES } from './finding-codes.js';
import { scanRegistryTree } from './scan-tree.js';
import type { TreeEntry } from './types.js';

const SEGMENTS = [
  'redis',
  'big-data',
  'org.example.obs',
  'teams',
  'data',
  'v1',
  'v1.0',
  'v1.0.0',
  'v1.0.1',
  'v01',
  'v1..2',
  'v2.0.0-rc.1',
  'v1.0.0+b',
  'latest',
  'redis.jinja',
  'redis.py',
  'redis.jinja.schema',
  'redis.schema',
  'data.py',
  'example.yaml',
  'blueprint.yaml',
  'registry.yaml',
  'helpers',
  '.git',
  '_x',
  'a b',
  '\u{1F600}',
  '..',
  '.',
  '',
  'notes\\old.txt',
  'bell\u0007',
  'rlo\u202e',
];

const segment = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...SEGMENTS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);
const path = fc.oneof(
  { weight: 6, arbitrary: fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => s.join('/')) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);
const entry: fc.Arbitrary<TreeEntry> = fc.record(
  {
    path,
    type: fc.constantFrom('blob' as const, 'tree' as const),
    size: fc.nat({ max: 100 }),
    gitSha: fc.constantFrom('a'.repeat(40), 'b'.repeat(40)),
  },
  { requiredKeys: ['path', 'type'] },
);
const registryYaml = fc.option(
  fc.oneof(
    fc.constantFrom(
      'collections:\n  big-data: teams/data\n',
      'collections:\n  a: teams\n  b: teams/data\n  c: ../x\n  d/e: data\n',
      'collections: {x: redis, y: redis}\nextra: 1\n',
      'collections: [',
    ),
    fc.string({ maxLength: 40 }),
  ),
  { nil: undefined },
);

describe('scanRegistryTree() properties', () => {
  it('never throws, and reports only known codes with their severities', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), registryYaml, (entries, yaml) => {
        const result = scanRegistryTree(entries, { registryYaml: yaml });
        for (const f of result.findings) {
          assert.ok((ALL_FINDING_CODES as string[]).includes(f.code), f.code);
          assert.equal(f.severity, FINDING_CODES[f.code as keyof typeof FINDING_CODES].severity);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('does not depend on the order of the entries', () => {
    const entriesAndShuffle = fc
      .array(entry, { maxLength: 40 })
      .chain((entries) =>
        fc.tuple(
          fc.constant(entries),
          fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length }),
        ),
      );
    fc.assert(
      fc.property(entriesAndShuffle, registryYaml, ([entries, shuffled], yaml) => {
        assert.deepEqual(
          scanRegistryTree(shuffled, { registryYaml: yaml }),
          scanRegistryTree(entries, { registryYaml: yaml }),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('serves only sound versions: valid names and versions, files inside, sorted, no error about them', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), registryYaml, (entries, yaml) => {
        const result = scanRegistryTree(entries, { registryYaml: yaml });
        const errorPaths = result.findings.filter((f) => f.severity === 'error').map((f) => f.path);
        for (const v of result.versions) {
          assert.ok(isValidName(v.template));
          assert.ok(v.collection === '' || isValidName(v.collection));
          assert.ok(tryParseVersion(v.version));
          assert.ok(v.files.some((f) => f.path === v.templateFile));
          for (const f of v.files) {
            assert.equal(f.repoPath, `${v.dir}/${f.path}`);
            assert.equal(pathProblem(f.repoPath), undefined, f.repoPath);
          }
          const paths = v.files.map((f) => f.path);
          assert.deepEqual(paths, [...paths].sort(comparePaths));
          for (const p of errorPaths)
            assert.ok(p !== v.dir && !p.startsWith(`${v.dir}/`), `${p} vs ${v.dir}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * registry-fixtures/ is what tests, docs and `npm start` stand on: a sound sample registry, and
 * broken/ with exactly one instance of every lint finding code.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { pickVersion } from '../../client/src/reference/pick-version.js';
import { parseReference } from '../../client/src/reference/reference.js';
import { digestVersion } from '../../client/src/registry/digest.js';
import { ALL_FINDING_CODES, SCAN_FINDING_CODES } from '../../client/src/registry/finding-codes.js';
import { createDirectoryReader, readDirectoryTree } from '../../client/src/registry/read-directory-tree.js';
import { scanRegistryTree } from '../../client/src/registry/scan-tree.js';
import type { ScanResult } from '../../client/src/registry/types.js';
import { repoRoot } from '../support/run-cli.js';

const FIXTURES = join(repoRoot, 'registry-fixtures');
const REGISTRY = 'github.com/dm-samples/templates';

async function scan(dir: string): Promise<ScanResult> {
  const tree = await readDirectoryTree(dir);
  return scanRegistryTree(tree.entries, { registryYaml: tree.registryYaml });
}

describe('registry-fixtures/', () => {
  let result: ScanResult;
  before(async () => {
    result = await scan(FIXTURES);
  });

  it('has no findings at all, and treats broken/ as a separate registry', () => {
    assert.deepEqual(result.findings, []);
    assert.deepEqual(result.nestedRegistries, ['broken']);
    assert.equal(result.registryName, REGISTRY);
  });

  it('has at least 10 root templates and 3 named collections, one dotted, one mapped to a nested path', () => {
    const root = result.templates.filter((t) => t.collection === '');
    assert.ok(root.length >= 10, `${root.length} root templates`);
    const named = result.collections.filter((c) => c.name !== '');
    assert.ok(named.length >= 3);
    assert.ok(named.some((c) => c.name.includes('.')));
    assert.ok(named.some((c) => c.name === 'big-data' && c.path === 'teams/data/templates'));
    for (const c of named)
      assert.ok(
        result.templates.some((t) => t.collection === c.name),
        c.name,
      );
  });

  it('has Jinja, Python and blueprint versions; every template version has a schema and example.yaml', () => {
    const kinds = new Set(result.versions.map((v) => v.kind));
    assert.deepEqual([...kinds].sort(), ['blueprint', 'jinja', 'python']);
    for (const v of result.versions) {
      if (v.kind === 'blueprint') continue;
      assert.ok(v.schemaFile, `${v.dir} has no schema`);
      assert.ok(v.hasExample, `${v.dir} has no example.yaml`);
    }
  });

  it('gives patch float something to do: redis has v1, v1.0.1, v1.0.3, v1.1, v2.0.0-rc.1', () => {
    const redis = result.versions
      .filter((v) => v.collection === '' && v.template === 'redis')
      .map((v) => v.version);
    assert.deepEqual(redis, ['v1', 'v1.0.1', 'v1.0.3', 'v1.1', 'v2.0.0-rc.1']);
    assert.equal(pickVersion(redis, 'v1.0'), 'v1.0.3');
    for (const t of result.templates.filter((x) => x.collection === '')) {
      const versions = result.versions.filter((v) => v.collection === '' && v.template === t.name);
      assert.ok(versions.length >= 2, `${t.name} has ${versions.length} version(s)`);
    }
  });

  it('has templates that use others by registry reference, and every reference resolves here', async () => {
    const read = createDirectoryReader(FIXTURES);
    const references = new Set<string>();
    for (const v of result.versions) {
      const text = Buffer.from(await read(`${v.dir}/${v.templateFile}`)).toString('utf8');
      for (const m of text.matchAll(/github\.com\/[\w.-]+\/[\w.-]+\/[\w./-]+:=?v[\w.+-]+/g))
        references.add(m[0]);
    }
    assert.ok(references.size >= 5, [...references].join(', '));
    for (const text of references) {
      const ref = parseReference(text);
      assert.ok(ref.kind === 'registry' && `${ref.host}/${ref.owner}/${ref.repo}` === REGISTRY, text);
      const available = result.versions
        .filter((v) => v.collection === ref.collection && v.template === ref.template)
        .map((v) => v.version);
      assert.ok(pickVersion(available, ref.version!), text);
    }
  });

  it('has templates that use others by import, and helper files', () => {
    const postgres = result.versions.find((v) => v.template === 'postgres' && v.version === 'v1.1')!;
    assert.ok(postgres.files.some((f) => f.path === 'backup.jinja'));
    const redis = result.versions.find((v) => v.template === 'redis' && v.version === 'v1')!;
    assert.ok(redis.files.some((f) => f.path === 'helpers/common.jinja'));
    const service = result.versions.find((v) => v.template === 'replicated-service' && v.version === 'v1')!;
    assert.ok(service.files.some((f) => f.path === 'helpers/naming.py'));
  });

  it('gives each version a digest, and patches differ from each other', async () => {
    const read = createDirectoryReader(FIXTURES);
    const digests = new Set<string>();
    for (const v of result.versions) digests.add((await digestVersion(v, read)).digest);
    assert.equal(digests.size, result.versions.length);
  });
});

describe('registry-fixtures/broken/', () => {
  it('holds exactly one instance of every finding code the tree scan gives', async () => {
    const result = await scan(join(FIXTURES, 'broken'));
    const codes = result.findings.map((f) => f.code).sort();
    assert.deepEqual(codes, [...SCAN_FINDING_CODES].sort());
  });
});

describe('docs/registry-layout.md', () => {
  it('explains every finding code', async () => {
    const doc = await readFile(join(repoRoot, 'docs', 'registry-layout.md'), 'utf8');
    for (const code of ALL_FINDING_CODES) assert.ok(doc.includes(`\`${code}\``), code);
  });
});

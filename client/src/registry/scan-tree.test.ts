import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { comparePaths } from './compare-paths.js';
import { FINDING_CODES, SCAN_FINDING_CODES } from './finding-codes.js';
import { scanRegistryTree } from './scan-tree.js';
import type { ScanResult, TreeEntry } from './types.js';

/** A tree from file paths; a path ending in `/` is an (empty) directory. */
function tree(...paths: string[]): TreeEntry[] {
  return paths.map((p) =>
    p.endsWith('/') ? { path: p.slice(0, -1), type: 'tree' } : { path: p, type: 'blob', size: 1 },
  );
}

/** A sound Jinja template version: template, schema, example. */
function version(dir: string, template: string, ext = 'jinja'): string[] {
  return [`${dir}/${template}.${ext}`, `${dir}/${template}.${ext}.schema`, `${dir}/example.yaml`];
}

function codes(result: ScanResult): string[] {
  return result.findings.map((f) => `${f.code} ${f.path}`);
}

function served(result: ScanResult): string[] {
  return result.versions.map((v) => `${v.collection}/${v.template}:${v.version}`);
}

interface RuleCase {
  rule: string;
  paths: string[];
  registryYaml?: string;
  /** `CODE path` of every finding, in the scanner's order. */
  findings: string[];
  /** `collection/template:version` of what is served. */
  served: string[];
}

const RULES: RuleCase[] = [
  {
    rule: 'TWO_TEMPLATE_FILES: a .jinja and a .py of the template name',
    paths: [...version('redis/v1', 'redis'), 'redis/v1/redis.py'],
    findings: ['TWO_TEMPLATE_FILES redis/v1'],
    served: [],
  },
  {
    rule: 'TWO_TEMPLATE_FILES: a template file and blueprint.yaml',
    paths: [...version('redis/v1', 'redis'), 'redis/v1/blueprint.yaml'],
    findings: ['TWO_TEMPLATE_FILES redis/v1'],
    served: [],
  },
  {
    rule: 'NO_TEMPLATE_FILE: nothing that could be the template',
    paths: ['redis/v1/README.md', 'redis/v1/example.yaml', ...version('redis/v1.0.1', 'redis')],
    findings: ['NO_TEMPLATE_FILE redis/v1'],
    served: ['/redis:v1.0.1'],
  },
  {
    rule: 'NO_TEMPLATE_FILE: several other template files, none named after the template',
    paths: ['redis/v1/a.jinja', 'redis/v1/b.py', 'redis/v1/example.yaml'],
    findings: ['NO_TEMPLATE_FILE redis/v1'],
    served: [],
  },
  {
    rule: 'NO_TEMPLATE_FILE: an empty version directory',
    paths: ['redis/v1/'],
    findings: ['MISSING_EXAMPLE redis/v1', 'NO_TEMPLATE_FILE redis/v1'],
    served: [],
  },
  {
    rule: 'TEMPLATE_NAME_MISMATCH: the only template file has another name',
    paths: ['redis/v1/cache.jinja', 'redis/v1/example.yaml'],
    findings: ['TEMPLATE_NAME_MISMATCH redis/v1/cache.jinja'],
    served: [],
  },
  {
    rule: 'helpers next to the template file are fine, in any folder',
    paths: [...version('redis/v1', 'redis'), 'redis/v1/common.py', 'redis/v1/helpers/macros.jinja'],
    findings: [],
    served: ['/redis:v1'],
  },
  {
    rule: 'SCHEMA_NAME_MISMATCH: redis.schema for redis.jinja',
    paths: ['redis/v1/redis.jinja', 'redis/v1/redis.schema', 'redis/v1/example.yaml'],
    findings: ['SCHEMA_NAME_MISMATCH redis/v1/redis.schema'],
    served: [],
  },
  {
    rule: 'a schema named after another top-level file (a helper template) is fine',
    paths: [...version('redis/v1', 'redis'), 'redis/v1/backup.jinja', 'redis/v1/backup.jinja.schema'],
    findings: [],
    served: ['/redis:v1'],
  },
  {
    rule: 'the schema is optional',
    paths: ['redis/v1/redis.py', 'redis/v1/example.yaml'],
    findings: [],
    served: ['/redis:v1'],
  },
  {
    rule: 'MISSING_EXAMPLE is a warning: the version is served',
    paths: ['redis/v1/redis.jinja'],
    findings: ['MISSING_EXAMPLE redis/v1'],
    served: ['/redis:v1'],
  },
  {
    rule: 'a blueprint version needs no example.yaml',
    paths: ['platform/ns/v1/blueprint.yaml', 'platform/ns/v1/deploy-execution.yaml'],
    findings: [],
    served: ['platform/ns:v1'],
  },
  {
    rule: 'DUPLICATE_VERSION: v1 and v1.0.0, neither served, one finding naming both',
    paths: [
      ...version('redis/v1', 'redis'),
      ...version('redis/v1.0.0', 'redis'),
      ...version('redis/v1.1', 'redis'),
    ],
    findings: ['DUPLICATE_VERSION redis'],
    served: ['/redis:v1.1'],
  },
  {
    rule: 'DUPLICATE_VERSION: versions that differ only in build metadata',
    paths: [...version('redis/v1.0.0+a', 'redis'), ...version('redis/v1.0.0+b', 'redis')],
    findings: ['DUPLICATE_VERSION redis'],
    served: [],
  },
  {
    rule: 'DUPLICATE_VERSION: three spellings of one version are one finding',
    paths: [
      ...version('redis/v2', 'redis'),
      ...version('redis/v2.0', 'redis'),
      ...version('redis/v2.0.0', 'redis'),
    ],
    findings: ['DUPLICATE_VERSION redis'],
    served: [],
  },
  {
    rule: 'a pre-release is not the same version as its release',
    paths: [...version('redis/v2.0.0-rc.1', 'redis'), ...version('redis/v2', 'redis')],
    findings: [],
    served: ['/redis:v2.0.0-rc.1', '/redis:v2'],
  },
  {
    rule: 'INVALID_VERSION_DIR: v01, v1..2, v1.2.3.4, v1x',
    paths: [
      ...version('redis/v01', 'redis'),
      ...version('redis/v1..2', 'redis'),
      ...version('redis/v1.2.3.4', 'redis'),
      ...version('redis/v1x', 'redis'),
      ...version('redis/v1.2', 'redis'),
    ],
    findings: [
      'INVALID_VERSION_DIR redis/v01',
      'INVALID_VERSION_DIR redis/v1..2',
      'INVALID_VERSION_DIR redis/v1.2.3.4',
      'INVALID_VERSION_DIR redis/v1x',
    ],
    served: ['/redis:v1.2'],
  },
  {
    rule: 'NOT_A_VERSION_DIR: a directory without the v is a warning and ignored',
    paths: [...version('redis/v1', 'redis'), 'redis/1.0.0/redis.jinja', 'redis/docs/'],
    findings: ['NOT_A_VERSION_DIR redis/1.0.0', 'NOT_A_VERSION_DIR redis/docs'],
    served: ['/redis:v1'],
  },
  {
    rule: 'INVALID_NAME: a template directory',
    paths: [...version('_redis/v1', '_redis'), ...version('db/my db/v1', 'my db')],
    findings: ['INVALID_NAME _redis', 'INVALID_NAME db/my db'],
    served: [],
  },
  {
    rule: 'UNSAFE_PATH: a backslash outside every template, a control character in a version',
    paths: [
      ...version('redis/v1', 'redis'),
      ...version('web/v1', 'web'),
      'web/v1/bell\u0007.txt',
      'docs/notes\\old.txt',
    ],
    findings: ['UNSAFE_PATH docs/notes\\old.txt', 'UNSAFE_PATH web/v1/bell\u0007.txt'],
    served: ['/redis:v1'],
  },
  {
    rule: 'INVALID_NAME: a collection directory',
    paths: [...version('my stuff/redis/v1', 'redis')],
    findings: ['INVALID_NAME my stuff'],
    served: [],
  },
  {
    rule: 'NO_VERSIONS: a template of a named collection without versions',
    paths: [...version('data/kafka/v1', 'kafka'), 'data/notes/README.md', 'data/assets/'],
    findings: ['NO_VERSIONS data/assets', 'NO_VERSIONS data/notes'],
    served: ['data/kafka:v1'],
  },
  {
    rule: 'REGISTRY_YAML_INVALID: not YAML',
    paths: [...version('redis/v1', 'redis')],
    registryYaml: 'collections: [unclosed',
    findings: ['REGISTRY_YAML_INVALID registry.yaml'],
    served: ['/redis:v1'],
  },
  {
    rule: 'REGISTRY_YAML_INVALID: not a mapping, or collections not a mapping, or a path not a string',
    paths: [],
    registryYaml: '- a\n- b\n',
    findings: ['REGISTRY_YAML_INVALID registry.yaml'],
    served: [],
  },
  {
    rule: 'REGISTRY_YAML_INVALID: collections is a list',
    paths: [],
    registryYaml: 'collections: [a, b]\n',
    findings: ['REGISTRY_YAML_INVALID registry.yaml'],
    served: [],
  },
  {
    rule: 'REGISTRY_YAML_INVALID: a path that is not a string, or the root itself',
    paths: [...version('x/kafka/v1', 'kafka')],
    registryYaml: 'collections:\n  a: 42\n  b: .\n  c: x\n',
    findings: ['REGISTRY_YAML_INVALID registry.yaml', 'REGISTRY_YAML_INVALID registry.yaml'],
    served: ['c/kafka:v1'],
  },
  {
    rule: 'REGISTRY_YAML_INVALID: a name that is not host/owner/repo',
    paths: [],
    registryYaml: 'name: github.com/o/r/collection\n',
    findings: ['REGISTRY_YAML_INVALID registry.yaml'],
    served: [],
  },
  {
    rule: 'REGISTRY_YAML_UNKNOWN_KEY',
    paths: [],
    registryYaml: 'collections: {}\nowners: [me]\n',
    findings: ['REGISTRY_YAML_UNKNOWN_KEY registry.yaml'],
    served: [],
  },
  {
    rule: 'REGISTRY_YAML_INVALID_NAME: a name with a slash',
    paths: [],
    registryYaml: 'collections:\n  team/data: teams/data\n  _x: x\n',
    findings: ['REGISTRY_YAML_INVALID_NAME registry.yaml', 'REGISTRY_YAML_INVALID_NAME registry.yaml'],
    served: [],
  },
  {
    rule: 'REGISTRY_YAML_PATH_ESCAPES: .. and absolute paths',
    paths: [],
    registryYaml: 'collections:\n  a: ../x\n  b: /etc\n  c: x/../../y\n',
    findings: [
      'REGISTRY_YAML_PATH_ESCAPES registry.yaml',
      'REGISTRY_YAML_PATH_ESCAPES registry.yaml',
      'REGISTRY_YAML_PATH_ESCAPES registry.yaml',
    ],
    served: [],
  },
  {
    rule: 'REGISTRY_YAML_DUPLICATE_PATH: keep neither',
    paths: [...version('teams/data/kafka/v1', 'kafka')],
    registryYaml: 'collections:\n  a: teams/data\n  b: ./teams//data/\n',
    findings: ['REGISTRY_YAML_DUPLICATE_PATH registry.yaml'],
    served: [],
  },
  {
    rule: 'REGISTRY_YAML_MISSING_PATH: no such directory (or a file)',
    paths: ['teams/notes.md'],
    registryYaml: 'collections:\n  a: teams/data\n  b: teams/notes.md\n',
    findings: ['REGISTRY_YAML_MISSING_PATH registry.yaml', 'REGISTRY_YAML_MISSING_PATH registry.yaml'],
    served: [],
  },
  {
    rule: 'SHADOWED_DIRECTORY: the top-level directory of a collection mapped elsewhere',
    paths: [...version('data/old/v1', 'old'), ...version('teams/data/kafka/v1', 'kafka')],
    registryYaml: 'collections:\n  data: teams/data\n',
    findings: ['SHADOWED_DIRECTORY data'],
    served: ['data/kafka:v1'],
  },
  {
    rule: 'VERSION_TOO_MANY_FILES: a version of 1,001 files is skipped; one of 1,000 is served',
    paths: [
      ...version('bulk/v1', 'bulk'),
      ...Array.from({ length: 998 }, (_, i) => `bulk/v1/data/f${i}.txt`),
      ...version('bulk/v2', 'bulk'),
      ...Array.from({ length: 997 }, (_, i) => `bulk/v2/data/f${i}.txt`),
    ],
    findings: ['VERSION_TOO_MANY_FILES bulk/v1'],
    served: ['/bulk:v2'],
  },
];

describe('scanRegistryTree() rules', () => {
  for (const c of RULES) {
    it(c.rule, () => {
      const result = scanRegistryTree(tree(...c.paths), { registryYaml: c.registryYaml });
      assert.deepEqual(codes(result), c.findings);
      assert.deepEqual(served(result), c.served);
      for (const f of result.findings) {
        assert.equal(f.severity, FINDING_CODES[f.code as keyof typeof FINDING_CODES].severity);
        assert.ok(f.message.length > 10);
      }
    });
  }
  it('has a rule case for every finding code', () => {
    const seen = new Set(
      RULES.flatMap((c) => scanRegistryTree(tree(...c.paths), { registryYaml: c.registryYaml }).findings).map(
        (f) => f.code,
      ),
    );
    assert.deepEqual([...seen].sort(), [...SCAN_FINDING_CODES].sort());
  });
});

describe('scanRegistryTree() layout', () => {
  it('tells root templates (version children) from collections (template children)', () => {
    const r = scanRegistryTree(
      tree(...version('redis/v1', 'redis'), ...version('big-data/spark/v2', 'spark', 'py'), 'docs/intro.md'),
    );
    assert.deepEqual(r.collections, [
      { name: '', path: '' },
      { name: 'big-data', path: 'big-data' },
    ]);
    assert.deepEqual(served(r), ['/redis:v1', 'big-data/spark:v2']);
    assert.deepEqual(r.findings, []);
    const spark = r.versions[1]!;
    assert.equal(spark.kind, 'python');
    assert.equal(spark.templateFile, 'spark.py');
    assert.equal(spark.schemaFile, 'spark.py.schema');
    assert.equal(spark.dir, 'big-data/spark/v2');
    assert.equal(spark.hasExample, true);
  });
  it('maps collections with registry.yaml; directories on the way are not collections', () => {
    const r = scanRegistryTree(
      tree(...version('teams/data/templates/kafka/v1', 'kafka', 'py'), 'teams/README.md', 'teams/other/x/'),
      { registryYaml: 'collections:\n  big-data: teams/data/templates\n' },
    );
    assert.deepEqual(r.collections, [
      { name: '', path: '' },
      { name: 'big-data', path: 'teams/data/templates' },
    ]);
    assert.deepEqual(served(r), ['big-data/kafka:v1']);
    assert.deepEqual(r.findings, []);
    assert.deepEqual(
      r.versions[0]!.files.map((f) => f.path),
      ['example.yaml', 'kafka.py', 'kafka.py.schema'],
    );
    assert.equal(r.versions[0]!.files[1]!.repoPath, 'teams/data/templates/kafka/v1/kafka.py');
  });
  it('reads the registry name from registry.yaml, normalized', () => {
    assert.equal(
      scanRegistryTree([], { registryYaml: 'name: github.com/dm-samples/templates\n' }).registryName,
      'github.com/dm-samples/templates',
    );
    assert.equal(scanRegistryTree([], { registryYaml: 'name: o/r\n' }).registryName, 'github.com/o/r');
    assert.equal(scanRegistryTree([], {}).registryName, undefined);
  });
  it('falls back to the top-level directory for collections registry.yaml does not list', () => {
    const r = scanRegistryTree(tree(...version('org.example.obs/grafana/v1', 'grafana')), {
      registryYaml: 'collections:\n  big-data: teams/data\n',
    });
    assert.deepEqual(served(r), ['org.example.obs/grafana:v1']);
    assert.deepEqual(codes(r), ['REGISTRY_YAML_MISSING_PATH registry.yaml']);
  });
  it('does not scan a mapped collection nested in another as a template of it', () => {
    const r = scanRegistryTree(tree(...version('a/t/v1', 't'), ...version('a/inner/u/v1', 'u')), {
      registryYaml: 'collections:\n  a: a\n  inner: a/inner\n',
    });
    assert.deepEqual(served(r), ['a/t:v1', 'inner/u:v1']);
    assert.deepEqual(r.findings, []);
  });
  it('skips a top-level directory with its own registry.yaml as a nested registry', () => {
    const r = scanRegistryTree(
      tree(...version('redis/v1', 'redis'), 'broken/registry.yaml', 'broken/x/v01/x.jinja', 'broken/y/v1/'),
    );
    assert.deepEqual(r.nestedRegistries, ['broken']);
    assert.deepEqual(served(r), ['/redis:v1']);
    assert.deepEqual(r.findings, []);
  });
  it('ignores hidden directories and top-level directories without subdirectories', () => {
    const r = scanRegistryTree(
      tree(
        '.git/HEAD',
        '.github/workflows/lint.yaml',
        'docs/a.md',
        'empty/',
        ...version('redis/v1', 'redis'),
        'redis/.cache/x',
        'redis/v1/.helmignore',
      ),
    );
    assert.deepEqual(served(r), ['/redis:v1']);
    assert.deepEqual(r.findings, []);
    assert.ok(r.versions[0]!.files.some((f) => f.path === '.helmignore'));
  });
  it('never looks deeper than collection/template/version for templates', () => {
    const r = scanRegistryTree(tree(...version('c/t/v1', 't'), ...version('c/t/v1/nested/v2', 'nested')));
    assert.deepEqual(served(r), ['c/t:v1']);
    assert.ok(r.versions[0]!.files.some((f) => f.path === 'nested/v2/nested.jinja'));
  });
  it('treats a path listed as both a file and a directory as a directory', () => {
    const r = scanRegistryTree([{ path: 'redis', type: 'blob' }, ...tree(...version('redis/v1', 'redis'))]);
    assert.deepEqual(served(r), ['/redis:v1']);
  });
  it('sorts versions in version order and files by UTF-8 bytes', () => {
    const r = scanRegistryTree(
      tree(
        ...['v1.10', 'v1.2', 'v2.0.0-rc.1', 'v1', 'v2', 'v1.2.1'].flatMap((v) =>
          version(`redis/${v}`, 'redis'),
        ),
        'redis/v1/\u{1F600}.txt',
        'redis/v1/\uFF21.txt',
      ),
    );
    assert.deepEqual(served(r), [
      '/redis:v1',
      '/redis:v1.2',
      '/redis:v1.2.1',
      '/redis:v1.10',
      '/redis:v2.0.0-rc.1',
      '/redis:v2',
    ]);
    const files = r.versions[0]!.files.map((f) => f.path);
    assert.deepEqual(files.slice(-2), ['\uFF21.txt', '\u{1F600}.txt']);
  });
  it('keeps git blob ids and sizes of files', () => {
    const r = scanRegistryTree([
      { path: 'redis/v1/redis.py', type: 'blob', size: 12, gitSha: 'a'.repeat(40) },
      { path: 'redis/v1/example.yaml', type: 'blob', size: 3, gitSha: 'b'.repeat(40) },
    ]);
    assert.deepEqual(r.versions[0]!.files[1], {
      path: 'redis.py',
      repoPath: 'redis/v1/redis.py',
      size: 12,
      gitSha: 'a'.repeat(40),
    });
  });
  it('lists templates, including those without a valid version', () => {
    const r = scanRegistryTree(tree('redis/v01/redis.jinja', ...version('c/t/v1', 't')));
    assert.deepEqual(r.templates, [
      { collection: '', name: 'redis', path: 'redis' },
      { collection: 'c', name: 't', path: 'c/t' },
    ]);
  });
  it('says which collection, template and version a finding is about', () => {
    const r = scanRegistryTree(tree('c/t/v1/t.jinja'));
    assert.deepEqual(r.findings[0], {
      code: 'MISSING_EXAMPLE',
      severity: 'warning',
      path: 'c/t/v1',
      message: "'c/t/v1' has no example.yaml (a configuration that deploys one instance)",
      collection: 'c',
      template: 't',
      version: 'v1',
    });
  });
});

describe('comparePaths()', () => {
  it('orders by code point, not UTF-16 unit', () => {
    assert.ok(comparePaths('\uFF21', '\u{1F600}') < 0);
    assert.ok(comparePaths('a', 'b') < 0);
    assert.ok(comparePaths('a', 'a/b') < 0);
    assert.equal(comparePaths('x', 'x'), 0);
    const words = ['b', '\u{1F600}', 'a/b', '\uFF21', 'a', 'Z', 'a-b', 'a.b'];
    const byBytes = [...words].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    assert.deepEqual([...words].sort(comparePaths), byBytes);
  });
  it('agrees with the order of UTF-8 bytes on any strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        const bytes = Buffer.compare(Buffer.from(a), Buffer.from(b));
        assert.equal(Math.sign(comparePaths(a, b)), bytes);
      }),
      { numRuns: 2000 },
    );
  });
});

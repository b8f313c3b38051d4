/**
 * DM expansion semantics (docs/expansion.md: configurations, schemas, value references), with the
 * real sandbox and real files.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DmError } from '../../client/src/error.js';
import { type ExpandOptions, expandConfiguration, RenderSandbox } from '../../client/src/expand/index.js';
import { PyFloat } from '../../client/src/python/values.js';

const root = mkdtempSync(join(tmpdir(), 'dm-expand-'));
let sandbox: RenderSandbox;
let counter = 0;

function fixture(files: Record<string, string>): string {
  const dir = join(root, `case-${counter++}`);
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  return dir;
}

async function expand(files: Record<string, string>, options: ExpandOptions = {}) {
  const dir = fixture(files);
  return expandConfiguration(
    { content: files['config.yaml'] ?? '', path: join(dir, 'config.yaml') },
    { sandbox, now: () => new Date('2026-01-02T03:04:05Z'), ...options },
  );
}

async function expandError(files: Record<string, string>, options: ExpandOptions = {}): Promise<DmError> {
  try {
    await expand(files, options);
  } catch (error) {
    assert.ok(error instanceof DmError, `expected a DmError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected expansion to fail');
}

before(() => {
  sandbox = new RenderSandbox({ timeoutMs: 5000 });
});
after(() => {
  sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

const RS = `resources:
- name: {{ env.name }}-rc
  type: ReplicationController
  properties:
    replicas: {{ properties.replicas }}
- name: {{ env.name }}-service
  type: Service
`;

describe('expandConfiguration()', () => {
  it('expandConfiguration() flattens templates into primitives and records the layout', async () => {
    const result = await expand({
      'config.yaml': `imports:\n- path: rs.jinja\nresources:\n- name: rs\n  type: rs.jinja\n  properties: {replicas: 2}\n- name: cm\n  type: ConfigMap\n`,
      'rs.jinja': RS,
    });
    assert.deepEqual(result.config.resources, [
      { name: 'rs-rc', type: 'ReplicationController', properties: { replicas: 2 } },
      { name: 'rs-service', type: 'Service' },
      { name: 'cm', type: 'ConfigMap' },
    ]);
    assert.deepEqual(result.layout.resources, [
      {
        name: 'rs',
        type: 'rs.jinja',
        properties: { replicas: 2 },
        resources: [
          { name: 'rs-rc', type: 'ReplicationController' },
          { name: 'rs-service', type: 'Service' },
        ],
      },
      { name: 'cm', type: 'ConfigMap' },
    ]);
  });

  it('expandConfiguration() imports a type present next to the configuration without an imports entry', async () => {
    const result = await expand({
      'config.yaml': 'resources:\n- name: rs\n  type: rs.jinja\n  properties: {replicas: 1}\n',
      'rs.jinja': RS,
    });
    assert.equal(result.config.resources.length, 2);
  });

  it('expandConfiguration() expands an empty document and null resources to nothing', async () => {
    for (const content of ['', '# nothing\n', 'resources:\n', 'resources: null\n']) {
      const result = await expand({ 'config.yaml': content });
      assert.deepEqual(result.config.resources, []);
      assert.deepEqual(result.layout.resources, []);
    }
  });

  it('expandConfiguration() rejects duplicate names in one list, naming where', async () => {
    const top = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: T}\n- {name: a, type: U}\n',
    });
    assert.match(top.message, /Resource name 'a' is not unique in configuration/);
    const inTemplate = await expandError({
      'config.yaml': 'resources:\n- {name: x, type: dup.jinja}\n',
      'dup.jinja': 'resources:\n- {name: same, type: A}\n- {name: same, type: B}\n',
    });
    assert.match(inTemplate.message, /Resource name 'same' is not unique in template 'dup.jinja'/);
  });

  it('expandConfiguration() allows the same name at a parent and a child level and in sibling templates', async () => {
    const result = await expand({
      'config.yaml': 'resources:\n- {name: web, type: t.jinja}\n- {name: api, type: t.jinja}\n',
      't.jinja': 'resources:\n- {name: web, type: Pod}\n',
    });
    assert.deepEqual(
      result.config.resources.map((r) => r.name),
      ['web', 'web'],
    );
  });

  it('expandConfiguration() rejects a resource without a name or a type, naming it and the file', async () => {
    const noName = await expandError({ 'config.yaml': 'resources:\n- {type: T}\n' });
    assert.match(noName.message, /config\.yaml: Resource does not have a name: resources\[0\]/);
    const noType = await expandError({ 'config.yaml': 'resources:\n- {name: a}\n' });
    assert.match(noType.message, /config\.yaml: Resource does not have type defined: 'a'/);
  });

  it('expandConfiguration() fails on a listed import that does not exist', async () => {
    const error = await expandError({ 'config.yaml': 'imports:\n- path: missing.jinja\nresources: []\n' });
    assert.equal(error.code, 'IMPORT_NOT_FOUND');
    assert.match(error.message, /missing\.jinja/);
  });

  it('expandConfiguration() treats a template-looking type that is not there as a primitive, with a warning', async () => {
    const result = await expand({ 'config.yaml': 'resources:\n- {name: a, type: nothere.jinja}\n' });
    assert.deepEqual(result.config.resources, [{ name: 'a', type: 'nothere.jinja' }]);
    assert.equal(result.warnings[0]?.code, 'TEMPLATE_NOT_FOUND');
  });

  it("expandConfiguration() fails with DM's text when a template returns no resources field", async () => {
    const error = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: bad.jinja}\n',
      'bad.jinja': 'items: []\n',
    });
    assert.match(error.message, /bad\.jinja: Template did not return a 'resources:' field/);
  });

  it('expandConfiguration() gives templates deployment, name, type, project, current_time and --env', async () => {
    const result = await expand(
      {
        'config.yaml': 'resources:\n- {name: a, type: env.jinja}\n- {name: b, type: env.py}\n',
        'env.jinja':
          'resources:\n- name: j\n  type: T\n  properties: {d: {{ env.deployment }}, n: {{ env.name }}, t: {{ env.type }}, p: {{ env.project }}, c: "{{ env.current_time }}", x: {{ env.extra }}}\n',
        'env.py':
          "def GenerateConfig(context):\n    e = context.env\n    return {'resources': [{'name': 'p', 'type': 'T', 'properties': {k: e[k] for k in ['deployment', 'name', 'type', 'project', 'extra']}}]}\n",
      },
      { deployment: 'prod', project: 'proj', env: { extra: 42 } },
    );
    assert.deepEqual(result.config.resources[0]?.properties, {
      d: 'prod',
      n: 'a',
      t: 'env.jinja',
      p: 'proj',
      c: '2026-01-02T03:04:05.000Z',
      x: 42,
    });
    assert.deepEqual(result.config.resources[1]?.properties, {
      deployment: 'prod',
      name: 'b',
      type: 'env.py',
      project: 'proj',
      extra: 42,
    });
  });

  it('expandConfiguration() mixes Jinja and Python templates over three levels, with helpers and inlined files', async () => {
    const result = await expand({
      'config.yaml':
        'imports:\n- path: top.jinja\n- path: mid.py\n- path: helpers/naming.py\n- path: data/motd.txt\n  name: motd\nresources:\n- {name: app, type: top.jinja}\n',
      'top.jinja':
        'resources:\n- name: {{ env.name }}-mid\n  type: mid.py\n  properties: {motd: {{ imports["motd"] | tojson }}}\n',
      'mid.py':
        "from helpers import naming\ndef GenerateConfig(context):\n    return {'resources': [{'name': naming.child(context.env['name']), 'type': 'leaf.jinja', 'properties': {'motd': context.properties['motd']}}]}\n",
      'helpers/naming.py': "def child(n):\n    return n + '-leaf'\n",
      'data/motd.txt': 'hello\n',
      'leaf.jinja':
        'resources:\n- name: {{ env.name }}-cm\n  type: ConfigMap\n  properties: {motd: {{ properties.motd | tojson }}}\n',
    });
    assert.deepEqual(result.config.resources, [
      { name: 'app-mid-leaf-cm', type: 'ConfigMap', properties: { motd: 'hello\n' } },
    ]);
    assert.equal(result.layout.resources[0]?.resources?.[0]?.resources?.[0]?.type, 'leaf.jinja');
  });

  it('expandConfiguration() bounds the depth and names the chain', async () => {
    const error = await expandError(
      {
        'config.yaml': 'resources:\n- {name: a, type: deep.jinja, properties: {n: 0}}\n',
        'deep.jinja': 'resources:\n- {name: a, type: deep.jinja, properties: {n: {{ properties.n + 1 }}}}\n',
      },
      { maxDepth: 5 },
    );
    assert.equal(error.category, 'limit');
    assert.match(error.message, /deeper than 5 levels: a \(deep\.jinja\) → a \(deep\.jinja\)/);
  });

  it('expandConfiguration() reports a template that instantiates itself with the same properties as a cycle', async () => {
    const error = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: a.jinja}\n',
      'a.jinja': 'resources:\n- {name: b, type: b.jinja}\n',
      'b.jinja': 'resources:\n- {name: a, type: a.jinja}\n',
    });
    assert.equal(error.code, 'TEMPLATE_CYCLE');
    assert.match(error.message, /a \(a\.jinja\) → b \(b\.jinja\) → a \(a\.jinja\)/);
  });

  it('expandConfiguration() finds a cycle through templates with schemas, defaults included', async () => {
    // A Jinja template's properties are checked in the request that renders it; a Python
    // template's on their own. The cycle is the same instance once the defaults are filled in.
    const error = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: a.jinja}\n',
      'a.jinja': 'resources:\n- {name: b, type: b.py, properties: {n: {{ properties.n }}}}\n',
      'a.jinja.schema': 'properties:\n  n: {type: integer, default: 1}\n',
      'b.py':
        'def GenerateConfig(c):\n    return {"resources": [{"name": "a", "type": "a.jinja", "properties": {"n": c.properties["n"]}}]}\n',
      'b.py.schema': 'properties:\n  n: {type: integer}\n',
    });
    assert.equal(error.code, 'TEMPLATE_CYCLE');
    assert.match(error.message, /a \(a\.jinja\) → b \(b\.py\) → a \(a\.jinja\)/);
  });

  it('expandConfiguration() reports a Python exception with the template file and line', async () => {
    const error = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: boom.py}\n',
      'boom.py': "def GenerateConfig(context):\n    x = {}\n    return x['missing']\n",
    });
    assert.match(error.message, /^boom\.py:3: KeyError: 'missing'/);
  });

  it('expandConfiguration() reports an exception inside a helper module with the helper file and line', async () => {
    const error = await expandError({
      'config.yaml': 'imports:\n- path: lib/util.py\nresources:\n- {name: a, type: main.py}\n',
      'main.py': 'import lib.util\ndef GenerateConfig(context):\n    return lib.util.f()\n',
      'lib/util.py': 'def f():\n    return 1 / 0\n',
    });
    assert.match(error.message, /^lib\/util\.py:2: ZeroDivisionError/);
  });

  it('expandConfiguration() makes helper packages with __init__.py importable by path', async () => {
    const result = await expand({
      'config.yaml':
        'imports:\n- path: pkg/__init__.py\n- path: pkg/names.py\nresources:\n- {name: a, type: main.py}\n',
      'main.py':
        'import pkg\nfrom pkg.names import suffix\ndef GenerateConfig(context):\n    return {"resources": [{"name": pkg.PREFIX + suffix(), "type": "T"}]}\n',
      'pkg/__init__.py': 'PREFIX = "p-"\n',
      'pkg/names.py': 'def suffix():\n    return "s"\n',
    });
    assert.deepEqual(result.config.resources, [{ name: 'p-s', type: 'T' }]);
  });

  it('expandConfiguration() accepts generate_config and YAML text from Python templates', async () => {
    const result = await expand({
      'config.yaml': 'resources:\n- {name: a, type: g.py}\n',
      'g.py': "def generate_config(context):\n    return 'resources:\\n- {name: x, type: T}\\n'\n",
    });
    assert.deepEqual(result.config.resources, [{ name: 'x', type: 'T' }]);
  });

  it('expandConfiguration() writes no resources key in the layout of a template that rendered none', async () => {
    const result = await expand({
      'config.yaml': 'resources:\n- {name: a, type: e.jinja, properties: {k: 1}}\n- {name: b, type: n.py}\n',
      'e.jinja': 'resources: []\n',
      'n.py': 'def GenerateConfig(context):\n    return {"resources": None}\n',
    });
    assert.deepEqual(result.layout.resources, [
      { name: 'a', type: 'e.jinja', properties: { k: 1 } },
      { name: 'b', type: 'n.py' },
    ]);
    assert.deepEqual(result.config.resources, []);
  });

  it('expandConfiguration() keeps 1.0 a float through Jinja and Python only when asked (pythonValues), else plain numbers', async () => {
    const files = {
      'config.yaml':
        'resources:\n- {name: j, type: f.jinja, properties: {x: 1.0, d: {b: 1, "10": 2}}}\n- {name: p, type: f.py, properties: {x: 2.0}}\n',
      'f.jinja':
        'resources:\n- {name: {{ env.name }}-r, type: T, properties: {x: {{ properties.x }}, s: "{{ properties.x }}", k: "{{ properties.d|list|join(\',\') }}"}}\n',
      'f.py':
        'def GenerateConfig(context):\n    x = context.properties["x"]\n    return {"resources": [{"name": "p-r", "type": "T", "properties": {"x": x, "t": type(x).__name__}}]}\n',
    };
    const kept = await expand(files, { pythonValues: true });
    const [j, p] = kept.config.resources;
    assert.ok(j?.properties?.x instanceof PyFloat);
    assert.deepEqual([j?.properties?.s, j?.properties?.k], ['1.0', 'b,10']);
    assert.ok(p?.properties?.x instanceof PyFloat);
    assert.equal(p?.properties?.t, 'float');
    assert.ok((kept.layout.resources[0]?.properties?.x as unknown) instanceof PyFloat);
    // By default the data is as JSON holds it (deploy clones it with structuredClone).
    const plain = await expand(files);
    assert.deepEqual(structuredClone(plain.config.resources), [
      { name: 'j-r', type: 'T', properties: { x: 1, s: '1.0', k: 'b,10' } },
      { name: 'p-r', type: 'T', properties: { x: 2, t: 'float' } },
    ]);
  });

  it("expandConfiguration() drops a template's final newline on every path, as Jinja2 and PyYAML did", async () => {
    const block =
      'resources:\n- name: {{ env.name }}-vm\n  type: VM\n  properties:\n    startup: |\n      echo one\n      echo two\n';
    const result = await expand({
      'config.yaml':
        'resources:\n- {name: top, type: top.jinja}\n- {name: py, type: p.py}\n- {name: inc, type: inc.jinja}\n',
      'top.jinja': 'resources:\n- {name: mid, type: mid.jinja}\n',
      'mid.jinja': block,
      'inc.jinja': "{% include 'part.jinja' %}\n",
      'part.jinja': block,
      'inc.jinja.schema': 'imports:\n- path: part.jinja\n',
      'p.py':
        'def GenerateConfig(context):\n    return "resources:\\n- name: x\\n  type: VM\\n  properties:\\n    startup: |\\n      echo py"\n',
    });
    const startups = result.config.resources.map((r) => [r.name, r.properties?.startup]);
    assert.deepEqual(startups, [
      ['mid-vm', 'echo one\necho two'],
      ['x', 'echo py'],
      ['inc-vm', 'echo one\necho two'],
    ]);
  });

  it("expandConfiguration() gives Python templates DM's yaml module and Python 2 mapping methods", async () => {
    const py = [
      'import yaml',
      'from helpers import util',
      'def GenerateConfig(context):',
      '    doc = yaml.load(context.imports["data.yaml"])',
      '    labels = dict((k, v) for k, v in context.properties["labels"].iteritems())',
      '    assert context.properties.has_key("labels") and context.env.has_key("name")',
      '    assert not context.properties["labels"].has_key("nope")',
      '    text = yaml.dump({"b": [1, 2], "a": {"x": "y"}})',
      '    return yaml.dump({"resources": [{"name": doc["name"], "type": "T",',
      '        "properties": {"labels": labels, "dumped": text, "keys": sorted(util.keys(context.properties))}}]})',
    ].join('\n');
    const result = await expand({
      'config.yaml':
        'imports:\n- path: data.yaml\n- path: helpers/util.py\nresources:\n- {name: a, type: y.py, properties: {labels: {app: web}}}\n',
      'y.py': py,
      'data.yaml': 'name: from-yaml\n',
      'helpers/util.py': 'def keys(d):\n    return list(d.iterkeys())\n',
    });
    assert.deepEqual(result.config.resources, [
      {
        name: 'from-yaml',
        type: 'T',
        properties: { labels: { app: 'web' }, dumped: 'a: {x: y}\nb: [1, 2]\n', keys: ['labels'] },
      },
    ]);
  });

  it("expandConfiguration() loads PyYAML when a template first imports yaml (not at the Python process's start); a yaml.py among the imports does not replace DM's", async () => {
    const own = new RenderSandbox({ timeoutMs: 5000 });
    try {
      const py = [
        'import sys',
        'before = sorted(m for m in sys.modules if m == "yaml" or m.startswith("yaml.") or m == "traceback")',
        'import yaml',
        'def GenerateConfig(context):',
        '    return {"resources": [{"name": "a", "type": "T", "properties": {"before": before,',
        '        "safe": yaml.load("x: 1", Loader=yaml.Loader), "dm": yaml.load is yaml.safe_load}}]}',
      ].join('\n');
      const dir = fixture({
        'config.yaml': 'imports:\n- path: yaml.py\nresources:\n- {name: a, type: y.py}\n',
        'y.py': py,
        'yaml.py': 'def load(*a, **k):\n    return "the imports\' yaml.py"\n',
      });
      const result = await expandConfiguration(
        { content: readFileSync(join(dir, 'config.yaml'), 'utf8'), path: join(dir, 'config.yaml') },
        { sandbox: own },
      );
      assert.deepEqual(result.config.resources[0]?.properties, { before: [], safe: { x: 1 }, dm: true });
    } finally {
      own.close();
    }
  });

  it("expandConfiguration(): the Python process starts without json's, re's, signal's and linecache's Python modules (their import is most of its start); a template that imports them gets them, and a traceback shows its own lines", async () => {
    // A process of its own: the first template it runs sees what the process loaded at its start.
    const own = new RenderSandbox({ timeoutMs: 5000 });
    const dir = fixture({
      // Files of these names among the imports do not replace the standard library's modules,
      // as when the process had loaded them at its start.
      'config.yaml':
        'imports:\n- path: json.py\n- path: re.py\n- path: linecache.py\nresources:\n- {name: a, type: m.py}\n',
      'json.py': 'raise ImportError("the imports\' json.py")\n',
      're.py': 'raise ImportError("the imports\' re.py")\n',
      'linecache.py': 'raise ImportError("the imports\' linecache.py")\n',
      'm.py': [
        'import sys',
        'before = sorted(m for m in ("re", "enum", "json", "linecache", "tokenize", "signal") if m in sys.modules)',
        'import json, re, signal, traceback',
        'def GenerateConfig(context):',
        '    try:',
        '        raise ValueError("v")',
        '    except ValueError:',
        '        line = traceback.format_exc().splitlines()[2].strip()',
        '    return {"resources": [{"name": "a", "type": "T", "properties": {"before": before,',
        '        "json": json.dumps({"k": [1.0, 2]}), "re": re.sub("a", "b", "aa"), "line": line,',
        '        "alarm": int(signal.SIGALRM), "float": 1.0, "big": 1e20, "key": {1: "one"}}}]}',
      ].join('\n'),
    });
    const result = await expandConfiguration(
      { content: readFileSync(join(dir, 'config.yaml'), 'utf8'), path: join(dir, 'config.yaml') },
      { sandbox: own },
    ).finally(() => own.close());
    assert.deepEqual(result.config.resources[0]?.properties, {
      before: [],
      json: '{"k": [1.0, 2]}',
      re: 'bb',
      line: 'raise ValueError("v")',
      alarm: 14,
      float: 1,
      big: 1e20,
      key: { 1: 'one' },
    });
  });

  it('expandConfiguration() keeps yaml.load safe whatever Loader a template names', async () => {
    const error = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: u.py}\n',
      'u.py':
        'import yaml\ndef GenerateConfig(context):\n    yaml.load("!!python/object/apply:os.getcwd []", Loader=yaml.Loader)\n    return {"resources": []}\n',
    });
    assert.match(error.message, /u\.py:3: ConstructorError/);
  });

  it('expandConfiguration() lets Python templates import the standard library as they run', async () => {
    // Loaded when the template imports them, under the audit hook (reading Python's own library).
    const modules = [
      ...['copy', 'math', 'string', 'base64', 'hashlib', 'collections', 'itertools', 'functools'],
      ...['textwrap', 'random', 'datetime', 'ipaddress', 'uuid', 'decimal', 'fractions', 'html'],
    ];
    const result = await expand({
      'config.yaml': 'resources:\n- {name: a, type: std.py}\n',
      'std.py': `import ${modules.join(', ')}
def GenerateConfig(context):
    digest = hashlib.sha256(b'dm').hexdigest()[:8]
    net = str(ipaddress.ip_network('10.0.0.0/30').num_addresses)
    when = datetime.date(2026, 1, 2).isoformat()
    wrapped = textwrap.fill('a b c', 3)
    encoded = base64.b64encode(b'dm').decode()
    return {'resources': [{'name': 'x', 'type': 'T', 'properties': {
        'digest': digest, 'net': net, 'when': when, 'wrapped': wrapped, 'encoded': encoded,
        'sqrt': math.sqrt(16), 'upper': string.ascii_uppercase[:3]}}]}
`,
    });
    assert.deepEqual(result.config.resources[0]?.properties, {
      digest: 'cde0e753',
      net: '4',
      when: '2026-01-02',
      wrapped: 'a b\nc',
      encoded: 'ZG0=',
      sqrt: 4,
      upper: 'ABC',
    });
  });

  it('expandConfiguration() reports Python 2-only syntax with file:line, saying the template is Python 2', async () => {
    const error = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: old.py}\n',
      'old.py': 'def GenerateConfig(context):\n    print "hello"\n    return {"resources": []}\n',
    });
    assert.match(error.message, /old\.py:2: SyntaxError: Missing parentheses in call to 'print'.*Python 2/);
  });

  it('expandConfiguration() merges values/--properties over the top-level template properties', async () => {
    const result = await expand(
      {
        'config.yaml': 'resources:\n- {name: rs, type: rs.jinja, properties: {replicas: 1, keep: yes}}\n',
        'rs.jinja': RS,
      },
      { properties: { replicas: 7 } },
    );
    assert.equal(result.config.resources[0]?.properties?.replicas, 7);
  });
});

describe('schemas', () => {
  const SCHEMA = `info: {title: rs}
required: [replicas]
definitions:
  port: {type: object, default: {}, properties: {number: {type: integer, default: 80}, protocol: {type: string, default: TCP}}}
properties:
  replicas: {type: integer, minimum: 1}
  image: {type: string, default: nginx}
  port: {$ref: '#/definitions/port'}
  labels:
    type: object
    default: {}
    properties: {tier: {type: string, default: web}}
`;
  const T = 'resources:\n- name: x\n  type: T\n  properties: {{ properties | tojson }}\n';

  it('applySchema() fills defaults, nested and behind $ref', async () => {
    const result = await expand({
      'config.yaml': 'resources:\n- {name: a, type: s.jinja, properties: {replicas: 2}}\n',
      's.jinja': T,
      's.jinja.schema': SCHEMA,
    });
    assert.deepEqual(result.config.resources[0]?.properties, {
      replicas: 2,
      image: 'nginx',
      port: { number: 80, protocol: 'TCP' },
      labels: { tier: 'web' },
    });
    // DM's layout carries the properties after schema defaults (its jinja_defaults case).
    assert.deepEqual(result.layout.resources[0]?.properties, result.config.resources[0]?.properties);
  });

  it("applies defaults behind $ref as DM's draft-4 validator did: chains, items, nested; none stays absent", async () => {
    const result = await expand({
      'config.yaml':
        'resources:\n- {name: a, type: r.jinja, properties: {disks: [{}, {size: 5}], nic: {}, given: false}}\n',
      'r.jinja': T,
      'r.jinja.schema': `definitions:
  flag: {type: boolean, default: true}
  alias: {$ref: '#/definitions/flag'}
  natIP: {type: string}
  disk:
    type: object
    properties:
      size: {$ref: '#/definitions/size'}
      boot: {$ref: '#/definitions/alias'}
  size: {type: integer, default: 10}
  nic:
    type: object
    properties: {external: {$ref: '#/definitions/flag'}, natIP: {$ref: '#/definitions/natIP'}}
properties:
  flag: {$ref: '#/definitions/flag'}
  chained: {$ref: '#/definitions/alias'}
  given: {$ref: '#/definitions/flag'}
  natIP: {$ref: '#/definitions/natIP', default: 1.2.3.4}
  disks: {type: array, items: {$ref: '#/definitions/disk'}}
  nic: {$ref: '#/definitions/nic'}
`,
    });
    assert.deepEqual(result.config.resources[0]?.properties, {
      disks: [
        { size: 10, boot: true },
        { size: 5, boot: true },
      ],
      nic: { external: true },
      given: false,
      flag: true,
      chained: true,
    });
  });

  it('ignores the keywords beside a $ref (draft 4), so what DM accepted is accepted', async () => {
    const result = await expand({
      'config.yaml': 'resources:\n- {name: a, type: k.jinja, properties: {net: {name: n, mtu: 1460}}}\n',
      'k.jinja': T,
      'k.jinja.schema': `definitions:
  net: {type: object, properties: {name: {type: string}, mtu: {type: integer}}}
properties:
  net: {$ref: '#/definitions/net', additionalProperties: false, required: [other], type: string}
`,
    });
    assert.deepEqual(result.config.resources[0]?.properties, { net: { name: 'n', mtu: 1460 } });
    const bad = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: k.jinja, properties: {net: {mtu: x}}}\n',
      'k.jinja': T,
      'k.jinja.schema':
        "definitions:\n  net: {type: object, properties: {mtu: {type: integer}}}\nproperties:\n  net: {$ref: '#/definitions/net', type: string}\n",
    });
    assert.match(bad.message, /properties\.net\.mtu: must be integer/);
  });

  it('finds the schema of an import renamed with name: beside its path, as gcloud uploaded it', async () => {
    const py =
      'def GenerateConfig(context):\n  return {"resources": [{"name": "x", "type": "T", "properties": {"size": context.properties["size"]}}]}\n';
    const schema = 'properties:\n  size: {type: integer, default: 7}\n';
    const dir = fixture({
      '.git/HEAD': 'ref: refs/heads/main\n',
      'd/sub/t.py': py,
      'd/sub/t.py.schema': schema,
      'shared/t.py': py,
      'shared/t.py.schema': schema,
    });
    for (const path of ['sub/t.py', '../shared/t.py']) {
      const content = `imports:\n- {path: ${path}, name: my-t.py}\nresources:\n- {name: a, type: my-t.py}\n`;
      const result = await expandConfiguration({ content, path: join(dir, 'd/config.yaml') }, { sandbox });
      assert.deepEqual(result.config.resources, [{ name: 'x', type: 'T', properties: { size: 7 } }], path);
      assert.deepEqual(result.layout.resources[0]?.properties, { size: 7 }, path);
    }
  });

  it('the layout shows a property given only by a schema default, also without properties', async () => {
    const result = await expand({
      'config.yaml': 'resources:\n- {name: a, type: d.jinja}\n',
      'd.jinja': T,
      'd.jinja.schema': 'properties:\n  size: {type: integer, default: 10}\n',
    });
    assert.deepEqual(result.layout.resources, [
      { name: 'a', type: 'd.jinja', properties: { size: 10 }, resources: [{ name: 'x', type: 'T' }] },
    ]);
  });

  it('reads Python type names in schemas as JSON Schema types', async () => {
    const result = await expand({
      'config.yaml':
        'resources:\n- {name: a, type: p.jinja, properties: {n: 2, flag: true, l: [1], d: {}}}\n',
      'p.jinja': T,
      'p.jinja.schema':
        'properties:\n  n: {type: int}\n  flag: {type: bool}\n  s: {type: str, default: x}\n  f: {type: float, default: 1.5}\n  l: {type: list}\n  d:\n    type: dict\n',
    });
    assert.deepEqual(result.config.resources[0]?.properties, {
      n: 2,
      flag: true,
      l: [1],
      d: {},
      s: 'x',
      f: 1.5,
    });
    const bad = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: p.jinja, properties: {n: two}}\n',
      'p.jinja': T,
      'p.jinja.schema': 'properties:\n  n: {type: int}\n',
    });
    assert.match(bad.message, /properties\.n: must be integer/);
    assert.match(bad.hint ?? '', /--schema-validation warn/);
  });

  it('--schema-validation warn expands anyway and reports every violation; off reports none', async () => {
    const files = {
      'config.yaml': 'resources:\n- {name: a, type: w.jinja, properties: {replicas: three, env: [x]}}\n',
      'w.jinja': T,
      'w.jinja.schema':
        'properties:\n  replicas: {type: int}\n  env: {type: object}\n  image: {type: string, default: nginx}\n',
    };
    const warned: string[] = [];
    const result = await expand(files, {
      schemaValidation: 'warn',
      onWarning: (w) => warned.push(`${w.code} ${w.message}`),
    });
    assert.deepEqual(result.config.resources[0]?.properties, {
      replicas: 'three',
      env: ['x'],
      image: 'nginx',
    });
    assert.equal(warned.length, 2);
    assert.match(warned[0]!, /^SCHEMA_VIOLATION a \([^)]*w\.jinja\): properties\.replicas: must be integer/);
    assert.match(warned[1]!, /properties\.env: must be object/);
    const quiet: string[] = [];
    const off = await expand(files, { schemaValidation: 'off', onWarning: (w) => quiet.push(w.message) });
    assert.deepEqual(off.config.resources[0]?.properties, { replicas: 'three', env: ['x'], image: 'nginx' });
    assert.deepEqual(quiet, []);
  });

  it("strict, a user's own template: a property its schema's top-level additionalProperties refuses warns (DM accepted it); nested ones fail", async () => {
    // The Cloud Foundation Toolkit's BigQuery example passes dependsOn, which its table schema
    // does not declare (test/expand/dm-corpus/cft/bigquery); DM expanded it.
    const schema =
      'additionalProperties: false\nproperties:\n  name: {type: string}\n  labels:\n    type: object\n    additionalProperties: false\n    properties: {team: {type: string}}\n  size: {type: integer, default: 1}\n';
    const warned: string[] = [];
    const result = await expand(
      {
        'config.yaml': 'resources:\n- {name: t, type: a.jinja, properties: {name: x, dependsOn: [ds]}}\n',
        'a.jinja': T,
        'a.jinja.schema': schema,
      },
      { onWarning: (w) => warned.push(`${w.code} ${w.message}`) },
    );
    assert.deepEqual(result.config.resources[0]?.properties, { name: 'x', dependsOn: ['ds'], size: 1 });
    assert.equal(warned.length, 1, warned.join('\n'));
    assert.match(warned[0]!, /^SCHEMA_VIOLATION t \([^)]*a\.jinja\): properties\.dependsOn: is not allowed/);
    // The same from a Python template (checked in a request of its own).
    const fromPython: string[] = [];
    const py = await expand(
      {
        'config.yaml': 'resources:\n- {name: t, type: a.py, properties: {name: x, dependsOn: [ds]}}\n',
        'a.py':
          "def GenerateConfig(c):\n    return {'resources': [{'name': 'x', 'type': 'T', 'properties': c.properties}]}\n",
        'a.py.schema': schema,
      },
      { onWarning: (w) => fromPython.push(w.message) },
    );
    assert.deepEqual(py.config.resources[0]?.properties, { name: 'x', dependsOn: ['ds'], size: 1 });
    assert.equal(fromPython.length, 1, fromPython.join('\n'));
    // Below the top level, and any other violation, strict still fails.
    const nested = await expandError({
      'config.yaml':
        'resources:\n- {name: t, type: a.jinja, properties: {name: x, labels: {team: a, oops: b}}}\n',
      'a.jinja': T,
      'a.jinja.schema': schema,
    });
    assert.equal(nested.code, 'SCHEMA_VALIDATION_FAILED');
    assert.match(nested.message, /properties\.labels\.oops: is not allowed/);
    const both = await expandError({
      'config.yaml': 'resources:\n- {name: t, type: a.jinja, properties: {name: 3, dependsOn: [ds]}}\n',
      'a.jinja': T,
      'a.jinja.schema': schema,
    });
    assert.match(both.message, /properties\.name: must be string/);
  });

  it('applySchema() reports every error together with property paths', async () => {
    const error = await expandError({
      'config.yaml':
        'resources:\n- {name: redis, type: s.jinja, properties: {image: 3, port: {number: x}}}\n',
      's.jinja': T,
      's.jinja.schema': SCHEMA,
    });
    assert.equal(error.category, 'validation');
    assert.match(error.message, /properties\.replicas: is required/);
    assert.match(error.message, /properties\.image: must be string \(got 3\)/);
    assert.match(error.message, /properties\.port\.number: must be integer \(got "x"\)/);
    assert.match(error.message, /^redis/);
  });

  it('applySchema() reports an invalid schema as a schema error', async () => {
    const error = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: s.jinja}\n',
      's.jinja': T,
      's.jinja.schema': 'properties:\n  x: {type: 12}\n',
    });
    assert.equal(error.code, 'INVALID_SCHEMA');
    assert.match(
      error.message,
      /s\.jinja\.schema: properties\.x\.type is 12, not one of array, boolean, integer, null, number, object, string$/,
    );
  });

  it('schema imports make helper files visible to the template', async () => {
    const result = await expand({
      'config.yaml': 'resources:\n- {name: a, type: main.jinja}\n',
      'main.jinja': "{% import 'macros.jinja' as m %}resources:\n- {name: {{ m.n('a') }}, type: T}\n",
      'main.jinja.schema': 'imports:\n- path: lib/macros.jinja\n  name: macros.jinja\n',
      'lib/macros.jinja': '{% macro n(x) %}{{ x }}-from-macro{% endmacro %}',
    });
    assert.deepEqual(result.config.resources, [{ name: 'a-from-macro', type: 'T' }]);
  });
});

describe('template outputs', () => {
  const NET = `resources:
- name: {{ env.name }}
  type: Network
  properties: {cidr: {{ properties.cidr }}}
outputs:
- name: cidr
  value: {{ properties.cidr }}
- name: selfLink
  value: $(ref.{{ env.name }}.selfLink)
- name: zones
  value: [a, b]
- name: summary
  value: {{ properties.cidr }} in $(ref.{{ env.name }}.region)
`;
  const STACK = `def GenerateConfig(context):
    return {
        'resources': [{'name': 'net', 'type': 'net.jinja', 'properties': {'cidr': context.properties['cidr']}}],
        'outputs': [{'name': 'network', 'value': '$(ref.net.selfLink)'}, {'name': 'cidr', 'value': '$(ref.net.cidr)'}],
    }
`;

  it('resolves $(ref.<template>.<output>) at expansion where known, keeps deployed resources for deploy', async () => {
    const result = await expand({
      'config.yaml': `resources:
- {name: stack, type: stack.py, properties: {cidr: 10.0.0.0/8}}
- name: vm
  type: Instance
  properties:
    network: $(ref.stack.network)
    cidr: $(ref.stack.cidr)
    zones: $(ref.net.zones)
    zone0: $(ref.net.zones[0])
    text: "net $(ref.net.summary) $(ref.net.zones)!"
`,
      'stack.py': STACK,
      'net.jinja': NET,
    });
    assert.deepEqual(result.config.resources[1], {
      name: 'vm',
      type: 'Instance',
      properties: {
        network: '$(ref.net.selfLink)',
        cidr: '10.0.0.0/8',
        zones: ['a', 'b'],
        zone0: 'a',
        text: 'net 10.0.0.0/8 in $(ref.net.region) ["a","b"]!',
      },
    });
    // The reference left for deploy time is to the deployed network, ordered as such.
    assert.deepEqual(result.references.dependsOn.vm, ['net']);
    assert.deepEqual(result.references.order, ['net', 'vm']);
    // The layout shows each template's outputs, resolved where known.
    const stack = result.layout.resources[0]!;
    assert.deepEqual(stack.outputs, [
      { name: 'network', value: '$(ref.net.selfLink)' },
      { name: 'cidr', value: '10.0.0.0/8' },
    ]);
    assert.deepEqual(stack.resources?.[0]?.outputs?.[0], { name: 'cidr', value: '10.0.0.0/8' });
  });

  it('refuses outputs that are not a list of {name, value}, and a reference to an undeclared output', async () => {
    const bad = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: o.jinja}\n',
      'o.jinja': 'resources: []\noutputs: {x: 1}\n',
    });
    assert.equal(bad.code, 'TEMPLATE_INVALID_OUTPUTS');
    assert.match(bad.message, /o\.jinja: 'outputs' .* must be a list/);
    const unknown = await expandError({
      'config.yaml':
        'resources:\n- {name: a, type: o.jinja}\n- {name: b, type: T, properties: {x: $(ref.a.nope)}}\n',
      'o.jinja': 'resources: []\noutputs: [{name: x, value: 1}]\n',
    });
    assert.equal(unknown.code, 'UNKNOWN_REFERENCE');
    const cycle = await expandError({
      'config.yaml': 'resources:\n- {name: a, type: o.jinja}\n',
      'o.jinja': 'resources: []\noutputs: [{name: x, value: $(ref.a.y)}, {name: y, value: $(ref.a.x)}]\n',
    });
    assert.equal(cycle.code, 'REFERENCE_CYCLE');
    // Outputs quoting outputs grow fast: bounded, a limit error rather than all memory.
    const levels = Array.from({ length: 40 }, (_, i) =>
      i === 0
        ? '{name: o0, value: [x, x, x, x, x, x, x, x]}'
        : `{name: o${i}, value: ['$(ref.a.o${i - 1})', '$(ref.a.o${i - 1})', '$(ref.a.o${i - 1})']}`,
    );
    const bomb = await expandError({
      'config.yaml':
        'resources:\n- {name: a, type: o.jinja}\n- {name: b, type: T, properties: {x: $(ref.a.o39)}}\n',
      'o.jinja': `resources: []\noutputs: [${levels.join(', ')}]\n`,
    });
    assert.equal(bomb.category, 'limit');
    const text = await expandError({
      'config.yaml':
        'resources:\n- {name: a, type: o.jinja}\n- {name: b, type: T, properties: {x: $(ref.a.o39)}}\n',
      'o.jinja': `resources: []\noutputs: [${Array.from({ length: 40 }, (_, i) => (i === 0 ? '{name: o0, value: xxxxxxxx}' : `{name: o${i}, value: '$(ref.a.o${i - 1})$(ref.a.o${i - 1})'}`)).join(', ')}]\n`,
    });
    assert.equal(text.category, 'limit');
  });
});

describe('value references', () => {
  it('buildReferenceGraph() orders resources after what they reference', async () => {
    const result = await expand({
      'config.yaml':
        'resources:\n- {name: web, type: Pod, properties: {db: "$(ref.db.status.podIP)"}}\n- {name: db, type: Pod}\n',
    });
    assert.deepEqual(result.references.order, ['db', 'web']);
    assert.deepEqual(result.references.dependsOn, { web: ['db'], db: [] });
    assert.deepEqual(result.references.references[0], {
      from: 'web',
      name: 'db',
      path: 'status.podIP',
      at: 'properties.db',
      text: '$(ref.db.status.podIP)',
    });
  });

  it('findValueReferences() rejects a reference to an unknown name', async () => {
    const error = await expandError({
      'config.yaml': 'resources:\n- {name: web, type: Pod, properties: {x: "$(ref.nope.a)"}}\n',
    });
    assert.equal(error.code, 'UNKNOWN_REFERENCE');
    assert.match(error.message, /'nope'/);
  });

  it('buildReferenceGraph() names a cycle', async () => {
    const error = await expandError({
      'config.yaml':
        'resources:\n- {name: a, type: Pod, properties: {x: "$(ref.b.x)"}}\n- {name: b, type: Pod, properties: {x: "$(ref.a.x)"}}\n',
    });
    assert.equal(error.code, 'REFERENCE_CYCLE');
    assert.match(error.message, /a → b → a/);
  });
});

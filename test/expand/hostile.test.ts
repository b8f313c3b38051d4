/**
 * The hostile-template corpus (docs/expansion.md, "Isolation"): templates that try to escape or exhaust
 * the renderer. Each must fail with a DmError whose category is `blocked` or `limit`, and the
 * same sandbox must render a harmless template right after (the caller carries on).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DmError } from '../../client/src/error.js';
import { expandConfiguration, RenderSandbox } from '../../client/src/expand/index.js';

let sandbox: RenderSandbox;
const dir = mkdtempSync(join(tmpdir(), 'dm-hostile-'));

before(() => {
  // Short enough that each runaway case ends soon, long enough that a trivial render (stillWorks)
  // never reaches it on a machine at a load of 20 and more (1.5 s did, in a full run).
  sandbox = new RenderSandbox({ timeoutMs: 4000, memoryMb: 192 });
});
after(() => {
  sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

const context = { properties: { a: 1 }, env: { name: 'x' }, imports: {} };

async function failure(run: () => Promise<unknown>): Promise<DmError> {
  try {
    await run();
  } catch (error) {
    assert.ok(error instanceof DmError, `expected a DmError, got ${String(error)}`);
    return error;
  }
  assert.fail('the hostile template rendered');
}

async function stillWorks(): Promise<void> {
  assert.equal(
    await sandbox.renderJinja({ name: 'ok.jinja', source: 'ok {{ 1 + 1 }}', context, files: {} }),
    'ok 2',
  );
  const py = await sandbox.renderPython({
    name: 'ok.py',
    source: 'def GenerateConfig(c):\n    return "ok"\n',
    context,
    files: {},
  });
  assert.deepEqual(py, { text: 'ok' });
}

const JINJA: [string, string, 'blocked' | 'limit'][] = [
  ['Function through range.constructor', "{{ range.constructor('return process')() }}", 'blocked'],
  [
    'Function through a string constructor',
    "{{ ''.constructor.constructor('return process')().exit(1) }}",
    'blocked',
  ],
  ['prototype of a global', '{{ cycler.__proto__ }}', 'blocked'],
  ['bare constructor name', "{{ constructor('x') }}", 'blocked'],
  ['Python MRO walk', "{{ ''.__class__.__mro__[1].__subclasses__() }}", 'blocked'],
  [
    'prototype pollution through dict.update',
    "{% set x = {} %}{% set p = {'polluted': 1} %}{{ x.update({'__proto__': p}) }}",
    'blocked',
  ],
  ['prototype key in a dict literal', "{{ {'__proto__': 1} }}", 'blocked'],
  ['prototype key in a subscript', "{{ properties['__proto__'] }}", 'blocked'],
  [
    'infinite loop',
    '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}',
    'limit',
  ],
  ['recursion bomb', '{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(1) }}', 'limit'],
  ['string memory bomb', "{% set s = 'x' * 2000000000 %}{{ s | length }}", 'limit'],
  [
    'list memory bomb',
    '{% set l = [1] %}{% for i in range(60) %}{% set _ = l.extend(l) %}{% endfor %}{{ l | length }}',
    'limit',
  ],
];

const PYTHON: [string, string, 'blocked' | 'limit'][] = [
  ['os.system', 'import os\ndef GenerateConfig(c):\n    os.system("id")\n    return ""\n', 'blocked'],
  [
    '__import__ subprocess',
    'def GenerateConfig(c):\n    __import__("subprocess").run(["id"])\n    return ""\n',
    'blocked',
  ],
  [
    'socket',
    'import socket\ndef GenerateConfig(c):\n    socket.create_connection(("example.com", 80))\n    return ""\n',
    'blocked',
  ],
  ['reading /etc/passwd', 'def GenerateConfig(c):\n    return open("/etc/passwd").read()\n', 'blocked'],
  [
    'writing a file',
    'def GenerateConfig(c):\n    open("/tmp/dm-hostile-write", "w").write("x")\n    return ""\n',
    'blocked',
  ],
  [
    'catching the block does not help',
    'def GenerateConfig(c):\n    try:\n        open("/etc/shadow")\n    except Exception:\n        pass\n    return "resources: []"\n',
    'blocked',
  ],
  ['ctypes', 'import ctypes\ndef GenerateConfig(c):\n    return ""\n', 'blocked'],
  ['os.fork', 'import os\ndef GenerateConfig(c):\n    os.fork()\n    return ""\n', 'blocked'],
  ['listing a directory', 'import os\ndef GenerateConfig(c):\n    return str(os.listdir("/"))\n', 'blocked'],
  [
    'subclass walk to FileIO',
    'def walk(c, seen):\n    for s in type.__subclasses__(c):\n        if s not in seen:\n            seen.add(s)\n            walk(s, seen)\ndef GenerateConfig(c):\n    seen = set()\n    walk(object, seen)\n    io = [k for k in seen if k.__name__ == "FileIO"][0]\n    return io("/etc/passwd").read()\n',
    'blocked',
  ],
  ['infinite loop', 'def GenerateConfig(c):\n    while True:\n        pass\n', 'limit'],
  ['output bomb', 'def GenerateConfig(c):\n    return "x" * (100 * 1024 * 1024)\n', 'limit'],
  [
    'infinite loop that swallows the timeout',
    'def GenerateConfig(c):\n    while True:\n        try:\n            while True:\n                pass\n        except BaseException:\n            pass\n',
    'limit',
  ],
  ['memory bomb', 'def GenerateConfig(c):\n    x = [0] * (10 ** 10)\n    return ""\n', 'limit'],
  ['recursion bomb', 'def f(n):\n    return f(n + 1)\ndef GenerateConfig(c):\n    return f(0)\n', 'limit'],
  [
    'recursion bomb past the recursion limit',
    'import sys\nsys.setrecursionlimit(10 ** 7)\ndef f(n):\n    return f(n + 1)\ndef GenerateConfig(c):\n    return f(0)\n',
    'limit',
  ],
];

describe('hostile Jinja templates', () => {
  for (const [name, source, category] of JINJA) {
    it(`Jinja: ${name} fails as ${category} and the sandbox carries on`, async () => {
      const error = await failure(() =>
        sandbox.renderJinja({ name: 'hostile.jinja', source, context, files: {} }),
      );
      assert.equal(error.category, category, error.message);
      assert.match(error.message, new RegExp(category));
      await stillWorks();
    });
  }
  it('Jinja: an include of a file outside the imports is not found', async () => {
    const error = await failure(() =>
      sandbox.renderJinja({
        name: 'hostile.jinja',
        source: "{% include '/etc/passwd' %}",
        context,
        files: {},
      }),
    );
    assert.match(error.message, /not among the imports/);
  });
});

describe('hostile Python templates', () => {
  it('Python: a recursion that runs out of memory before its time fails as the memory limit (CPython says SystemError)', async () => {
    // A time limit it never reaches: the memory limit ends it, every time.
    const patient = new RenderSandbox({ timeoutMs: 120_000, memoryMb: 192 });
    try {
      const error = await failure(() =>
        patient.renderPython({
          name: 'deep.py',
          source: PYTHON.find(([n]) => n === 'recursion bomb past the recursion limit')![1],
          context,
          files: {},
        }),
      );
      assert.equal(error.category, 'limit', error.message);
      assert.match(error.message, /ran out of memory \(limit 192 MB\)/);
    } finally {
      patient.close();
    }
  });
  for (const [name, source, category] of PYTHON) {
    it(`Python: ${name} fails as ${category} and the sandbox carries on`, async () => {
      const error = await failure(() =>
        sandbox.renderPython({ name: 'hostile.py', source, context, files: {} }),
      );
      assert.equal(error.category, category, error.message);
      assert.match(error.message, new RegExp(category));
      await stillWorks();
    });
  }
});

describe('hostile configurations', () => {
  it('an import that is a symbolic link to a file outside the directory is blocked', async () => {
    const sub = join(dir, 'links');
    mkdirSync(sub);
    symlinkSync('/etc/passwd', join(sub, 'passwd.jinja'));
    const path = join(sub, 'config.yaml');
    const content = 'imports:\n- path: passwd.jinja\nresources: []\n';
    writeFileSync(path, content);
    const error = await failure(() => expandConfiguration({ content, path }, { sandbox }));
    assert.equal(error.category, 'blocked');
    assert.match(error.message, /outside/);
  });

  it('a type naming a file outside the directory is not read', async () => {
    const path = join(dir, 'outside.yaml');
    const content = 'resources:\n- {name: a, type: ../../etc/x.jinja}\n- {name: b, type: /etc/y.jinja}\n';
    writeFileSync(path, content);
    const result = await expandConfiguration({ content, path }, { sandbox });
    assert.deepEqual(
      result.config.resources.map((r) => r.type),
      ['../../etc/x.jinja', '/etc/y.jinja'],
    );
  });
});

describe('hostile expansions', () => {
  it('a template that multiplies itself stops at the template budget as limit', async () => {
    const sub = join(dir, 'breadth');
    mkdirSync(sub);
    const path = join(sub, 'config.yaml');
    const content = 'resources:\n- {name: a, type: bomb.jinja, properties: {n: 0}}\n';
    writeFileSync(path, content);
    writeFileSync(
      join(sub, 'bomb.jinja'),
      'resources:\n{% for i in range(10) %}- {name: c{{ i }}, type: bomb.jinja, properties: {n: {{ properties.n + 1 }}}}\n{% endfor %}',
    );
    const error = await failure(() =>
      expandConfiguration({ content, path }, { sandbox, maxTemplates: 2000 }),
    );
    assert.equal(error.category, 'limit');
    assert.match(error.message, /more than 2000 templates/);
    await stillWorks();
  });
});

describe('hostile schemas', () => {
  // A schema comes with its template: validating against it runs in the rendering process,
  // under the same time and memory limits (docs/expansion.md, "Isolation").
  async function expandWithSchema(name: string, schema: string, properties: string): Promise<DmError> {
    const sub = join(dir, name);
    mkdirSync(sub);
    const path = join(sub, 'config.yaml');
    const content = `resources:\n- {name: a, type: t.jinja, properties: ${properties}}\n`;
    writeFileSync(path, content);
    writeFileSync(join(sub, 't.jinja'), 'resources: []\n');
    writeFileSync(join(sub, 't.jinja.schema'), schema);
    return failure(() => expandConfiguration({ content, path }, { sandbox }));
  }

  it('a pattern that backtracks forever fails as limit, and the sandbox carries on', async () => {
    const error = await expandWithSchema(
      'redos',
      'properties:\n  name: {type: string, pattern: "^(a+)+$"}\n',
      `{name: ${'a'.repeat(40)}!}`,
    );
    assert.equal(error.category, 'limit');
    assert.match(
      error.message,
      /^t\.jinja \(checked against its schema .*t\.jinja\.schema\): limit: took longer than 4s/,
    );
    await stillWorks();
  });

  it('a schema nested deeper than any reader allows fails cleanly, and the sandbox carries on', async () => {
    const depth = 5000;
    const schema = `properties:\n  x: ${'{properties: {x: '.repeat(depth)}{type: string}${'}}'.repeat(depth)}\n`;
    const error = await expandWithSchema('deep', schema, '{x: {}}');
    assert.ok(['invalid-input', 'limit'].includes(error.category), `${error.code}: ${error.message}`);
    await stillWorks();
  });
});

describe('hostile YAML', () => {
  const bomb = [
    'a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]',
    'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
    'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
    'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
    'e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
    'f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]',
    'g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]',
  ].join('\n');

  it('an alias bomb in a configuration fails as limit', async () => {
    const path = join(dir, 'bomb.yaml');
    const content = `${bomb}\nresources:\n- {name: a, type: T, properties: {x: *g}}\n`;
    writeFileSync(path, content);
    const error = await failure(() => expandConfiguration({ content, path }, { sandbox }));
    assert.equal(error.category, 'limit');
    assert.match(error.message, /alias/);
  });

  it("an alias bomb in a template's output fails as limit", async () => {
    const path = join(dir, 'config.yaml');
    const content = 'resources:\n- {name: a, type: bomb.jinja}\n';
    writeFileSync(path, content);
    writeFileSync(
      join(dir, 'bomb.jinja'),
      `${bomb}\nresources:\n- {name: a, type: T, properties: {x: *g}}\n`,
    );
    const error = await failure(() => expandConfiguration({ content, path }, { sandbox }));
    assert.equal(error.category, 'limit');
    await stillWorks();
  });
});

describe('sandbox timings', () => {
  it('RenderSandbox measures renderings only when asked to', async () => {
    const request = {
      name: 't.jinja',
      source: 'resources:\n{% for i in range(200) %}- {name: r{{ i }}, type: T}\n{% endfor %}',
      context,
      files: {},
    };
    const parse = { source: 't.jinja', maxNodes: 100_000 };
    for (const timings of [false, true]) {
      const measured = new RenderSandbox({ timings });
      try {
        for (let i = 0; i < 5; i++) await measured.renderJinjaData(request, parse);
      } finally {
        measured.close();
      }
      const { jinjaRenderMs, jinjaYamlMs } = measured.timings;
      assert.equal(jinjaRenderMs > 0 && jinjaYamlMs > 0, timings, JSON.stringify(measured.timings));
    }
  });
});

describe('sandbox pipelining', () => {
  it('RenderSandbox reads Python answers whole, also ones spread over many reads, in order', async () => {
    const big = (n: number) => ({
      name: `big${n}.py`,
      source: `def GenerateConfig(c):\n    return {'resources': [], 'text': 'é✓' * ${n} + '\\n' + 'x' * ${n}}\n`,
      context,
      files: {},
    });
    const sizes = [1, 100_000, 3, 250_000, 7];
    const answers = await Promise.all(sizes.map((n) => sandbox.renderPython(big(n))));
    assert.deepEqual(
      answers.map((a) => ('data' in a ? (a.data as { text: string }).text : a.text)),
      sizes.map((n) => `${'é✓'.repeat(n)}\n${'x'.repeat(n)}`),
    );
  });

  it('RenderSandbox times out only the slow template; templates queued behind it still render', async () => {
    const slow = sandbox.renderJinja({
      name: 'slow.jinja',
      source: '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}',
      context,
      files: {},
    });
    const queued = [1, 2, 3].map((n) =>
      sandbox.renderJinja({ name: `q${n}.jinja`, source: `q{{ ${n} }}`, context, files: {} }),
    );
    const [slowResult, ...rest] = await Promise.allSettled([slow, ...queued]);
    assert.equal(slowResult?.status, 'rejected');
    assert.equal(((slowResult as PromiseRejectedResult).reason as DmError).category, 'limit');
    assert.deepEqual(
      rest.map((r) => (r.status === 'fulfilled' ? r.value : String(r.reason))),
      ['q1', 'q2', 'q3'],
    );
  });

  it('RenderSandbox times out a slow template that waited behind answered ones, and renders those after it', async () => {
    const render = (name: string, source: string) =>
      sandbox.renderJinja({ name, source, context, files: {} });
    const results = await Promise.allSettled([
      render('a.jinja', 'a'),
      render('b.jinja', 'b'),
      render(
        'slow.jinja',
        '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}',
      ),
      render('c.jinja', 'c'),
    ]);
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as DmError).category)),
      ['a', 'b', 'limit', 'c'],
    );
    assert.deepEqual(await Promise.all([render('d.jinja', 'd'), render('e.jinja', 'e')]), ['d', 'e']);
  });
});

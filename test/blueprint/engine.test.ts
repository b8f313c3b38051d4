/**
 * The blueprint engine beyond the conformance cases: error phases, export merging and mappings,
 * target references, template functions, and the sandbox's limits. Templates render in the real
 * blueprint sandbox process.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  type BlueprintInputs,
  BlueprintSandbox,
  deepMerge,
  renderBlueprint,
} from '../../client/src/blueprint/index.js';

const sandbox = new BlueprintSandbox({ timeoutMs: 3000 });
after(() => sandbox.close());

const HEAD = 'apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n';

function render(
  blueprintYaml: string,
  inputs: Partial<BlueprintInputs> = {},
  files: Record<string, string> = {},
) {
  return renderBlueprint(
    { 'blueprint.yaml': HEAD + blueprintYaml, ...files },
    { ...inputs, installation: { name: 'inst', namespace: 'ns', ...(inputs.installation ?? {}) } },
    { renderer: sandbox },
  );
}

const target = (name: string, type = 'landscaper.gardener.cloud/kubernetes-cluster') => ({
  apiVersion: 'landscaper.gardener.cloud/v1alpha1',
  kind: 'Target',
  metadata: { name, namespace: 'ns' },
  spec: { type, config: {} },
});

describe('renderBlueprint()', () => {
  it('renderBlueprint() reports a dependsOn cycle in phase deployItems', async () => {
    const r = await render(`deployExecutions:
  - name: d
    type: Jinja
    template: |
      deployItems:
        - {name: a, type: t/mock, dependsOn: [b]}
        - {name: b, type: t/mock, dependsOn: [a]}
`);
    assert.equal(r.error?.phase, 'deployItems');
    assert.match(r.error?.message ?? '', /cycle/);
    assert.equal(r.installations.inst?.deployItems, undefined);
  });

  it('renderBlueprint() reports duplicate deploy item names before unknown dependencies', async () => {
    const r = await render(`deployExecutions:
  - {name: d1, type: Jinja, template: "deployItems: [{name: a, type: t/mock, dependsOn: [zzz]}]"}
  - {name: d2, type: Jinja, template: "deployItems: [{name: a, type: t/mock}]"}
`);
    assert.equal(r.error?.phase, 'deployItems');
    assert.match(r.error?.message ?? '', /duplicate/);
  });

  it('renderBlueprint() reports a subinstallation cycle in Landscaper’s words', async () => {
    const sub = (name: string, input: string, output: string) => `  - name: ${name}
    blueprint:
      filesystem:
        blueprint.yaml: "${HEAD.replace(/\n/g, '\\n')}"
    imports: {data: [{name: x, dataRef: ${input}}]}
    exports: {data: [{name: o, dataRef: ${output}}]}
`;
    const r = await render(`subinstallations:\n${sub('a', 'b-out', 'a-out')}${sub('b', 'a-out', 'b-out')}`);
    assert.equal(r.error?.phase, 'subinstallations');
    assert.equal(
      r.error?.message,
      'the subinstallations have a cycle: a -{depends_on}-> b -{depends_on}-> a',
    );
  });

  it('renderBlueprint() fails a required import without a value in phase imports, before any execution', async () => {
    const r = await render(`imports:
  - {name: x, schema: {type: string}}
deployExecutions:
  - {name: d, type: Jinja, template: "deployItems: []"}
`);
    assert.equal(r.error?.phase, 'imports');
    assert.deepEqual(r.installations, { inst: {} });
  });

  it('renderBlueprint() rejects a conditional import under a required import', async () => {
    const r = await render(`imports:
  - {name: x, schema: {type: string}, imports: [{name: y, schema: {type: string}}]}
`);
    assert.equal(r.error?.phase, 'imports');
    assert.match(r.error?.message ?? '', /conditional/);
  });

  it('renderBlueprint() imports Secrets (decoded) and ConfigMaps, whole or by key', async () => {
    const bp = `imports:
  - {name: password, schema: {type: string}}
  - {name: settings, schema: {type: object}}
`;
    const scope = {
      secrets: { db: { password: Buffer.from('s3cret').toString('base64'), user: 'YWRtaW4=' } },
      configMaps: { app: { mode: 'fast', level: '3' } },
    };
    const imports = (data: unknown[]) => ({ installation: { imports: { data } }, scope });
    const ok = await render(
      bp,
      imports([
        { name: 'password', secretRef: { name: 'db', key: 'password' } },
        { name: 'settings', configMapRef: { name: 'app' } },
      ]),
    );
    assert.equal(ok.error, undefined, ok.error?.message);
    assert.deepEqual(ok.installations.inst?.imports, {
      password: 's3cret',
      settings: { mode: 'fast', level: '3' },
    });
    const missingKey = await render(
      bp,
      imports([
        { name: 'password', secretRef: { name: 'db', key: 'nope' } },
        { name: 'settings', configMapRef: { name: 'app' } },
      ]),
    );
    assert.equal(missingKey.error?.phase, 'imports');
    assert.match(missingKey.error?.message ?? '', /key 'nope' not found/);
    const missingObject = await render(bp, imports([{ name: 'settings', configMapRef: { name: 'other' } }]));
    assert.equal(missingObject.error?.phase, 'imports');
    assert.match(missingObject.error?.message ?? '', /ConfigMap 'other' not found/);
  });

  it('renderBlueprint() checks the target type and prefixes short target types', async () => {
    const bp = `imports:
  - {name: c, type: target, targetType: kubernetes-cluster}
deployExecutions:
  - {name: d, type: Jinja, template: "deployItems: [{name: a, type: t/mock, target: {import: c}}]"}
`;
    const ok = await render(bp, {
      installation: { imports: { targets: [{ name: 'c', target: 'k' }] } },
      scope: { targets: { k: target('k') } },
    });
    assert.equal(ok.error, undefined, ok.error?.message);
    assert.deepEqual(ok.installations.inst?.deployItems?.[0]?.target, { name: 'k', namespace: 'ns' });
    const wrong = await render(bp, {
      installation: { imports: { targets: [{ name: 'c', target: 'k' }] } },
      scope: { targets: { k: target('k', 'other/type') } },
    });
    assert.equal(wrong.error?.phase, 'imports');
  });

  it('renderBlueprint() fails a targetMap reference with a missing key in phase deployItems', async () => {
    const r = await render(
      `imports:
  - {name: m, type: targetMap, targetType: landscaper.gardener.cloud/kubernetes-cluster}
deployExecutions:
  - {name: d, type: Jinja, template: "deployItems: [{name: a, type: t/mock, target: {import: m, key: blue}}]"}
`,
      {
        installation: { imports: { targets: [{ name: 'm', targetMap: { red: 'r' } }] } },
        scope: { targets: { r: target('r') } },
      },
    );
    assert.equal(r.error?.phase, 'deployItems');
    assert.match(r.error?.message ?? '', /blue/);
  });

  it('renderBlueprint() resolves targetList indexes and deprecated target names, and refuses an index out of range', async () => {
    const bp = (index: number) => `imports:
  - {name: l, type: targetList, targetType: kubernetes-cluster}
deployExecutions:
  - name: d
    type: Jinja
    template: "deployItems: [{name: a, type: t/mock, target: {import: l, index: ${index}}}, {name: b, type: t/mock, target: {name: legacy}}]"
`;
    const inputs = {
      installation: { imports: { targets: [{ name: 'l', targets: ['t0', 't1'] }] } },
      scope: { targets: { t0: target('t0'), t1: target('t1') } },
    };
    const ok = await render(bp(1), inputs);
    assert.equal(ok.error, undefined, ok.error?.message);
    assert.deepEqual(
      ok.installations.inst?.deployItems?.map((d) => d.target),
      [
        { name: 't1', namespace: 'ns' },
        { name: 'legacy', namespace: 'ns' },
      ],
    );
    const out = await render(bp(2), inputs);
    assert.equal(out.error?.phase, 'deployItems');
    assert.match(out.error?.message ?? '', /index 2 is out of range/);
  });

  it('renderBlueprint() deep-merges export executions, drops undeclared exports, applies exportDataMappings', async () => {
    const r = await render(
      `exports:
  - {name: cfg, schema: {type: object}}
  - {name: n, schema: {type: integer}}
exportExecutions:
  - {name: e1, type: Jinja, template: "exports: {cfg: {a: 1, l: [1, 2]}, n: 1, extra: x}"}
  - {name: e2, type: Jinja, template: "exports: {cfg: {b: 2, l: [3]}}"}
`,
      {
        installation: {
          exportDataMappings: { doubled: '{{ n * 2 }}', text: 'n is {{ exports.n }}' },
          exports: {
            data: [
              { name: 'doubled', dataRef: 'out-d' },
              { name: 'cfg', dataRef: 'out-cfg' },
            ],
          },
        },
      },
    );
    assert.equal(r.error, undefined, r.error?.message);
    // exports holds the declared exports only; the mappings' results go to the exported objects
    assert.deepEqual(r.installations.inst?.exports, { cfg: { a: 1, b: 2, l: [3] }, n: 1 });
    assert.deepEqual(r.installations.inst?.exportedDataObjects, {
      'out-d': 2,
      'out-cfg': { a: 1, b: 2, l: [3] },
    });
  });

  it('renderBlueprint() keeps exportDataMappings out of exports: a mapped value goes to the exported data object only', async () => {
    const r = await render(
      `exports:
  - {name: n, schema: {type: integer}}
exportExecutions:
  - {name: e, type: Jinja, template: "exports: {n: 1}"}
`,
      {
        installation: {
          exportDataMappings: { n: '{{ n + 1 }}', label: 'n={{ n }}' },
          exports: {
            data: [
              { name: 'n', dataRef: 'out-n' },
              { name: 'label', dataRef: 'out-label' },
            ],
          },
        },
      },
    );
    assert.equal(r.error, undefined, r.error?.message);
    assert.deepEqual(r.installations.inst?.exports, { n: 1 });
    assert.deepEqual(r.installations.inst?.exportedDataObjects, { 'out-n': 2, 'out-label': 'n=1' });
  });

  it('renderBlueprint() records no imports when an import execution returns errors', async () => {
    const r = await render(
      `imports:
  - {name: x, schema: {type: integer}}
importExecutions:
  - {name: ok, type: Jinja, template: "bindings: {y: 2}"}
  - {name: check, type: Jinja, template: "errors: ['x is {{ imports.x }}']"}
`,
      { installation: { importDataMappings: { x: 1 } } },
    );
    assert.equal(r.error?.phase, 'importExecutions');
    assert.match(r.error?.message ?? '', /x is 1/);
    assert.deepEqual(r.installations, { inst: {} });
  });

  it('renderBlueprint() records the imports as stored after the import executions', async () => {
    const r = await render(
      `imports:
  - {name: x, schema: {type: integer}}
importExecutions:
  - {name: bind, type: Jinja, template: "bindings: {x: 2, y: '{{ imports.x }}'}"}
subinstallations:
  - name: sub
    blueprint: {filesystem: {blueprint.yaml: "${HEAD.replace(/\n/g, '\\n')}"}}
    imports: {data: [{name: bad, dataRef: nowhere}]}
`,
      { installation: { importDataMappings: { x: 1 } } },
    );
    assert.equal(r.error?.phase, 'subinstallations');
    assert.deepEqual(r.installations.inst, { imports: { x: 2, y: '1' } });
  });

  it('renderBlueprint() exports Targets to the parent context and checks their type', async () => {
    const bp = (type: string) => `exports:
  - {name: cluster, targetType: kubernetes-cluster}
exportExecutions:
  - {name: e, type: Jinja, template: "exports: {cluster: {type: ${type}, config: {server: s}}}"}
`;
    const installation = { exports: { targets: [{ name: 'cluster', target: 'out-cluster' }] } };
    const ok = await render(bp('landscaper.gardener.cloud/kubernetes-cluster'), { installation });
    assert.equal(ok.error, undefined, ok.error?.message);
    assert.deepEqual(ok.installations.inst?.exportedTargets, {
      'out-cluster': {
        apiVersion: 'landscaper.gardener.cloud/v1alpha1',
        kind: 'Target',
        metadata: { name: 'out-cluster', namespace: 'ns' },
        spec: { type: 'landscaper.gardener.cloud/kubernetes-cluster', config: { server: 's' } },
      },
    });
    const wrong = await render(bp('other/type'), { installation });
    assert.equal(wrong.error?.phase, 'exports');
    assert.equal(wrong.installations.inst?.exports, undefined);
  });

  it('renderBlueprint() fails an installation export the blueprint does not provide in phase exports', async () => {
    const r = await render('exports:\n  - {name: o, schema: {type: string}}\n', {
      installation: { exports: { data: [{ name: 'o', dataRef: 'x' }] } },
    });
    assert.equal(r.error?.phase, 'exports');
    assert.match(r.error?.message ?? '', /not defined/);
  });

  it('renderBlueprint() stops at the first import execution that returns errors', async () => {
    const r = await render(`importExecutions:
  - {name: a, type: Jinja, template: "errors: [first problem]"}
  - {name: b, type: Jinja, template: "errors: [never reached]"}
`);
    assert.equal(r.error?.phase, 'importExecutions');
    assert.match(r.error?.message ?? '', /first problem/);
    assert.doesNotMatch(r.error?.message ?? '', /never reached/);
  });

  it('renderBlueprint() reports a failing template function in phase template', async () => {
    const r = await render(
      "deployExecutions:\n  - {name: d, type: Jinja, template: \"x: {{ getResource(cd, 'name', 'nope') }}\"}\n",
      { componentDescriptor: { component: { name: 'c', version: '1', resources: [{ name: 'a' }] } } },
    );
    assert.equal(r.error?.phase, 'template');
  });

  it('renderBlueprint() supports toyaml, fromyaml, nindent, sindent, b64enc and b64dec', async () => {
    const r = await render(`deployExecutions:
  - name: d
    type: Jinja
    template: |
      deployItems:
        - name: a
          type: t/mock
          config:
            y: {{ {"b": 1, "a": [1, 2]} | toyaml | nindent(8) }}
            z: {{ ("k: v" | fromyaml).k }}
            s: "{{ "x" | sindent(2) }}"
            r: {{ "hello" | b64enc | b64dec }}
`);
    assert.equal(r.error, undefined, r.error?.message);
    assert.deepEqual(r.installations.inst?.deployItems?.[0]?.config, {
      y: { a: [1, 2], b: 1 },
      z: 'v',
      s: '  x',
      r: 'hello',
    });
  });

  it('renderBlueprint() refuses executions of type GoTemplate', async () => {
    const r = await render(
      'deployExecutions:\n  - {name: d, type: GoTemplate, template: "deployItems: []"}\n',
    );
    assert.equal(r.error?.phase, 'deployExecutions');
    assert.match(r.error?.message ?? '', /Jinja/);
  });

  it('renderBlueprint() stops a template that runs past the time limit', async () => {
    const r = await render(
      'deployExecutions:\n  - {name: d, type: Jinja, template: "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"}\n',
    );
    assert.equal(r.error?.phase, 'deployExecutions');
    assert.match(r.error?.message ?? '', /time limit/);
    // the sandbox starts a fresh process for the next template
    const again = await render(
      'deployExecutions:\n  - {name: d, type: Jinja, template: "deployItems: []"}\n',
    );
    assert.equal(again.error, undefined);
  });

  it('renderBlueprint() blocks templates from reaching host objects', async () => {
    const r = await render(
      'deployExecutions:\n  - {name: d, type: Jinja, template: "{{ imports.__class__ }}{{ cd.constructor.constructor(\'return process\')() }}"}\n',
    );
    assert.equal(r.error?.phase, 'deployExecutions');
  });
});

describe('deepMerge()', () => {
  it('deepMerge() merges nested maps and replaces lists and scalars', () => {
    assert.deepEqual(deepMerge({ a: { x: 1, l: [1] }, s: 1 }, { a: { y: 2, l: [2] }, s: { t: 1 } }), {
      a: { x: 1, y: 2, l: [2] },
      s: { t: 1 },
    });
  });
});

describe('schema references', () => {
  it('renderBlueprint() resolves blueprint:// and cd:// schema references and reports cyclic local types', async () => {
    const bp = `localTypes:
  a: {$ref: "local://b"}
  b: {$ref: "local://a"}
imports:
  - {name: p, schema: {$ref: "blueprint://schemas/port.json"}}
  - {name: q, schema: {$ref: "cd://resources/qschema#/definitions/q"}}
  - {name: r, required: false, schema: {$ref: "local://a"}}
`;
    const files = { 'schemas/port.json': '{"type": "integer", "maximum": 65535}' };
    const jsonSchemas = { 'cd://resources/qschema': { definitions: { q: { type: 'string' } } } };
    const ok = await render(
      bp,
      { installation: { importDataMappings: { p: 80, q: 'x' } }, jsonSchemas },
      files,
    );
    assert.equal(ok.error, undefined, ok.error?.message);
    const bad = await render(
      bp,
      { installation: { importDataMappings: { p: 70000, q: 'x' } }, jsonSchemas },
      files,
    );
    assert.equal(bad.error?.phase, 'schema');
    const cyclic = await render(
      bp,
      { installation: { importDataMappings: { p: 1, q: 'x', r: 1 } }, jsonSchemas },
      files,
    );
    assert.equal(cyclic.error?.phase, 'schema');
    assert.match(cyclic.error?.message ?? '', /cyclic references/);
  });
});

describe('schema errors', () => {
  // Validated in the blueprint rendering process (docs/blueprints.md, "Sandbox"): the messages
  // are those of the validator and the reference resolution, whole.
  it('renderBlueprint() names the installation, the import and every violation', async () => {
    const r = await render(
      'imports:\n  - {name: p, schema: {type: object, properties: {n: {type: integer, maximum: 9}}, required: [m]}}\n',
      { installation: { importDataMappings: { p: { n: 10 } } } },
    );
    assert.deepEqual(r.error && [r.error.phase, r.error.message, r.error.category], [
      'schema',
      "inst: import p: (root): must have required property 'm'; n: must be <= 9",
      'validation',
    ]);
  });

  it('renderBlueprint() reports unknown references and schemas that do not compile', async () => {
    const cases: [string, string][] = [
      ['{$ref: "local://nope"}', "$ref 'local://nope': no local type 'nope' in localTypes"],
      [
        '{$ref: "blueprint://none.json"}',
        "$ref 'blueprint://none.json': no file 'none.json' in the blueprint",
      ],
      [
        '{$ref: "cd://resources/r"}',
        "$ref 'cd://resources/r': no jsonschema resource for 'cd://resources/r'",
      ],
    ];
    for (const [schema, message] of cases) {
      const r = await render(`imports:\n  - {name: p, schema: ${schema}}\n`, {
        installation: { importDataMappings: { p: 1 } },
      });
      assert.deepEqual(r.error && [r.error.phase, r.error.message], ['schema', message]);
    }
    const invalid = await render('imports:\n  - {name: p, schema: {type: 3}}\n', {
      installation: { importDataMappings: { p: 1 } },
    });
    assert.equal(invalid.error?.phase, 'schema');
    assert.match(invalid.error?.message ?? '', /^import p: invalid JSON schema: /);
  });
});

describe('deploy item fields', () => {
  it('renderBlueprint() checks deploy item labels and timeouts', async () => {
    const item = (extra: string) =>
      `deployExecutions:\n  - {name: d, type: Jinja, template: "deployItems: [{name: a, type: t/mock, ${extra}}]"}\n`;
    const good = await render(item("labels: {app.kubernetes.io/name: web, tier: ''}, timeout: 1h30m"));
    assert.equal(good.error, undefined, good.error?.message);
    assert.equal((await render(item("labels: {'bad key!': x}"))).error?.phase, 'deployItems');
    assert.equal((await render(item("labels: {k: '-bad'}"))).error?.phase, 'deployItems');
    assert.equal((await render(item('timeout: soon'))).error?.phase, 'deployItems');
    assert.equal((await render(item('timeout: none'))).error, undefined);
  });
});

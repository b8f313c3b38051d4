/**
 * Step 7 on its own (client/src/blueprint/subinstallations.ts): templates are validated without
 * being changed, wiring to an unsatisfied optional parent import is dropped in the returned
 * templates, and the run order follows what siblings import from each other.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { BlueprintError, BlueprintSandbox } from '../../client/src/blueprint/index.js';
import { parseBlueprint, parseInstallation } from '../../client/src/blueprint/model.js';
import { newContext } from '../../client/src/blueprint/scope.js';
import { subinstallationsPhase, validateTemplates } from '../../client/src/blueprint/subinstallations.js';

const sandbox = new BlueprintSandbox({ timeoutMs: 3000 });
after(() => sandbox.close());

const HEAD = 'apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n';
const PARENT = `${HEAD}imports:
  - {name: seed, schema: {type: string}}
  - {name: opt, required: false, schema: {type: string}}
`;

function node(blueprintYaml: string) {
  const files = { 'blueprint.yaml': blueprintYaml };
  return {
    bp: parseBlueprint(files, 'root'),
    node: {
      path: 'root',
      namespace: 'ns',
      spec: parseInstallation({}, 'root', 'root', false),
      files,
      cd: undefined,
      parent: newContext(''),
      depth: 0,
    },
  };
}

const template = (name: string, data: { name: string; dataRef: string }[], exportsTo?: string) => ({
  name,
  blueprint: { filesystem: { 'blueprint.yaml': HEAD } },
  imports: { data },
  ...(exportsTo ? { exports: { data: [{ name: 'o', dataRef: exportsTo }] } } : {}),
});

describe('validateTemplates()', () => {
  it('validateTemplates() drops wiring to an unsatisfied optional parent import in its result, not in its input', () => {
    const { bp, node: n } = node(PARENT);
    const raw = [
      template('a', [
        { name: 'x', dataRef: 'seed' },
        { name: 'y', dataRef: 'opt' },
      ]),
    ];
    const before = JSON.stringify(raw);
    const [a] = validateTemplates(n, bp, raw, { seed: 'v' });
    assert.deepEqual(a?.imports.data, [{ name: 'x', dataRef: 'seed' }]);
    assert.equal(JSON.stringify(raw), before);
  });

  it('validateTemplates() refuses an import satisfied neither by the parent nor by a sibling', () => {
    const { bp, node: n } = node(PARENT);
    assert.throws(
      () => validateTemplates(n, bp, [template('a', [{ name: 'x', dataRef: 'elsewhere' }])], { seed: 'v' }),
      (e: unknown) =>
        e instanceof BlueprintError && e.phase === 'subinstallations' && /elsewhere/.test(e.message),
    );
  });
});

describe('subinstallationsPhase()', () => {
  it('subinstallationsPhase() puts rendered templates before static ones and orders them by sibling exports', async () => {
    const tmpl = (name: string, input: string, output: string) =>
      `{name: ${name}, blueprint: {filesystem: {blueprint.yaml: "${HEAD.replace(/\n/g, '\\n')}"}}, imports: {data: [{name: x, dataRef: ${input}}]}, exports: {data: [{name: o, dataRef: ${output}}]}}`;
    const { bp, node: n } = node(`${PARENT}subinstallationExecutions:
  - name: e
    type: Jinja
    template: |
      subinstallations:
        - ${tmpl('second', 'first-out', 'second-out')}
subinstallations:
  - ${tmpl('first', 'seed', 'first-out')}
`);
    const env = { inputs: { installation: {} }, renderer: sandbox, maxDepth: 20 };
    const result = await subinstallationsPhase(env, n, bp, { seed: 'v' });
    assert.deepEqual(
      result.templates.map((t) => t.name),
      ['second', 'first'],
    );
    assert.deepEqual(result.order, [['first'], ['second']]);
  });
});

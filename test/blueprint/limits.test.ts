/**
 * The time limit of `dm blueprint render` (docs/blueprints.md, "Sandbox"), through the real CLI,
 * and blueprints whose schemas would hold the process that validates against them. Every case
 * runs in a process the test kills when it outlives a generous bound: what could hold dm's own
 * thread cannot run in the test's process, and a regression then fails instead of hanging.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { BlueprintInputs, RenderResult } from '../../client/src/blueprint/index.js';
import { isolatedEnv, runDm, runProcess } from '../support/run-cli.js';

/** Far beyond any time limit below: reached only when nothing bounds the run. */
const BOUND_MS = 60_000;
const HEAD = 'apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n';
/** A pattern whose backtracking against `aaaa…!` takes longer than anyone waits. */
const REDOS = { pattern: '^(a+)+$', value: `${'a'.repeat(40)}!` };

/**
 * The limit of the renderings in a child process: long enough that a good blueprint rendered right
 * after a killed renderer (a new process loading its modules) stays within it on a busy machine.
 */
const CHILD_LIMIT_MS = 4000;

const dir = mkdtempSync(join(tmpdir(), 'dm-bp-limits-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A blueprint directory and its imports file for the CLI. */
function writeCase(name: string, blueprintYaml: string, inputs: Partial<BlueprintInputs>): string[] {
  const bp = join(dir, name);
  mkdirSync(bp, { recursive: true });
  writeFileSync(join(bp, 'blueprint.yaml'), HEAD + blueprintYaml);
  const imports = join(dir, `${name}.json`);
  writeFileSync(
    imports,
    JSON.stringify({ ...inputs, installation: { name: 'inst', namespace: 'ns', ...inputs.installation } }),
  );
  return [bp, '--imports', imports];
}

interface ChildRun {
  results: RenderResult[];
  ticks: number;
  ajvModules: number;
}

/** Renders the blueprints in order with one sandbox, in a process of its own (render-in-child.ts). */
async function renderInChild(
  timeoutMs: number,
  runs: { blueprintYaml: string; inputs: Partial<BlueprintInputs> }[],
): Promise<ChildRun> {
  const input = {
    timeoutMs,
    runs: runs.map((r) => ({
      files: { 'blueprint.yaml': HEAD + r.blueprintYaml },
      inputs: { ...r.inputs, installation: { name: 'inst', namespace: 'ns', ...r.inputs.installation } },
    })),
  };
  const child = await runProcess(
    process.execPath,
    [fileURLToPath(new URL('./render-in-child.js', import.meta.url))],
    { input: JSON.stringify(input), killAfterMs: BOUND_MS, label: 'render-in-child' },
  );
  assert.equal(child.code, 0, child.stderr);
  return JSON.parse(child.stdout) as ChildRun;
}

/** A blueprint that renders: a data import with a pattern, and a deploy execution that uses it. */
const GOOD = {
  blueprintYaml: `imports:
  - {name: n, schema: {type: string, pattern: "^a+$"}}
deployExecutions:
  - {name: d, type: Jinja, template: "deployItems: [{name: d, type: t/mock, config: {v: '{{ imports.n }}'}}]"}
`,
  inputs: { installation: { importDataMappings: { n: 'aaa' } } },
};

function assertGood(result: RenderResult | undefined): void {
  assert.equal(result?.error, undefined, result?.error?.message);
  assert.deepEqual(result?.installations.inst?.deployItems?.[0]?.config, { v: 'aaa' });
}

describe('dm blueprint render --timeout', () => {
  it('stops a template that runs past --timeout (exit 1, the execution and the limit named)', async () => {
    const args = writeCase(
      'slow-template',
      'deployExecutions:\n  - {name: d, type: Jinja, template: "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"}\n',
      {},
    );
    const cli = await runDm(['blueprint', 'render', ...args, '--timeout', '1.5'], {
      env: await isolatedEnv(),
      killAfterMs: BOUND_MS,
    });
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(cli.stderr, /execution d: inst\/d: took longer than 1\.5s \(time limit\)/);
  });
});

describe('blueprint schemas are validated under the time limit', () => {
  // A schema comes with its blueprint, from a registry: Ajv compiles it to code, and a pattern
  // can backtrack for hours. Validating runs in the blueprint rendering process, under its limit.

  it('an import whose schema pattern backtracks forever fails as a limit; the next blueprint renders', async () => {
    const run = await renderInChild(CHILD_LIMIT_MS, [
      {
        blueprintYaml: `imports:\n  - {name: name, schema: {type: string, pattern: "${REDOS.pattern}"}}\n`,
        inputs: { installation: { importDataMappings: { name: REDOS.value } } },
      },
      GOOD,
    ]);
    const [bad, next] = run.results;
    assert.equal(bad?.error?.phase, 'schema');
    assert.equal(
      bad?.error?.message,
      `inst: import name: schema: took longer than ${CHILD_LIMIT_MS / 1000}s (time limit)`,
    );
    assert.equal(bad?.error?.category, 'limit');
    assertGood(next);
    // dm's own process went on meanwhile, and did not load the validator at all
    assert.ok(run.ticks > 0, 'the process that asked for the validation stayed responsive');
    assert.equal(run.ajvModules, 0, 'Ajv was loaded in the process that renders blueprints');
  });

  it('an export whose schema pattern backtracks forever fails as a limit in phase exports', async () => {
    const run = await renderInChild(CHILD_LIMIT_MS, [
      {
        blueprintYaml: `exports:
  - {name: out, schema: {type: string, pattern: "${REDOS.pattern}"}}
exportExecutions:
  - {name: e, type: Jinja, template: "exports: {out: ${REDOS.value}}"}
`,
        inputs: {},
      },
      GOOD,
    ]);
    const [bad, next] = run.results;
    assert.equal(bad?.error?.phase, 'exports');
    assert.equal(
      bad?.error?.message,
      `inst: export out: schema: took longer than ${CHILD_LIMIT_MS / 1000}s (time limit)`,
    );
    assert.equal(bad?.error?.category, 'limit');
    assertGood(next);
  });

  it('local types that double at each reference fail as a limit, not in dm’s own process', async () => {
    // t0 holds t1 twice, t1 holds t2 twice, …: resolved, 2^40 copies of t40.
    const types = Array.from({ length: 40 }, (_, i) => {
      const ref = `{$ref: "local://t${i + 1}"}`;
      return `  t${i}: {allOf: [${ref}, ${ref}]}\n`;
    }).join('');
    const run = await renderInChild(CHILD_LIMIT_MS, [
      {
        blueprintYaml: `localTypes:\n${types}  t40: {type: string}\nimports:\n  - {name: x, schema: {$ref: "local://t0"}}\n`,
        inputs: { installation: { importDataMappings: { x: 'a' } } },
      },
      GOOD,
    ]);
    const [bad, next] = run.results;
    assert.equal(bad?.error?.phase, 'schema');
    assert.equal(bad?.error?.category, 'limit');
    assert.match(
      bad?.error?.message ?? '',
      /^inst: import x: schema: (took longer than 4s \(time limit\)|the blueprint renderer stopped \(out of memory)/,
    );
    assertGood(next);
  });

  it('dm blueprint render fails such an import after --timeout (exit 1), naming the import', async () => {
    const args = writeCase(
      'redos-import',
      `imports:\n  - {name: name, schema: {type: string, pattern: "${REDOS.pattern}"}}\n`,
      { installation: { importDataMappings: { name: REDOS.value } } },
    );
    const cli = await runDm(['blueprint', 'render', ...args, '--timeout', '1.5', '-o', 'json'], {
      env: await isolatedEnv(),
      killAfterMs: BOUND_MS,
    });
    assert.equal(cli.code, 1, cli.stderr);
    const error = (JSON.parse(cli.stdout) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'schema');
    assert.equal(error.message, 'inst: import name: schema: took longer than 1.5s (time limit)');
  });
});

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
import type { BlueprintInputs } from '../../client/src/blueprint/index.js';
import { isolatedEnv, runDm } from '../support/run-cli.js';

/** Far beyond any time limit below: reached only when nothing bounds the run. */
const BOUND_MS = 60_000;
const HEAD = 'apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n';
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

/**
 * `dm completion bash` run by a real bash: the script's completion function is called with
 * COMP_WORDS/COMP_CWORD as bash's programmable completion would, and COMPREPLY is read back.
 * Deployment names come from a real deployment made against the Kubernetes stand-in.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DeployHarness, deployHarness } from '../deploy/harness.js';
import { type CliResult, dmBin, runProcess } from '../support/run-cli.js';

function bash(script: string, cwd: string, env: Record<string, string>): Promise<CliResult> {
  return runProcess('bash', ['-c', script], { cwd, env });
}

describe('dm completion bash', () => {
  let h: DeployHarness;
  before(async () => {
    h = await deployHarness();
    const r = await h.dm([
      'deploy',
      h.file('c.yaml', 'resources:\n- {name: c1, type: v1/ConfigMap}\n'),
      '--name',
      'shop',
    ]);
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    await h?.close();
  });

  it('completes subcommands, flags, flag values, deployment names, and falls back to files', async () => {
    const work = join(h.dir, 'work');
    writeFileSync(join(work, 'config.yaml'), 'resources: []\n');
    const cases: [string[], (reply: string[]) => void][] = [
      [['dm', 'exp'], (r) => assert.deepEqual(r, ['expand'])],
      [['dm', 'expand', 'conf'], (r) => assert.deepEqual(r, ['config.yaml'])],
      [
        ['dm', 'expand', 'config.yaml', '-o', ''],
        (r) => assert.deepEqual(r.sort(), ['json', 'text', 'yaml']),
      ],
      [['dm', 'install', '--fro'], (r) => assert.deepEqual(r, ['--frozen-lockfile'])],
      [
        ['dm', '--reg'],
        (r) => assert.deepEqual(r.sort(), ['--registry', '--registry-dir', '--registry-url']),
      ],
      [['dm', 'manifests', ''], (r) => assert.deepEqual(r, ['shop'])],
      [['dm', 'deployments', 'get', 'sh'], (r) => assert.deepEqual(r, ['shop'])],
      [['dm', 'deployments', ''], (r) => assert.ok(r.includes('list') && r.includes('delete'), r.join(' '))],
    ];
    const lines = [
      `dm() { "${process.execPath}" "${dmBin}" "$@"; }`,
      'source <(dm completion bash) || exit 9',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's own ${…}, not a template
      'comp() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _dm_completion; printf "%s\\n" "${COMPREPLY[@]}"; echo "@@"; }',
      ...cases.map(([words]) => `comp ${words.map((w) => `'${w}'`).join(' ')}`),
    ];
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: h.dir,
      XDG_STATE_HOME: join(h.dir, 'state'),
      XDG_CONFIG_HOME: join(h.dir, 'config'),
      XDG_CACHE_HOME: join(h.dir, 'cache'),
    };
    const r = await bash(lines.join('\n'), work, env);
    assert.equal(r.code, 0, r.stderr);
    const replies = r.stdout.split('@@\n').map((b) => b.split('\n').filter((l) => l !== ''));
    cases.forEach(([words, check], i) => {
      try {
        check(replies[i] ?? []);
      } catch (error) {
        throw new Error(`${words.join(' ')}: ${(error as Error).message}`);
      }
    });
  });

  it('dm completion zsh and fish print scripts that call dm __complete; another shell is a usage error', async () => {
    for (const shell of ['zsh', 'fish']) {
      const r = await h.dm(['completion', shell]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /dm __complete/);
    }
    const bad = await h.dm(['completion', 'tcsh']);
    assert.equal(bad.code, 2);
  });
});

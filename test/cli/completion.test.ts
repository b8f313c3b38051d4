/**
 * `dm completion bash` run by a real bash: the script's completion function is called with
 * COMP_WORDS/COMP_CWORD as bash's programmable completion would, and COMPREPLY is read back.
 * Deployment names come from a real deployment made against the Kubernetes stand-in.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CONFIG_FILE_KEYS } from '../../client/src/config/config.js';
import { type DeployHarness, deployHarness } from '../deploy/harness.js';
import { type CliResult, dmBin, repoRoot, runProcess } from '../support/run-cli.js';

function bash(script: string, cwd: string, env: Record<string, string>): Promise<CliResult> {
  return runProcess('bash', ['-c', script], { cwd, env });
}

describe('dm completion in real shells', () => {
  let h: DeployHarness;
  // The working directory and environment of every shell below: a config.yaml, a dm.lock (redis)
  // and, in the cache only, what another project's install found (postgres).
  let work: string;
  let env: Record<string, string>;
  before(async () => {
    h = await deployHarness();
    const r = await h.dm([
      'deploy',
      h.file('c.yaml', 'resources:\n- {name: c1, type: v1/ConfigMap}\n'),
      '--name',
      'shop',
    ]);
    assert.equal(r.code, 0, r.stderr);
    work = join(h.dir, 'work');
    writeFileSync(join(work, 'config.yaml'), 'resources: []\n');
    env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: h.dir,
      XDG_STATE_HOME: join(h.dir, 'state'),
      XDG_CONFIG_HOME: join(h.dir, 'config'),
      XDG_CACHE_HOME: join(h.dir, 'cache'),
      // The default registry: references under it are offered short too.
      DM_REGISTRY: 'dm-samples/templates',
    };
    const fixtures = join(repoRoot, 'registry-fixtures');
    writeFileSync(join(work, 'lock.yaml'), 'resources:\n- {name: r, type: "redis:v1.0"}\n');
    const other = join(h.dir, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'config.yaml'), 'resources:\n- {name: p, type: "postgres:v1"}\n');
    for (const [cwd, args] of [
      [work, ['install', 'lock.yaml', '--registry-dir', fixtures]],
      [other, ['install', '--registry-dir', fixtures]],
    ] as const) {
      const r = await runProcess(process.execPath, [dmBin, ...args], { cwd, env });
      assert.equal(r.code, 0, `dm ${args.join(' ')}: ${r.stderr}`);
    }
  });
  after(async () => {
    await h?.close();
  });

  it('completes subcommands, flags, flag values, shells, config keys and their values, deployment names, template references, and falls back to files', async () => {
    const redis = 'github.com/dm-samples/templates/redis';
    const cases: [string, (reply: string[]) => void][] = [
      ['dm exp', (r) => assert.deepEqual(r, ['expand'])],
      ['dm expand conf', (r) => assert.deepEqual(r, ['config.yaml'])],
      ['dm expand config.yaml -o ', (r) => assert.deepEqual(r.sort(), ['json', 'text', 'yaml'])],
      ['dm install --fro', (r) => assert.deepEqual(r, ['--frozen-lockfile'])],
      ['dm --reg', (r) => assert.deepEqual(r.sort(), ['--registry', '--registry-dir', '--registry-url'])],
      ['dm manifests ', (r) => assert.deepEqual(r, ['shop'])],
      ['dm deployments get sh', (r) => assert.deepEqual(r, ['shop'])],
      ['dm deployments ', (r) => assert.ok(r.includes('list') && r.includes('delete'), r.join(' '))],
      // The shells; config keys, then their allowed values, never file names.
      ['dm completion ', (r) => assert.deepEqual(r, ['bash', 'zsh', 'fish'])],
      ['dm config set ', (r) => assert.deepEqual(r, [...CONFIG_FILE_KEYS])],
      ['dm config set sch', (r) => assert.deepEqual(r, ['schemaValidation'])],
      ['dm config set schemaValidation ', (r) => assert.deepEqual(r, ['strict', 'warn', 'off'])],
      ['dm config set output j', (r) => assert.deepEqual(r, ['json'])],
      ['dm config set offline ', (r) => assert.deepEqual(r, ['true', 'false'])],
      ['dm config set registryUrl ', (r) => assert.deepEqual(r, [])],
      ['dm config set kubeconfig conf', (r) => assert.deepEqual(r, ['config.yaml'])],
      ['dm config unset http', (r) => assert.deepEqual(r, ['httpTimeout'])],
      // Template references: dm.lock's (as asked and pinned) and the cache's.
      [
        'dm pull ',
        (r) =>
          assert.deepEqual(r, [
            'github.com/dm-samples/templates/postgres:v1',
            `${redis}:=v1.0.3`,
            `${redis}:v1.0`,
            'postgres:v1',
            'redis:=v1.0.3',
            'redis:v1.0',
          ]),
      ],
      [
        'dm resolve github.com/dm-samples/templates/r',
        (r) => assert.deepEqual(r, [`${redis}:=v1.0.3`, `${redis}:v1.0`]),
      ],
      // bash splits words at ':'; the reply continues the word after it.
      [`dm pull ${redis}:`, (r) => assert.deepEqual(r, ['=v1.0.3', 'v1.0'])],
      [`dm deploy ${redis}:v`, (r) => assert.deepEqual(r, ['v1.0'])],
      ['dm versions red', (r) => assert.deepEqual(r, ['redis:=v1.0.3', 'redis:v1.0'])],
      ['dm pull redis:', (r) => assert.deepEqual(r, ['=v1.0.3', 'v1.0'])],
    ];
    // COMP_LINE, COMP_POINT, COMP_WORDS and COMP_CWORD as bash sets them (COMP_WORDS split at ':' too).
    const bashWords = (line: string) => {
      const words = line.split(/\s+/).flatMap((w) => w.split(/(:)/));
      return words.filter((w, i) => w !== '' || i === words.length - 1);
    };
    const lines = [
      `dm() { "${process.execPath}" "${dmBin}" "$@"; }`,
      'source <(dm completion bash) || exit 9',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's own ${…}, not a template
      'comp() { COMP_LINE="$1"; COMP_POINT=${#1}; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _dm_completion; printf "%s\\n" "${COMPREPLY[@]}"; echo "@@"; }',
      ...cases.map(
        ([line]) =>
          `comp '${line}' ${bashWords(line)
            .map((w) => `'${w}'`)
            .join(' ')}`,
      ),
    ];
    const r = await bash(lines.join('\n'), work, env);
    assert.equal(r.code, 0, r.stderr);
    const replies = r.stdout.split('@@\n').map((b) => b.split('\n').filter((l) => l !== ''));
    cases.forEach(([line, check], i) => {
      try {
        check(replies[i] ?? []);
      } catch (error) {
        throw new Error(`${line}<TAB>: ${(error as Error).message}`);
      }
    });
  });

  // The same completions in zsh and fish, each running dm's script. Neither splits words at ':',
  // so a reference is completed whole.
  const redis = 'github.com/dm-samples/templates/redis';
  const shellCases: [string, string[]][] = [
    ['dm exp', ['expand']],
    ['dm expand config.yaml -o ', ['json', 'text', 'yaml']],
    ['dm config set schemaValidation ', ['off', 'strict', 'warn']],
    ['dm manifests ', ['shop']],
    ['dm versions red', ['redis:=v1.0.3', 'redis:v1.0']],
    ['dm pull redis:', ['redis:=v1.0.3', 'redis:v1.0']],
    [`dm deploy ${redis}:v`, [`${redis}:v1.0`]],
  ];
  const checkReplies = (shell: string, stdout: string, cases: [string, string[]][]) => {
    const replies = stdout.split('@@\n').map((b) => b.split('\n').filter((l) => l !== ''));
    cases.forEach(([line, expected], i) => {
      assert.deepEqual((replies[i] ?? []).sort(), expected, `${shell}: ${line}<TAB>`);
    });
  };

  it('dm completion zsh, in a real zsh: _dm hands dm __complete the words up to the cursor and adds its answer, or completes files', async () => {
    // _dm runs as zsh's completion system runs it (words and CURRENT set); compadd and _files,
    // the completion system's own, print what they are given.
    const cases: [string, string[]][] = [...shellCases, ['dm expand conf', ['(files)']]];
    const script = [
      `dm() { "${process.execPath}" "${dmBin}" "$@" }`,
      'compdef() { : }',
      'compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@" }',
      '_files() { print -r -- "(files)" }',
      'eval "$(dm completion zsh)" || exit 9',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: zsh's own ${…}, not a template
      'comp() { local -a words; words=(${(z)1}); [[ $1 == *" " ]] && words+=(""); local CURRENT=${#words}; _dm; print @@ }',
      ...cases.map(([line]) => `comp '${line}'`),
    ].join('\n');
    const r = await runProcess('zsh', ['-f', '-c', script], { cwd: work, env });
    assert.equal(r.code, 0, r.stderr);
    checkReplies('zsh', r.stdout, cases);
  });

  it("dm completion fish, in a real fish: fish's own completion (complete -C) offers dm __complete's answer, or files", async () => {
    const cases: [string, string[]][] = [...shellCases, ['dm expand conf', ['config.yaml']]];
    const script = [
      `function dm; "${process.execPath}" "${dmBin}" $argv; end`,
      'dm completion fish | source; or exit 9',
      ...cases.map(([line]) => `complete -C '${line}'; echo @@`),
    ].join('\n');
    const r = await runProcess('fish', ['--no-config', '-c', script], { cwd: work, env });
    assert.equal(r.code, 0, r.stderr);
    // fish prints a candidate and its description separated by a tab; dm's have none.
    checkReplies('fish', r.stdout.replace(/\t[^\n]*/g, ''), cases);
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

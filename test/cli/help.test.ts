import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot, runDm } from '../support/run-cli.js';

/** Command names listed in a help text's "Commands:" section. */
function commandsOf(help: string): string[] {
  const section = (help.split(/^Commands:$/m)[1] ?? '').split(/\n\s*\n/)[0] ?? '';
  return section
    .split('\n')
    .map((l) => /^ {2}(\S+)/.exec(l)?.[1])
    .filter((c): c is string => c !== undefined && c !== 'help');
}

describe('dm --help', () => {
  it('lists every command dm documents', async () => {
    const r = await runDm(['--help']);
    assert.equal(r.code, 0);
    const commands = commandsOf(r.stdout);
    for (const c of [
      'search',
      'versions',
      'resolve',
      'pull',
      'install',
      'update',
      'outdated',
      'expand',
      'template',
      'render',
      'merge',
      'blueprint',
      'deploy',
      'deployments',
      'manifests',
      'types',
      'lint',
      'cache',
      'config',
      'completion',
      'version',
    ]) {
      assert.ok(commands.includes(c), `dm --help lists ${c}`);
    }
  });

  it('dm help <name> of no command is the usage error of dm <name>, with its "did you mean"', async () => {
    for (const name of ['expnd', 'nosuch']) {
      const help = await runDm(['help', name]);
      const direct = await runDm([name]);
      assert.equal(help.code, 2, help.stderr);
      assert.equal(help.stdout, '');
      assert.equal(help.stderr, direct.stderr);
      assert.match(help.stderr, new RegExp(`^error: unknown command '${name}'\n`));
    }
    assert.match((await runDm(['help', 'expnd'])).stderr, /Did you mean expand\?/);
    // A command's help as before.
    const expand = await runDm(['help', 'expand']);
    assert.equal(expand.code, 0);
    assert.match(expand.stdout, /^Usage: dm expand /);
  });

  it('the root, every group, command and subcommand has --help with examples', async () => {
    const root = (await runDm(['--help'])).stdout;
    const top = commandsOf(root);
    const missing: string[] = /^Examples?:$/m.test(root) ? [] : ['dm'];
    await Promise.all(
      top.map(async (c) => {
        const help = (await runDm([c, '--help'])).stdout;
        const subs = commandsOf(help);
        // A leaf, or a group (its own examples, then each subcommand's).
        if (!/Examples?:/.test(help)) missing.push(c);
        if (subs.length === 0) return;
        for (const s of subs) {
          const sub = await runDm([c, s, '--help']);
          assert.equal(sub.code, 0, `${c} ${s} --help`);
          if (!/Examples?:/.test(sub.stdout)) missing.push(`${c} ${s}`);
        }
      }),
    );
    assert.deepEqual(missing.sort(), []);
  });
});

/** The flags the "Examples:" lines of a help text use on `dm` (up to a pipe or a comment). */
function exampleFlags(help: string): string[] {
  const examples = help.split(/^Examples?:$/m)[1] ?? '';
  const flags = new Set<string>();
  for (const line of examples.split('\n')) {
    const command = /^\s+(?:source <\()?(dm .*)$/.exec(line)?.[1];
    if (!command) continue;
    const words = command.split(/\s[|#>]/)[0]!.split(/\s+/);
    for (const word of words) {
      const flag = /^(--?[a-zA-Z][\w-]*)/.exec(word)?.[1];
      if (flag) flags.add(flag);
    }
  }
  return [...flags];
}

/** The flags a help text lists (its Options and Global Options sections). */
function listedFlags(help: string): Set<string> {
  const listed = new Set<string>();
  for (const m of help.matchAll(/^ {2}(-\w)?,? ?(--[\w-]+)?/gm)) {
    if (m[1]) listed.add(m[1]);
    if (m[2]) listed.add(m[2]);
  }
  return listed;
}

describe('examples in --help', () => {
  it('exampleFlags() reads the flags of dm example lines only', () => {
    const help = 'Examples:\n  dm x a.yaml --name p -o json | jq -r .a   # --not\n  curl -fsS url\n';
    assert.deepEqual(exampleFlags(help), ['--name', '-o']);
    assert.deepEqual(
      [...listedFlags('Options:\n  -o, --output <f>  x\n  --name <n>  y\n')],
      ['-o', '--output', '--name'],
    );
  });

  it("every command's --help lists each flag its examples use, global ones included", async () => {
    // The commands that run (root and group examples use their subcommands' flags).
    const root = (await runDm(['--help'])).stdout;
    const helps: [string, string][] = [];
    await Promise.all(
      commandsOf(root).map(async (c) => {
        const help = (await runDm([c, '--help'])).stdout;
        const subs = commandsOf(help);
        if (subs.length === 0) helps.push([`dm ${c}`, help]);
        await Promise.all(
          subs.map(async (s) => {
            helps.push([`dm ${c} ${s}`, (await runDm([c, s, '--help'])).stdout]);
          }),
        );
      }),
    );
    const unlisted: string[] = [];
    let checked = 0;
    for (const [name, help] of helps) {
      const listed = listedFlags(help);
      for (const flag of exampleFlags(help)) {
        checked++;
        if (!listed.has(flag) && flag !== '-h' && flag !== '--help') unlisted.push(`${name}: ${flag}`);
      }
    }
    assert.ok(checked > 40, `the examples use flags (${checked} checked)`);
    assert.deepEqual(unlisted.sort(), []);
  });
});

describe('dm-registry --help', () => {
  it('every dm-registry command and subcommand has --help with examples', async () => {
    const registry = (args: string[]) =>
      execFileSync(process.execPath, [join(repoRoot, 'bin', 'dm-registry.js'), ...args], {
        encoding: 'utf8',
      });
    const root = registry(['--help']);
    assert.match(root, /^Examples?:$/m);
    const missing: string[] = [];
    let seen = 0;
    for (const c of commandsOf(root)) {
      const help = registry([c, '--help']);
      const subs = commandsOf(help);
      for (const [name, text] of subs.length === 0
        ? [[c, help]]
        : subs.map((s) => [`${c} ${s}`, registry([c, s, '--help'])])) {
        seen++;
        if (!/^Examples?:$/m.test(text!)) missing.push(name!);
      }
    }
    assert.ok(seen >= 8, `dm-registry has its commands (${seen})`);
    assert.deepEqual(missing, []);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runDm } from '../support/run-cli.js';

/** Command names listed in a help text's "Commands:" section. */
function commandsOf(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? '';
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

  it('every command and subcommand has --help with examples', async () => {
    const top = commandsOf((await runDm(['--help'])).stdout);
    const missing: string[] = [];
    await Promise.all(
      top.map(async (c) => {
        const help = (await runDm([c, '--help'])).stdout;
        const subs = commandsOf(help);
        if (subs.length === 0) {
          if (!/Examples?:/.test(help)) missing.push(c);
          return;
        }
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

/**
 * One YAML reader for every input of the CLI: an alias bomb fails at once (exit 6, a limit) in every
 * read path, and a duplicated mapping key is read as PyYAML reads it, with a warning naming file:line.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isolatedEnv, runDm } from '../support/run-cli.js';

const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
for (const l of 'bcdefghi') {
  const prev = String.fromCharCode(l.charCodeAt(0) - 1);
  lines.push(`${l}: &${l} [${Array(10).fill(`*${prev}`).join(', ')}]`);
}
const BOMB = `${lines.join('\n')}\n`;

describe('YAML inputs of the CLI', () => {
  it('an alias bomb fails at once in dm merge, render, template render, expand -f, and as the config file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-yaml-'));
    await writeFile(join(dir, 'bomb.yaml'), BOMB);
    await writeFile(join(dir, 'ok.yaml'), 'a: 1\n');
    await writeFile(join(dir, 't.jinja'), '{{ a }}\n');
    await writeFile(join(dir, 'config.yaml'), 'resources:\n- {name: c, type: v1/ConfigMap}\n');
    const env = await isolatedEnv();
    const runs: [string, string[]][] = [
      ['merge', ['merge', 'ok.yaml', 'bomb.yaml']],
      ['render', ['render', 'bomb.yaml']],
      ['template render', ['template', 'render', 't.jinja', '--context', 'bomb.yaml']],
      ['expand -f', ['expand', 'config.yaml', '-f', 'bomb.yaml']],
      ['--config', ['--config', 'bomb.yaml', 'deployments', 'list']],
    ];
    for (const [what, args] of runs) {
      const r = await runDm(args, { cwd: dir, env });
      assert.notEqual(r.code, 0, `${what}: ${r.stdout}`);
      assert.match(r.stderr, /bomb\.yaml.*(more than \d+ nodes|alias)/, `${what}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /internal error|\n\s+at /, what);
    }
  });

  it('an alias bomb as dm.lock fails at once: install --frozen-lockfile, expand and deploy --dry-run; install rebuilds it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-yaml-lock-'));
    await writeFile(join(dir, 'dm.lock'), BOMB);
    await writeFile(join(dir, 'config.yaml'), 'resources:\n- {name: c, type: v1/ConfigMap}\n');
    const env = await isolatedEnv();
    const limit = /dm\.lock: limit: the document expands to more than \d+ nodes/;
    for (const args of [
      ['install', '--frozen-lockfile'],
      ['expand', 'config.yaml'],
      ['deploy', 'config.yaml', '--name', 'x', '--dry-run'],
    ]) {
      const r = await runDm(args, { cwd: dir, env });
      assert.notEqual(r.code, 0, `${args.join(' ')}: ${r.stdout}`);
      assert.match(r.stderr, limit, args.join(' '));
      assert.doesNotMatch(r.stderr, /internal error|\n\s+at /, args.join(' '));
    }
    const rebuilt = await runDm(['install'], { cwd: dir, env });
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    assert.match(rebuilt.stderr, /warning: .*dm\.lock is damaged .*; rebuilding it/);
  });

  it('a duplicated key in a configuration: the last value wins, with a warning naming file:line and the key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-yaml-'));
    await writeFile(
      join(dir, 'config.yaml'),
      'resources:\n- name: c\n  type: v1/ConfigMap\n  properties:\n    data: {k: first}\n    data: {k: last}\n',
    );
    const r = await runDm(['expand', 'config.yaml', '-o', 'json'], { cwd: dir, env: await isolatedEnv() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /config\.yaml:6: duplicated mapping key 'data': the last value wins/);
    const out = JSON.parse(r.stdout) as { config: { resources: { properties: { data: unknown } }[] } };
    assert.deepEqual(out.config.resources[0]?.properties.data, { k: 'last' });
  });
});

/**
 * What an argument is, decided once (client/src/input.ts): expand, deploy, install and blueprint
 * say the same thing about the same argument, and expand and deploy build the same one-resource
 * configuration for a registry reference.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DeployHarness, DM_BIN, deployHarness } from '../deploy/harness.js';

const FIXTURES = join(DM_BIN, '..', '..', 'registry-fixtures');

describe('one meaning of the argument across commands', () => {
  let h: DeployHarness;
  before(async () => {
    h = await deployHarness();
    h.file('imports.yaml', 'installation: {name: x, namespace: default}\n');
  });
  after(async () => {
    await h.close();
  });

  const commands: [string, (arg: string) => string[]][] = [
    ['expand', (a) => ['expand', a]],
    ['deploy --dry-run', (a) => ['deploy', a, '--name', 'x', '--dry-run']],
    ['install', (a) => ['install', a]],
    ['blueprint render', (a) => ['blueprint', 'render', a, '--imports', 'imports.yaml']],
  ];
  for (const [command, args] of commands) {
    it(`dm ${command} of a missing file: not found (exit 3), naming it`, async () => {
      const r = await h.dm(args('configs/nosuch.yaml'));
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, /configs\/nosuch\.yaml/);
    });
  }

  it('expand and deploy --dry-run build the same one-resource configuration for a reference', async () => {
    const common = ['--registry-dir', FIXTURES, '--properties', 'maxMemory=64mb'];
    const expanded = await h.dmJson<{ config: { resources: { name: string; type: string }[] } }>([
      ...common,
      'expand',
      'redis:v1.0',
      '--deployment',
      'cache',
    ]);
    assert.equal(expanded.code, 0, expanded.stderr);
    const dry = await h.dm([...common, 'deploy', 'redis:v1.0', '--name', 'cache', '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    const planned = [...dry.stdout.matchAll(/^create\s+(\S+)\s+default\/\S+(?:\s+\(level \d+\))?$/gm)]
      .map((m) => m[1])
      .sort();
    const kinds = expanded.data.config.resources.map((r) => r.type.split('/').pop()).sort();
    assert.deepEqual(planned, kinds);
    assert.equal(planned.length, 3);
  });
});

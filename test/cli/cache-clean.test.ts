/** `dm cache clean` end to end (docs/client.md "Cache"): what --older-than keeps, on a real cache. */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

describe('dm cache clean', () => {
  it('--older-than keeps what is newer, however large the number of days; without it everything goes', async () => {
    const env = await isolatedEnv();
    const dir = await mkdtemp(join(tmpdir(), 'dm-cache-clean-'));
    await writeFile(join(dir, 'config.yaml'), 'resources:\n- {name: c, type: "redis:v1.0"}\n');
    const installed = await runDm(['install', '--registry-dir', join(repoRoot, 'registry-fixtures')], {
      env,
      cwd: dir,
    });
    assert.equal(installed.code, 0, installed.stderr);
    const list = async () => {
      const r = await runDm(['cache', 'list', '-o', 'json'], { env, cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as unknown[];
    };
    const entries = (await list()).length;
    assert.ok(entries > 0, 'dm install filled the cache');
    // 1e9 days is further back than a date can be: nothing is that old.
    for (const days of ['30', '0.5', '1e9', '99999999999']) {
      const r = await runDm(['cache', 'clean', '--older-than', days], { env, cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), 'removed 0 entries (0 bytes)', `--older-than ${days}`);
      assert.equal((await list()).length, entries, `--older-than ${days} removed entries`);
    }
    const all = await runDm(['cache', 'clean'], { env, cwd: dir });
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, new RegExp(`^removed ${entries} entries \\(\\d+ bytes\\)$`, 'm'));
    assert.equal((await list()).length, 0);
  });
});

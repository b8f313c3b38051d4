/**
 * A token created with `dm-registry token create` against a running server's database is accepted
 * on the very next request (docs/server.md "Tokens"), not after the server's next poll: real
 * processes, the server's own SQLite file.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { repoRoot, runDm, runProcess } from '../support/run-cli.js';

describe('a token just created', () => {
  let registry: RunningRegistry;
  before(async () => {
    registry = await startRegistry([
      `${join(repoRoot, 'registry-fixtures')}=github.com/dm-samples/templates`,
    ]);
  });
  after(() => registry.stop());

  it('works on the next request, six times in a row (then through dm search with DM_REGISTRY_TOKEN)', async () => {
    for (let i = 0; i < 6; i++) {
      const created = await runProcess(process.execPath, [
        join(repoRoot, 'bin', 'dm-registry.js'),
        'token',
        'create',
        '--read',
        '*',
        '--db',
        join(registry.dir, 'registry.db'),
      ]);
      assert.equal(created.code, 0, created.stderr);
      const token = created.stdout.trim().split('\n').pop()!.trim();
      assert.ok(token.length >= 20, created.stdout);
      // Asked at once (a dm process would take long enough to start to hide the delay).
      const answer = await fetch(`${registry.url}/api/v1/search?q=redis`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(answer.status, 200, `try ${i + 1}: ${await answer.text()}`);
      await answer.arrayBuffer().catch(() => undefined);
      const search = await runDm(['search', 'redis', '--registry-url', registry.url], {
        env: { DM_REGISTRY_TOKEN: token },
      });
      assert.equal(search.code, 0, search.stderr);
      assert.match(search.stdout, /redis/);
    }
    // An unknown token is still refused.
    const wrong = await runDm(['search', 'redis', '--registry-url', registry.url], {
      env: { DM_REGISTRY_TOKEN: 'dm_not_a_token_at_all_0000000000' },
    });
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(wrong.stderr, /not valid/);
  });
});

/**
 * A version the registry server reports quarantined (its source changed it after it was first
 * seen; docs/integrity-store.md) is shown by `dm resolve` and `dm install` as a `warning:` line
 * naming the version and the changed files. Real dm-registry over a real git repository.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { amendLastCommit, commitDirectory } from '../github-standin/standin.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

const NAME = 'git.example/acme/local';
const ADMIN = 'admin-token-for-the-quarantine-warning-test';

describe('quarantined versions', () => {
  let registry: RunningRegistry;
  let repo: string;
  before(async () => {
    repo = join(await mkdtemp(join(tmpdir(), 'dm-quarantine-')), 'repo');
    commitDirectory(join(repoRoot, 'registry-fixtures'), repo);
    registry = await startRegistry([`${repo}=${NAME}`], { DM_ADMIN_TOKEN: ADMIN });
    // A force-push that edits one file of a published version, then a sync.
    const schema = join(repo, 'redis', 'v1.1', 'redis.jinja.schema');
    await writeFile(schema, (await readFile(schema, 'utf8')).replace('title: Redis', 'title: Redis changed'));
    amendLastCommit(repo);
    const sync = await fetch(`${registry.url}/api/v1/registries/${encodeURIComponent(NAME)}/sync`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(sync.status, 200, await sync.text());
  });
  after(() => registry.stop());

  it('dm resolve and dm install warn, naming the version and the changed file', async () => {
    const env = await isolatedEnv();
    const warning = new RegExp(
      `^warning: ${NAME.replaceAll('.', '\\.')}/redis v1\\.1 is quarantined on ${registry.url} since \\S+: its source changed redis\\.jinja\\.schema`,
      'm',
    );
    const resolved = await runDm(['resolve', `${NAME}/redis:v1.1`, '--registry-url', registry.url], { env });
    assert.equal(resolved.code, 0, resolved.stderr);
    assert.match(resolved.stderr, warning);
    const dir = await mkdtemp(join(tmpdir(), 'dm-quarantine-install-'));
    await writeFile(join(dir, 'config.yaml'), `resources:\n- {name: c, type: "${NAME}/redis:v1.1"}\n`);
    const installed = await runDm(['install', '--registry-url', registry.url, '--no-expand'], {
      env,
      cwd: dir,
    });
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stderr, warning);
  });
});

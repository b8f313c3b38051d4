/**
 * A version the registry server reports quarantined (its source changed it after it was first
 * seen; docs/integrity-store.md) is shown by `dm resolve` and `dm install` as a `warning:` line
 * naming the version and the changed files. Real dm-registry over a real git repository.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { amendLastCommit, commitDirectory } from '../github-standin/standin.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

const NAME = 'git.example/acme/local';
const ADMIN = 'admin-token-for-the-quarantine-warning-test';
/** Files added to redis v1.0.3 after it was first seen: more than a warning names. */
const MANY = 40;

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
    // And one that adds MANY files to another version.
    await mkdir(join(repo, 'redis', 'v1.0.3', 'added'));
    for (let i = 0; i < MANY; i++)
      await writeFile(join(repo, 'redis', 'v1.0.3', 'added', `f${i}.txt`), `${i}\n`);
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

  it('a version whose source changed many files: the warning names 5 and says how many more, on one line', async () => {
    const env = await isolatedEnv();
    const resolved = await runDm(['resolve', `${NAME}/redis:v1.0.3`, '--registry-url', registry.url], {
      env,
    });
    assert.equal(resolved.code, 0, resolved.stderr);
    const warnings = resolved.stderr.split('\n').filter((line) => line.startsWith('warning: '));
    assert.equal(warnings.length, 1, resolved.stderr);
    assert.match(
      warnings[0]!,
      new RegExp(
        `: its source changed (added/f\\d+\\.txt, ){4}added/f\\d+\\.txt and ${MANY - 5} more files \\(dm serves the content first seen`,
      ),
    );
  });
});

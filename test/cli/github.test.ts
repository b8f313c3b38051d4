import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Standin, startGitHubStandin } from '../github-standin/standin.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

const NAME = 'github.com/dm-samples/templates';

function gitCommitTree(dir: string): void {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e',
  };
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '.'],
    ['commit', '-q', '-m', 'registry'],
  ]) {
    execFileSync('git', args, { cwd: dir, env });
  }
}

describe('dm talking to GitHub directly (through the GitHub stand-in)', () => {
  let standin: Standin;
  before(async () => {
    const repo = await mkdtemp(join(tmpdir(), 'dm-gh-'));
    await cp(join(repoRoot, 'registry-fixtures'), repo, { recursive: true });
    await rm(join(repo, 'broken'), { recursive: true, force: true });
    gitCommitTree(repo);
    const secret = await mkdtemp(join(tmpdir(), 'dm-gh-private-'));
    await cp(join(repoRoot, 'registry-fixtures', 'redis'), join(secret, 'redis'), { recursive: true });
    await writeFile(join(secret, 'README.md'), 'private\n');
    gitCommitTree(secret);
    standin = await startGitHubStandin({
      repos: {
        'dm-samples/templates': { gitDir: join(repo, '.git') },
        'acme/private': { gitDir: join(secret, '.git'), private: true },
      },
      tokens: ['good-token'],
    });
  });
  after(async () => {
    await standin?.close();
  });

  it('resolves with a handful of requests and the same digests as the directory', async () => {
    const env = { ...(await isolatedEnv()), GITHUB_API_URL: standin.url };
    const before = standin.requests.length;
    const r = await runDm(['resolve', `${NAME}/redis:v1.0`, `${NAME}/big-data/spark:v2`, '-o', 'json'], {
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    const used = standin.requests.slice(before);
    assert.ok(used.length <= 4, `GitHub requests: ${used.map((q) => `${q.method} ${q.path}`).join(', ')}`);
    const viaDir = await runDm(
      [
        'resolve',
        `${NAME}/redis:v1.0`,
        `${NAME}/big-data/spark:v2`,
        '--registry-dir',
        `${join(repoRoot, 'registry-fixtures')}=${NAME}`,
        '-o',
        'json',
      ],
      { env },
    );
    const strip = (list: { version: string; digest: string }[]) => list.map((x) => [x.version, x.digest]);
    assert.deepEqual(strip(JSON.parse(r.stdout)), strip(JSON.parse(viaDir.stdout)));
    assert.match(JSON.parse(r.stdout)[0].commit, /^[0-9a-f]{40}$/);
  });

  it('revalidates with one conditional request (304) on the next run, content from the cache', async () => {
    const env = { ...(await isolatedEnv()), GITHUB_API_URL: standin.url };
    const first = await runDm(['resolve', `${NAME}/redis:v1.0`, '-o', 'json'], { env });
    assert.equal(first.code, 0, first.stderr);
    const mark = standin.requests.length;
    const second = await runDm(['resolve', `${NAME}/redis:v1.0`, '-o', 'json'], { env });
    assert.equal(second.code, 0, second.stderr);
    const used = standin.requests.slice(mark);
    assert.deepEqual(
      used.map((q) => q.status),
      [304],
      used.map((q) => `${q.method} ${q.path} ${q.status}`).join(', '),
    );
    assert.equal(JSON.parse(second.stdout)[0].digest, JSON.parse(first.stdout)[0].digest);
  });

  it('a private repository needs a token', async () => {
    const env = { ...(await isolatedEnv()), GITHUB_API_URL: standin.url };
    const denied = await runDm(['resolve', 'github.com/acme/private/redis:v1'], { env });
    assert.equal(denied.code, 3, denied.stderr);
    assert.match(denied.stderr, /not found \(or private/);
    const allowed = await runDm(['resolve', 'github.com/acme/private/redis:v1', '-o', 'json'], {
      env: { ...env, GITHUB_TOKEN: 'good-token' },
    });
    assert.equal(allowed.code, 0, allowed.stderr);
  });

  it('waits out a rate limit (Retry-After) and carries on', async () => {
    const env = { ...(await isolatedEnv()), GITHUB_API_URL: standin.url };
    standin.injectRateLimit('secondary', 1, 1);
    const r = await runDm(['resolve', `${NAME}/postgres:v1`, '-o', 'json'], { env });
    assert.equal(r.code, 0, r.stderr);
  });
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isolatedEnv, runDm } from '../support/run-cli.js';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e',
    },
  }).trim();
}

describe('a registry served from a git repository (config sources:)', () => {
  it('resolves committed versions with the commit recorded, and ignores uncommitted ones', async () => {
    const repo = await mkdtemp(join(tmpdir(), 'dm-gitreg-'));
    git(repo, 'init', '-q', '-b', 'main');
    for (const v of ['v1', 'v1.0.2']) {
      await mkdir(join(repo, 'redis', v), { recursive: true });
      await writeFile(join(repo, 'redis', v, 'redis.jinja'), `resources: [] # ${v}\n`);
      await writeFile(join(repo, 'redis', v, 'example.yaml'), 'resources: []\n');
    }
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'redis');
    const commit = git(repo, 'rev-parse', 'HEAD');
    await mkdir(join(repo, 'redis', 'v1.0.9'), { recursive: true });
    await writeFile(join(repo, 'redis', 'v1.0.9', 'redis.jinja'), 'resources: []\n');

    const env = await isolatedEnv();
    await mkdir(join(env.XDG_CONFIG_HOME!, 'dm'), { recursive: true });
    await writeFile(
      join(env.XDG_CONFIG_HOME!, 'dm', 'config.yaml'),
      `sources:\n  github.com/acme/gitreg: ${repo}@main\n`,
    );
    const r = await runDm(['resolve', 'github.com/acme/gitreg/redis:v1.0', '--offline', '-o', 'json'], {
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    const [out] = JSON.parse(r.stdout);
    assert.equal(out.version, 'v1.0.2');
    assert.equal(out.commit, commit);

    const missing = await runDm(['resolve', 'github.com/acme/gitreg/redis:v2', '--offline'], { env });
    assert.equal(missing.code, 3);
    assert.match(missing.stderr, /no version of github\.com\/acme\/gitreg\/redis matches v2/);
  });
});

/**
 * `dm-registry` end to end: `start --index registry-fixtures` serves search and resolve at once
 * and stops cleanly on SIGTERM; `index` (a directory's line names it, a git repository's its commit),
 * `migrate` and `token create` work on a database file and
 * on a PostgreSQL database (each run in a temporary directory: on PostgreSQL a process keeps its
 * own files in `./data`).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DIALECTS, databaseOn, FIXTURES, tempDir } from './helpers.js';

const BIN = join(process.cwd(), 'bin', 'dm-registry.js');

for (const dialect of DIALECTS) {
  describe(`dm-registry CLI (${dialect})`, () => {
    it('start indexes registry-fixtures, answers search and resolve, and exits 0 on SIGTERM', async () => {
      const dir = tempDir();
      const child = spawn(
        process.execPath,
        [BIN, 'start', '--port', '0', '--db', await databaseOn(dialect, dir), '--index', FIXTURES],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, DM_ADMIN_TOKEN: 'cli-admin-secret' },
          cwd: dir,
        },
      );
      try {
        let log = '';
        const port = await new Promise<number>((resolve, reject) => {
          child.stdout.on('data', (chunk: Buffer) => {
            log += chunk.toString();
            const m = /"msg":"listening","port":(\d+)/.exec(log);
            if (m) resolve(Number(m[1]));
          });
          child.on('exit', (code) => reject(new Error(`exited ${code}: ${log}`)));
        });
        const search = (await (await fetch(`http://127.0.0.1:${port}/api/v1/search?q=redis`)).json()) as {
          hits: { name: string }[];
        };
        assert.equal(search.hits[0]?.name, 'redis');
        const resolved = (await (
          await fetch(`http://127.0.0.1:${port}/api/v1/resolve?ref=redis:v1.0`)
        ).json()) as { version: string };
        assert.equal(resolved.version, 'v1.0.3');
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        child.kill('SIGTERM');
        assert.equal(await exited, 0);
        assert.match(log, /"msg":"stopped"/);
        assert.ok(!log.includes('cli-admin-secret'));
        for (const line of log.trim().split('\n')) JSON.parse(line);
      } finally {
        child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('index prints counts and findings; migrate and token create work', async () => {
      const dir = tempDir();
      try {
        const db = await databaseOn(dialect, dir);
        const run = (...args: string[]) =>
          spawnSync(process.execPath, [BIN, ...args, '--db', db], { encoding: 'utf8', cwd: dir });
        const migrate = run('migrate');
        assert.equal(migrate.status, 0, migrate.stderr);
        const broken = join(FIXTURES, 'broken');
        const index = run('index', broken);
        assert.equal(index.status, 0, index.stderr);
        // A directory has no commit: the line says what was read, never the store's fingerprint.
        const [first = ''] = index.stdout.split('\n');
        assert.match(
          first,
          /^local\.dm\/local\/broken: succeeded; indexed \d+ templates, \d+ versions from directory /,
        );
        assert.ok(first.endsWith(` from directory ${broken}`), first);
        assert.doesNotMatch(index.stdout, /dir-/);
        assert.match(index.stdout, /error DUPLICATE_VERSION/);
        const again = run('index', broken, '--json');
        assert.equal(again.status, 0, again.stderr);
        const json = JSON.parse(again.stdout) as { sync: { status: string; commit: string } };
        assert.deepEqual([json.sync.status, json.sync.commit], ['unchanged', '']);
        // A git repository prints its commit.
        const repo = join(dir, 'repo');
        cpSync(join(FIXTURES, 'redis'), join(repo, 'redis'), { recursive: true });
        for (const args of [
          ['init', '-q'],
          ['add', '-A'],
          ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'x'],
        ]) {
          assert.equal(spawnSync('git', args, { cwd: repo }).status, 0);
        }
        const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).stdout.trim();
        const git = run('index', repo);
        assert.equal(git.status, 0, git.stderr);
        assert.match(
          git.stdout,
          new RegExp(`: succeeded at ${head}; 1 templates, \\d+ versions; \\d+ source requests\n`),
        );
        const token = run('token', 'create', '--admin');
        assert.equal(token.status, 0, token.stderr);
        assert.match(token.stdout, /^dmr_[A-Za-z0-9_-]{43}\n$/);
        const usage = run('token', 'create');
        assert.equal(usage.status, 2);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

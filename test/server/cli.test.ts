/**
 * `dm-registry` end to end: `start --index registry-fixtures` serves search and resolve at once
 * and stops cleanly on SIGTERM; `index`, `migrate` and `token create` work on a database file and
 * on a PostgreSQL database (each run in a temporary directory: on PostgreSQL a process keeps its
 * own files in `./data`).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
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
        const index = run('index', join(FIXTURES, 'broken'));
        assert.equal(index.status, 0, index.stderr);
        assert.match(index.stdout, /succeeded at dir-[0-9a-f]+; \d+ templates, \d+ versions/);
        assert.match(index.stdout, /error DUPLICATE_VERSION/);
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

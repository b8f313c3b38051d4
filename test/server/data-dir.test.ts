/**
 * The data directory (docs/server.md, "Running it"): `--data-dir`, else DM_REGISTRY_DATA_DIR, else
 * beside the SQLite file, else (PostgreSQL) `./data` of the working directory. `checksum-key`
 * writes `log.key` there without opening the database, so the rule is checked on every dialect's
 * URL without a server; the test support's PostgreSQL server keeps its files in its own
 * temporary directory and removes it when stopped.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { postgresBinaries, startPostgres } from '../support/postgres.js';
import { startRegistry } from '../support/registry-server.js';
import { FIXTURES, tempDir } from './helpers.js';

const BIN = join(process.cwd(), 'bin', 'dm-registry.js');
const PG = 'postgres://nobody@localhost:1/nothing';

describe('the data directory', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const fresh = () => {
    const d = tempDir('dm-data-dir-');
    dirs.push(d);
    return d;
  };
  const keyIn = (args: string[], cwd: string, env: Record<string, string> = {}) => {
    const run = spawnSync(process.execPath, [BIN, 'checksum-key', ...args], {
      encoding: 'utf8',
      cwd,
      env: { ...process.env, DM_REGISTRY_DATA_DIR: '', DM_REGISTRY_DB: '', ...env },
    });
    assert.equal(run.status, 0, run.stderr);
  };

  it('is --data-dir, else DM_REGISTRY_DATA_DIR, else beside an SQLite file, else ./data with PostgreSQL', () => {
    const cwd = fresh();
    const given = fresh();
    keyIn(['--db', PG, '--data-dir', given], cwd);
    assert.ok(existsSync(join(given, 'log.key')), '--data-dir');
    const fromEnv = fresh();
    keyIn(['--db', PG], cwd, { DM_REGISTRY_DATA_DIR: fromEnv });
    assert.ok(existsSync(join(fromEnv, 'log.key')), 'DM_REGISTRY_DATA_DIR');
    // The flag wins over the environment.
    const both = fresh();
    keyIn(['--db', PG, '--data-dir', both], cwd, { DM_REGISTRY_DATA_DIR: join(cwd, 'not-this') });
    assert.ok(existsSync(join(both, 'log.key')) && !existsSync(join(cwd, 'not-this')), 'flag over env');
    const sqlite = fresh();
    keyIn(['--db', `file:${join(sqlite, 'sub', 'r.db')}`], cwd);
    assert.ok(existsSync(join(sqlite, 'sub', 'log.key')), 'beside the SQLite file');
    assert.ok(!existsSync(join(cwd, 'data')), 'nothing in ./data until PostgreSQL has no data dir');
    keyIn(['--db', PG], cwd);
    assert.ok(existsSync(join(cwd, 'data', 'log.key')), './data with PostgreSQL');
  });

  const cluster = postgresBinaries() ? startPostgres() : undefined;
  after(async () => (await cluster)?.stop());
  it('a test server on PostgreSQL keeps its keys in its own directory, removed when it stops', async (t) => {
    if (!cluster) {
      t.diagnostic('PostgreSQL is not installed: run on SQLite only');
      return;
    }
    const db = await (await cluster).createDatabase('data_dir');
    const server = await startRegistry([`${FIXTURES}=github.com/acme/templates`], {}, [], { db });
    try {
      assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
      assert.ok(existsSync(join(server.dir, 'secret.key')), 'secret.key is not in the server directory');
      assert.ok(existsSync(join(server.dir, 'log.key')), 'log.key is not in the server directory');
    } finally {
      await server.stop();
    }
    assert.ok(!existsSync(server.dir), 'the server directory was left behind');
  });
});

/**
 * The real `dm-registry` CLI for the bundle tests: run in a directory (`registry`), or run and
 * required to succeed (`ok`), and a new database per call on a dialect (`database`).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../support/run-cli.js';
import { type Dialect, postgresDatabase } from './dialect.js';

export const BIN = join(repoRoot, 'bin', 'dm-registry.js');

export function registryCli(dir: string) {
  const registry = (args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env },
    });
    return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
  };
  const ok = (args: string[]) => {
    const r = registry(args);
    assert.equal(r.code, 0, `dm-registry ${args.join(' ')}: ${r.stderr}`);
    return r;
  };
  let files = 0;
  /** A new database: an SQLite file in `dir`, or a database of the test process's cluster. */
  const database = async (dialect: Dialect): Promise<string> =>
    dialect === 'sqlite' ? `file:${join(dir, `db${++files}.db`)}` : postgresDatabase();
  return { registry, ok, database };
}

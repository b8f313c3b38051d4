/**
 * What every `dm-registry` command reads the same way (docs/server.md "Running it"): the database
 * target of `--db` / DM_REGISTRY_DB, the data directory, and the sync lease's time to live.
 */

import { dirname, resolve } from 'node:path';
import { DmError } from '../../../client/src/error.js';
import type { OpenedStore } from '../store/open-store.js';

export interface CommonOptions {
  db?: string;
  dataDir?: string;
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The database, and the data directory: where this process keeps what is its own (see `localDir`). */
export type DatabaseTarget = ({ kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string }) & {
  dataDir: string;
};

export const DATA_DIR_HELP =
  'where this process keeps its own files: keys, git cache, upstream checkpoints (env DM_REGISTRY_DATA_DIR; default: beside an SQLite file, ./data with PostgreSQL)';

/**
 * `file:./data/registry.db` (or a path) → an SQLite file; `postgres://…` → PostgreSQL. The data
 * directory is `--data-dir`, else DM_REGISTRY_DATA_DIR, else the SQLite file's directory, else
 * (PostgreSQL) `./data` of the working directory (docs/server.md, "Running it").
 */
export function databaseTarget(
  option: string | undefined,
  env: NodeJS.ProcessEnv,
  dataDirOption?: string,
): DatabaseTarget {
  const text = option ?? env.DM_REGISTRY_DB ?? 'file:./data/registry.db';
  const given = dataDirOption ?? env.DM_REGISTRY_DATA_DIR;
  const dataDir = given ? resolve(given) : undefined;
  if (/^postgres(ql)?:\/\//i.test(text))
    return { kind: 'postgres', url: text, dataDir: dataDir ?? resolve('data') };
  // `mysql://x/y` would otherwise become the file ./mysql:/x/y: any other URL scheme is refused.
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text)?.[1];
  if (scheme !== undefined && scheme.toLowerCase() !== 'file' && scheme.length > 1) {
    throw new DmError(
      'UNSUPPORTED_DATABASE',
      `--db '${text}': the scheme '${scheme}:' is not supported; use file:<path> (or a path) for SQLite, or postgres://… (postgresql://…) for PostgreSQL`,
      { category: 'usage' },
    );
  }
  const file = resolve(text.replace(/^file:/, ''));
  return { kind: 'sqlite', file, dataDir: dataDir ?? dirname(file) };
}

/**
 * Where a process keeps what is its own (the git cache, the secret key file when
 * DM_REGISTRY_SECRET_KEY is not set, the checksum log's key, the upstream checkpoints, the
 * Deployment Manager's state): the target's data directory.
 */
export function localDir(target: DatabaseTarget): string {
  return target.dataDir;
}

/** Opens the store of `--db` (migrations applied; store/open-store.ts); `close` ends it. */
export async function openDatabase(
  target: DatabaseTarget,
  options: { max?: number } = {},
): Promise<OpenedStore> {
  const { openStoreAt } = await import('../store/open-store.js');
  return openStoreAt(target, options);
}

/** DM_REGISTRY_SYNC_LEASE_TTL_MS: how long a sync lease outlives its last heartbeat (PostgreSQL). */
export function syncLeaseTtl(env: NodeJS.ProcessEnv): { syncLeaseTtlMs?: number } {
  const text = env.DM_REGISTRY_SYNC_LEASE_TTL_MS;
  if (text === undefined || text === '') return {};
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 300 || ms > 3_600_000) {
    throw new DmError(
      'USAGE',
      `DM_REGISTRY_SYNC_LEASE_TTL_MS must be a whole number of milliseconds from 300 to 3600000, not '${text}'`,
      { category: 'usage' },
    );
  }
  return { syncLeaseTtlMs: ms };
}

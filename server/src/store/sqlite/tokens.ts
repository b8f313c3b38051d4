// SQLite only: token rows over better-sqlite3 statements, answered synchronously.
/**
 * Token rows (docs/server.md, "Tokens"): the queries the token book and the token commands use.
 * Tokens are stored as sha256 hashes; a revoked token is a deleted row.
 */

import type { TokenRow } from '../contract.js';
import type { Store } from './open.js';

export function allTokens(store: Store): TokenRow[] {
  return store.sqlite
    .prepare(
      `SELECT id, hash, role, registry_id AS registryId, organisations, created_at AS createdAt,
              expires_at AS expiresAt, last_used_at AS lastUsedAt FROM tokens ORDER BY id`,
    )
    .all() as TokenRow[];
}

/**
 * A cheap fingerprint of the token table (count, largest id, sum of ids): it changes with every
 * creation and every revocation, so replicas polling it see both without reading the rows.
 */
export function tokensFingerprint(store: Store): string {
  const row = store.sqlite
    .prepare('SELECT count(*) AS n, coalesce(max(id), 0) AS m, coalesce(sum(id), 0) AS s FROM tokens')
    .get() as { n: number; m: number; s: number };
  return `${row.n}:${row.m}:${row.s}`;
}

export function insertToken(
  store: Store,
  values: {
    hash: string;
    role: 'admin' | 'read';
    registryId: number | null;
    organisations: string | null;
    createdAt: number;
    expiresAt: number | null;
  },
): number {
  const result = store.sqlite
    .prepare(
      'INSERT INTO tokens (hash, role, registry_id, organisations, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
    )
    .run(
      values.hash,
      values.role,
      values.registryId,
      values.organisations,
      values.createdAt,
      values.expiresAt,
    );
  return Number(result.lastInsertRowid);
}

/** Deletes a token by id or hash; returns whether one was deleted. */
export function deleteToken(store: Store, by: { id: number } | { hash: string }): boolean {
  const result =
    'id' in by
      ? store.sqlite.prepare('DELETE FROM tokens WHERE id = ?').run(by.id)
      : store.sqlite.prepare('DELETE FROM tokens WHERE hash = ?').run(by.hash);
  return result.changes > 0;
}

/** Records when tokens were last used (ids → epoch ms), in one transaction. */
export function recordTokensUsed(store: Store, used: ReadonlyMap<number, number>): void {
  const update = store.sqlite.prepare(
    'UPDATE tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
  );
  store.sqlite.transaction(() => {
    for (const [id, at] of used) update.run(at, id, at);
  })();
}

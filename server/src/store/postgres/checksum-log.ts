// PostgreSQL only: the checksum log's hash store over a pool client, appends serialised across replicas by a row lock.
/** The checksum log's storage on PostgreSQL (docs/integrity-store.md §1–§2; the rules: ../checksum-log.ts). */
import type { PoolClient } from 'pg';
import {
  type LogRecord,
  type LogSigner,
  type MerkleHashStore,
  MerkleLog,
  type StoredHash,
  type SubtreeId,
  subtreesOf,
} from '../../../../client/src/integrity/index.js';
import {
  appendPlan,
  hashesInOrder,
  INSERT_CHECKPOINT_SQL,
  type LogAppend,
  signedCheckpointOf,
  sizeConflict,
} from '../checksum-log.js';

/** Anything that runs a PostgreSQL query: the pool, or a transaction's client. */
export type PgQueryable = Pick<PoolClient, 'query'>;

/** The hash store on PostgreSQL, over the pool (reads) or a transaction's client (the swap). */
export class PgHashStore implements MerkleHashStore {
  constructor(private readonly db: PgQueryable) {}

  async size(): Promise<number> {
    const res = await this.db.query<{ size: string }>('SELECT size FROM log_state WHERE id = 1');
    return Number(res.rows[0]?.size ?? 0);
  }

  async readHashes(ids: readonly SubtreeId[]): Promise<Buffer[]> {
    if (ids.length === 0) return [];
    const res = await this.db.query<{ level: number; idx: string; hash: Buffer }>(
      `SELECT h.level, h.idx, h.hash FROM log_hashes h
       JOIN unnest($1::int[], $2::bigint[]) AS w(level, idx) ON h.level = w.level AND h.idx = w.idx`,
      [ids.map((id) => id.level), ids.map((id) => id.index)],
    );
    return hashesInOrder(
      ids,
      res.rows.map((r) => ({ level: r.level, idx: Number(r.idx), hash: r.hash })),
    );
  }

  /** Runs inside the caller's transaction (the swap's, or one it opens itself). */
  async appendHashes(fromSize: number, toSize: number, hashes: readonly StoredHash[]): Promise<void> {
    await this.db.query(
      `INSERT INTO log_hashes (level, idx, hash) SELECT * FROM unnest($1::int[], $2::bigint[], $3::bytea[])`,
      [hashes.map((h) => h.level), hashes.map((h) => h.index), hashes.map((h) => Buffer.from(h.hash))],
    );
    const moved = await this.db.query('UPDATE log_state SET size = $1 WHERE id = 1 AND size = $2', [
      toSize,
      fromSize,
    ]);
    if (moved.rowCount !== 1) throw sizeConflict(fromSize);
  }
}

/** appendRecordsSqlite on PostgreSQL, inside the caller's transaction (`client`). */
export async function appendRecordsPg(
  client: PgQueryable,
  records: readonly LogRecord[],
  signer: LogSigner | undefined,
  now: number,
): Promise<LogAppend> {
  const store = new PgHashStore(client);
  // Serialises appenders across replicas: the row lock is held until the caller's COMMIT.
  await client.query('SELECT size FROM log_state WHERE id = 1 FOR UPDATE');
  const size = await store.size();
  const log = MerkleLog.atEdge(store, size, await store.readHashes(subtreesOf(0, size)));
  const p = appendPlan(log, records);
  await store.appendHashes(p.fromSize, p.toSize, p.hashes);
  const note = signedCheckpointOf(p, signer);
  if (note !== undefined) {
    await client.query(INSERT_CHECKPOINT_SQL, [
      p.toSize,
      MerkleLog.planRoot(p).toString('base64'),
      note,
      now,
    ]);
  }
  return { fromSize: p.fromSize, toSize: p.toSize, note };
}

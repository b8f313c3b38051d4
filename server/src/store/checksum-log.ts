/**
 * The checksum log's storage (docs/integrity-store.md §1–§2, docs/integrity.md §1.2): the
 * MerkleHashStore over `log_hashes`/`log_state` for both dialects, the append a swap makes inside
 * its own transaction (first_seen rows, their leaf hashes, the conditional size update and a
 * signed checkpoint, all or nothing), and the checkpoint an API read serves.
 */
import type Database from 'better-sqlite3';
import type { PoolClient } from 'pg';
import {
  type AppendPlan,
  encodeRecord,
  integrityError,
  type LogRecord,
  type LogSigner,
  leafHash,
  type MerkleHashStore,
  MerkleLog,
  type StoredHash,
  type SubtreeId,
  signCheckpoint,
  subtreesOf,
} from '../../../client/src/integrity/index.js';

/** Anything that runs a PostgreSQL query: the pool, or a transaction's client. */
export type PgQueryable = Pick<PoolClient, 'query'>;

function hashesInOrder(ids: readonly SubtreeId[], rows: { level: number; idx: number; hash: Buffer }[]) {
  const byKey = new Map(rows.map((r) => [`${r.level}/${Number(r.idx)}`, r.hash]));
  return ids.map((id) => {
    const hash = byKey.get(`${id.level}/${id.index}`);
    if (hash === undefined) {
      throw integrityError(
        'CHECKSUM_STORE_CONFLICT',
        `the checksum log has no stored hash at level ${id.level}, index ${id.index}`,
      );
    }
    return hash;
  });
}

const conflict = (from: number) =>
  integrityError(
    'CHECKSUM_STORE_CONFLICT',
    `the checksum log is no longer at size ${from}: another writer appended first`,
  );

/** The hash store on SQLite: synchronous, so a better-sqlite3 transaction can use it. */
export class SqliteHashStore implements MerkleHashStore {
  constructor(private readonly db: Database.Database) {}

  size(): number {
    return (
      (this.db.prepare('SELECT size FROM log_state WHERE id = 1').pluck().get() as number | undefined) ?? 0
    );
  }

  readHashes(ids: readonly SubtreeId[]): Buffer[] {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT level, idx, hash FROM log_hashes WHERE (level, idx) IN (VALUES ${ids.map(() => '(?, ?)').join(', ')})`,
      )
      .all(...ids.flatMap((id) => [id.level, id.index])) as { level: number; idx: number; hash: Buffer }[];
    return hashesInOrder(ids, rows);
  }

  appendHashes(fromSize: number, toSize: number, hashes: readonly StoredHash[]): void {
    const insert = this.db.prepare('INSERT INTO log_hashes (level, idx, hash) VALUES (?, ?, ?)');
    this.db.transaction(() => {
      for (const h of hashes) insert.run(h.level, h.index, Buffer.from(h.hash));
      const moved = this.db
        .prepare('UPDATE log_state SET size = ? WHERE id = 1 AND size = ?')
        .run(toSize, fromSize).changes;
      if (moved !== 1) throw conflict(fromSize);
    })();
  }
}

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
    if (moved.rowCount !== 1) throw conflict(fromSize);
  }
}

/** What an append inside a swap wrote. */
export interface LogAppend {
  /** The log index of the first record. */
  fromSize: number;
  toSize: number;
  /** The signed checkpoint of the new size, when a signer was given. */
  note: string | undefined;
}

function plan(log: MerkleLog, records: readonly LogRecord[]): AppendPlan {
  return log.planAppend(records.map((r) => leafHash(encodeRecord(r))));
}

function checkpointOf(p: AppendPlan, signer: LogSigner | undefined): string | undefined {
  return signer ? signCheckpoint({ size: p.toSize, root: MerkleLog.planRoot(p) }, signer) : undefined;
}

/**
 * Appends records inside the caller's SQLite transaction: their leaf hashes and the subtrees they
 * complete, the conditional size update (CHECKSUM_STORE_CONFLICT rolls the swap back) and, with a
 * signer, the signed checkpoint of the new size.
 */
export function appendRecordsSqlite(
  db: Database.Database,
  records: readonly LogRecord[],
  signer: LogSigner | undefined,
  now: number,
): LogAppend {
  const store = new SqliteHashStore(db);
  const size = store.size();
  const log = MerkleLog.atEdge(store, size, store.readHashes(subtreesOf(0, size)));
  const p = plan(log, records);
  store.appendHashes(p.fromSize, p.toSize, p.hashes);
  const note = checkpointOf(p, signer);
  if (note !== undefined) {
    db.prepare(
      'INSERT INTO log_checkpoints (size, root, note, signed_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    ).run(p.toSize, MerkleLog.planRoot(p).toString('base64'), note, now);
  }
  return { fromSize: p.fromSize, toSize: p.toSize, note };
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
  const p = plan(log, records);
  await store.appendHashes(p.fromSize, p.toSize, p.hashes);
  const note = checkpointOf(p, signer);
  if (note !== undefined) {
    await client.query(
      'INSERT INTO log_checkpoints (size, root, note, signed_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
      [p.toSize, MerkleLog.planRoot(p).toString('base64'), note, now],
    );
  }
  return { fromSize: p.fromSize, toSize: p.toSize, note };
}

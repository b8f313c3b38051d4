// SQLite only: the checksum log's hash store must be synchronous to run inside a better-sqlite3 transaction.
/** The checksum log's storage on SQLite (docs/integrity-store.md §1–§2; the rules: ../checksum-log.ts). */
import type Database from 'better-sqlite3';
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
import { sqlite } from '../sql.js';

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
      if (moved !== 1) throw sizeConflict(fromSize);
    })();
  }
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
  const p = appendPlan(log, records);
  store.appendHashes(p.fromSize, p.toSize, p.hashes);
  const note = signedCheckpointOf(p, signer);
  if (note !== undefined) {
    db.prepare(sqlite(INSERT_CHECKPOINT_SQL)).run(
      p.toSize,
      MerkleLog.planRoot(p).toString('base64'),
      note,
      now,
    );
  }
  return { fromSize: p.fromSize, toSize: p.toSize, note };
}

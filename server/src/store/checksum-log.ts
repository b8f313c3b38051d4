/**
 * The checksum log's storage (docs/integrity-store.md §1–§2, docs/integrity.md §1.2), written once
 * for both dialects: the MerkleHashStore over `log_hashes`/`log_state` and the append, as flows
 * (sql.ts) that each dialect's runner drives. A swap appends inside its own transaction: first_seen
 * rows, their leaf hashes, the conditional size update and a signed checkpoint, all or nothing.
 */
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
import { type Flow, insertRowsFlow, listParam, rowsOf, type SqlDialect, type SqlRunner } from './sql.js';

export function hashesInOrder(
  ids: readonly SubtreeId[],
  rows: { level: number; idx: number; hash: Buffer }[],
) {
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

/** The conditional size update found another writer's append first. */
export const sizeConflict = (from: number) =>
  integrityError(
    'CHECKSUM_STORE_CONFLICT',
    `the checksum log is no longer at size ${from}: another writer appended first`,
  );

/** What an append inside a swap wrote. */
export interface LogAppend {
  /** The log index of the first record. */
  fromSize: number;
  toSize: number;
  /** The signed checkpoint of the new size, when a signer was given. */
  note: string | undefined;
}

/** The leaf hashes of `records` and the subtrees they complete, appended to `log`. */
export function appendPlan(log: MerkleLog, records: readonly LogRecord[]): AppendPlan {
  return log.planAppend(records.map((r) => leafHash(encodeRecord(r))));
}

/** The signed checkpoint of an append's new size, when a signer is given. */
export function signedCheckpointOf(p: AppendPlan, signer: LogSigner | undefined): string | undefined {
  return signer ? signCheckpoint({ size: p.toSize, root: MerkleLog.planRoot(p) }, signer) : undefined;
}

/** A signed checkpoint, kept once per size. */
export const INSERT_CHECKPOINT_SQL =
  'INSERT INTO log_checkpoints (size, root, note, signed_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING';

/** The log's size; `lock` (the dialect's forUpdate) holds its row until COMMIT. */
export function* logSizeFlow(lock = ''): Flow<number> {
  const [row] = yield* rowsOf<{ size: number | string }>(`SELECT size FROM log_state WHERE id = 1${lock}`);
  return Number(row?.size ?? 0);
}

/** The stored hashes of `ids`, in that order (CHECKSUM_STORE_CONFLICT when one is missing). */
export function* readHashesFlow(d: SqlDialect, ids: readonly SubtreeId[]): Flow<Buffer[]> {
  if (ids.length === 0) return [];
  const rows = yield* rowsOf<{ level: number; idx: number | string; hash: Buffer }>(
    `SELECT h.level, h.idx, h.hash FROM ${d.list('$1', 'w', [
      ['level', 'int'],
      ['idx', 'bigint'],
    ])} CROSS JOIN log_hashes h WHERE h.level = w.level AND h.idx = w.idx`,
    [listParam(ids.map((id) => [id.level, id.index]))],
  );
  return hashesInOrder(
    ids,
    rows.map((r) => ({ level: r.level, idx: Number(r.idx), hash: r.hash })),
  );
}

/** Stores an append's hashes and moves the size from `fromSize` to `toSize`, or throws a conflict. */
export function* appendHashesFlow(
  d: SqlDialect,
  fromSize: number,
  toSize: number,
  hashes: readonly StoredHash[],
): Flow<void> {
  yield* insertRowsFlow(
    d,
    'log_hashes',
    [
      ['level', 'int'],
      ['idx', 'bigint'],
      ['hash', 'bytes'],
    ],
    hashes.map((h) => [h.level, h.index, Buffer.from(h.hash)]),
  );
  const moved = yield ['UPDATE log_state SET size = $1 WHERE id = 1 AND size = $2', [toSize, fromSize]];
  if (moved.changes !== 1) throw sizeConflict(fromSize);
}

/** An append plan reads nothing from its store: MerkleLog.atEdge is given the right edge. */
const EDGE_ONLY: MerkleHashStore = {
  size: () => {
    throw new Error('an append plan reads no hash store');
  },
  readHashes: () => {
    throw new Error('an append plan reads no hash store');
  },
  appendHashes: () => {
    throw new Error('an append plan writes through appendHashesFlow');
  },
};

/**
 * Appends records inside the caller's transaction: their leaf hashes and the subtrees they
 * complete, the conditional size update (CHECKSUM_STORE_CONFLICT rolls the caller back) and, with
 * a signer, the signed checkpoint of the new size. On PostgreSQL the log's row is locked first,
 * which serialises appenders across replicas until COMMIT.
 */
export function* appendRecordsFlow(
  d: SqlDialect,
  records: readonly LogRecord[],
  signer: LogSigner | undefined,
  now: number,
): Flow<LogAppend> {
  const size = yield* logSizeFlow(d.forUpdate());
  const log = MerkleLog.atEdge(EDGE_ONLY, size, yield* readHashesFlow(d, subtreesOf(0, size)));
  const p = appendPlan(log, records);
  yield* appendHashesFlow(d, p.fromSize, p.toSize, p.hashes);
  const note = signedCheckpointOf(p, signer);
  if (note !== undefined) {
    yield [INSERT_CHECKPOINT_SQL, [p.toSize, MerkleLog.planRoot(p).toString('base64'), note, now]];
  }
  return { fromSize: p.fromSize, toSize: p.toSize, note };
}

/** The log's hash store over a dialect's runner: reads outside a transaction, an append in one. */
export class SqlHashStore implements MerkleHashStore {
  constructor(private readonly sql: SqlRunner) {}

  size(): Promise<number> {
    return this.sql.read(logSizeFlow());
  }

  readHashes(ids: readonly SubtreeId[]): Promise<Buffer[]> {
    return this.sql.read(readHashesFlow(this.sql, ids));
  }

  appendHashes(fromSize: number, toSize: number, hashes: readonly StoredHash[]): Promise<void> {
    return this.sql.transaction(appendHashesFlow(this.sql, fromSize, toSize, hashes));
  }
}

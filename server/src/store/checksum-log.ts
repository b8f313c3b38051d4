/**
 * The checksum log's storage (docs/integrity-store.md §1–§2, docs/integrity.md §1.2): what both
 * dialects' MerkleHashStore over `log_hashes`/`log_state` and their append share (sqlite/ and
 * postgres/checksum-log.ts). A swap appends inside its own transaction: first_seen rows, their
 * leaf hashes, the conditional size update and a signed checkpoint, all or nothing.
 */
import {
  type AppendPlan,
  encodeRecord,
  integrityError,
  type LogRecord,
  type LogSigner,
  leafHash,
  MerkleLog,
  type SubtreeId,
  signCheckpoint,
} from '../../../client/src/integrity/index.js';

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

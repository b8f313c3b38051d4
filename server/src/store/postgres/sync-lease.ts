// PostgreSQL only: leases between replicas sharing one database (SQLite has one process per file).
/**
 * One sync of a registry at a time across replicas sharing PostgreSQL (docs/server.md, "Several
 * replicas"): a lease row per registry (`sync_leases`), taken with one statement, renewed by a
 * heartbeat, released at the end, and taken over by another replica once it has expired (a replica
 * killed mid-sync stops renewing). Every statement is its own short transaction: no session-level
 * lock, nothing held across statements, so it works behind PgBouncer in transaction mode. Times are
 * the database's clock, so replicas' clocks may disagree.
 *
 * Triggers that arrive while another replica holds the lease are coalesced: they set `pending`, and
 * the holder, when it finishes, runs one more sync instead of one per trigger (`release` answers
 * whether one is due; it keeps the lease when so).
 */
import type { PostgresStore } from './open.js';

const NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** True when no live replica holds the lease of the registry `registryId` (an SQL expression) names. */
export const unleased = (registryId: string) =>
  `NOT EXISTS (SELECT 1 FROM sync_leases l WHERE l.registry_id = ${registryId} AND l.expires_at >= ${NOW})`;

export interface LeaseOptions {
  /** How long a lease lasts without a heartbeat (ms); default 15 s. */
  ttlMs?: number;
}

export class SyncLeases {
  private readonly ttlMs: number;
  /** Registries this process is syncing, and whether a trigger arrived meanwhile. */
  private readonly local = new Map<number, { pending: boolean }>();

  constructor(
    private readonly store: PostgresStore,
    /** This replica's name (replica.ts). */
    readonly holder: string,
    options: LeaseOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 15_000;
  }

  /**
   * Takes the lease when it is free, expired or already ours; otherwise records the trigger as
   * pending for the holder and answers false.
   */
  async acquire(registryId: number): Promise<boolean> {
    for (;;) {
      const res = await this.store.pool.query(
        `INSERT INTO sync_leases (registry_id, holder, expires_at, pending)
         VALUES ($1, $2, ${NOW} + $3, false)
         ON CONFLICT (registry_id) DO UPDATE
           SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at,
               pending = CASE WHEN sync_leases.holder = EXCLUDED.holder THEN sync_leases.pending ELSE false END
           WHERE sync_leases.expires_at < ${NOW} OR sync_leases.holder = EXCLUDED.holder`,
        [registryId, this.holder, this.ttlMs],
      );
      if (res.rowCount === 1) return true;
      const noted = await this.store.pool.query(
        `UPDATE sync_leases SET pending = true WHERE registry_id = $1 AND expires_at >= ${NOW}`,
        [registryId],
      );
      if (noted.rowCount === 1) return false;
      // The lease was released or expired between the two statements: take it.
    }
  }

  /** Extends our lease; false when it is no longer ours (it expired and another replica took it). */
  async renew(registryId: number): Promise<boolean> {
    const res = await this.store.pool.query(
      `UPDATE sync_leases SET expires_at = ${NOW} + $3 WHERE registry_id = $1 AND holder = $2`,
      [registryId, this.holder, this.ttlMs],
    );
    return res.rowCount === 1;
  }

  /**
   * Ends our sync. When triggers came in meanwhile, the lease is kept (renewed, pending cleared)
   * and the answer is true: run one more sync, then release again.
   */
  async release(registryId: number): Promise<boolean> {
    const done = await this.store.pool.query(
      'DELETE FROM sync_leases WHERE registry_id = $1 AND holder = $2 AND NOT pending',
      [registryId, this.holder],
    );
    if (done.rowCount === 1) return false;
    // Pending (triggers only ever set it): keep the lease for one more round.
    const again = await this.store.pool.query(
      `UPDATE sync_leases SET pending = false, expires_at = ${NOW} + $3
       WHERE registry_id = $1 AND holder = $2 AND pending`,
      [registryId, this.holder, this.ttlMs],
    );
    return again.rowCount === 1;
  }

  /**
   * Runs `sync` under the lease with a heartbeat every third of the TTL, once per coalesced round
   * (triggers from this process while it runs count as pending too); answers the number of rounds
   * run here (0: a sync already running, here or on another replica, will cover this trigger).
   */
  async run(registryId: number, sync: () => Promise<void>): Promise<number> {
    const mine = this.local.get(registryId);
    if (mine) {
      mine.pending = true;
      return 0;
    }
    const state = { pending: false };
    this.local.set(registryId, state);
    const beat = setInterval(
      () => {
        void this.renew(registryId).catch(() => {});
      },
      Math.max(50, Math.floor(this.ttlMs / 3)),
    );
    beat.unref();
    let rounds = 0;
    try {
      if (!(await this.acquire(registryId))) return 0;
      try {
        for (;;) {
          state.pending = false;
          rounds++;
          await sync();
          if (state.pending) continue;
          if (!(await this.release(registryId))) break;
        }
      } catch (error) {
        await this.store.pool
          .query('DELETE FROM sync_leases WHERE registry_id = $1 AND holder = $2', [registryId, this.holder])
          .catch(() => {});
        throw error;
      }
    } finally {
      clearInterval(beat);
      this.local.delete(registryId);
    }
    return rounds;
  }
}

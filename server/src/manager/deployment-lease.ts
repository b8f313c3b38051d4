/**
 * The deployment lock across replicas sharing PostgreSQL (docs/manager.md, "Several replicas"): a
 * lease row per deployment (`deployment_leases`), taken with one statement when it is free, expired
 * or already ours, renewed by a heartbeat while the operation runs, and deleted at its end. It is
 * the pattern of the sync lease (server/src/store/postgres/sync-lease.ts): every statement its own short
 * transaction, no session-level lock (PgBouncer in transaction mode), times on the database's
 * clock. A replica killed mid-apply stops renewing; once its lease has expired, the next replica to
 * take it (for a change, or its sweep) marks the operation it was running interrupted.
 */
import type pg from 'pg';

const NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

export class DeploymentLeases {
  constructor(
    private readonly pool: pg.Pool,
    /** This replica's name (store/replica.ts). */
    readonly holder: string,
    readonly ttlMs: number,
  ) {}

  /** Takes a deployment's lease for `operation` when it is free, expired or ours; answers whether. */
  async acquire(deployment: string, operation: string): Promise<boolean> {
    const res = await this.pool.query(
      `INSERT INTO deployment_leases (deployment, holder, operation, expires_at)
       VALUES ($1, $2, $3, ${NOW} + $4)
       ON CONFLICT (deployment) DO UPDATE
         SET holder = EXCLUDED.holder, operation = EXCLUDED.operation, expires_at = EXCLUDED.expires_at
         WHERE deployment_leases.expires_at < ${NOW} OR deployment_leases.holder = EXCLUDED.holder`,
      [deployment, this.holder, operation, this.ttlMs],
    );
    return res.rowCount === 1;
  }

  /** Extends our lease; false when it is no longer ours. */
  async renew(deployment: string): Promise<boolean> {
    const res = await this.pool.query(
      `UPDATE deployment_leases SET expires_at = ${NOW} + $3 WHERE deployment = $1 AND holder = $2`,
      [deployment, this.holder, this.ttlMs],
    );
    return res.rowCount === 1;
  }

  async release(deployment: string): Promise<void> {
    await this.pool.query('DELETE FROM deployment_leases WHERE deployment = $1 AND holder = $2', [
      deployment,
      this.holder,
    ]);
  }

  /** Renews the heartbeat of this replica's unfinished operations (`operations.heartbeat_at`). */
  async beat(): Promise<void> {
    await this.pool.query(
      `UPDATE operations SET heartbeat_at = ${NOW}
       WHERE replica = $1 AND status IN ('pending', 'running')`,
      [this.holder],
    );
  }

  /**
   * Operations still `pending` on another replica that has not renewed their heartbeat for three
   * lease lifetimes: accepted by a replica that died before running them.
   */
  async abandoned(): Promise<string[]> {
    const res = await this.pool.query<{ id: string }>(
      `SELECT id FROM operations
       WHERE status = 'pending' AND replica IS NOT NULL AND replica <> $1
         AND coalesce(heartbeat_at, created_at) < ${NOW} - 3 * $2::bigint`,
      [this.holder, this.ttlMs],
    );
    return res.rows.map((r) => r.id);
  }

  /** Deployments with an operation `running` and no live lease: their replica stopped. */
  async orphaned(): Promise<string[]> {
    const res = await this.pool.query<{ deployment: string }>(
      `SELECT DISTINCT o.deployment FROM operations o
       WHERE o.status = 'running' AND NOT EXISTS (
         SELECT 1 FROM deployment_leases l WHERE l.deployment = o.deployment AND l.expires_at >= ${NOW})`,
    );
    return res.rows.map((r) => r.deployment);
  }

  /**
   * Runs `fn` under the deployment's lease, waiting (polling every `pollMs`) while another replica
   * holds it, with a heartbeat every third of the TTL; the lease is released at the end.
   */
  async run<T>(
    deployment: string,
    operation: string,
    fn: () => Promise<T>,
    pollMs = Math.min(250, Math.max(20, Math.floor(this.ttlMs / 10))),
  ): Promise<T> {
    while (!(await this.acquire(deployment, operation))) {
      await new Promise((r) => setTimeout(r, pollMs));
    }
    const beat = setInterval(
      () => {
        void this.renew(deployment).catch(() => {});
      },
      Math.max(50, Math.floor(this.ttlMs / 3)),
    );
    beat.unref();
    try {
      return await fn();
    } finally {
      clearInterval(beat);
      await this.release(deployment).catch(() => {});
    }
  }
}

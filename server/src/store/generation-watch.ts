/**
 * Cross-replica cache invalidation (docs/server.md, "Several replicas"): every index swap bumps its
 * registry's `generation` in the same transaction (swap-index-pg.ts); each replica reads
 * `SELECT id, generation FROM registries` every `intervalMs` (one small query per replica, never
 * one per request) and reports the registries whose generation changed, appeared or went away, so
 * the in-memory answers for them are dropped well within a second of the swap's COMMIT. A poll
 * rather than LISTEN: it also works behind PgBouncer in transaction mode.
 */
import type { PostgresStore } from './postgres.js';

export class GenerationWatch {
  private known: Map<number, number> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly store: PostgresStore,
    private readonly onChange: (registryIds: number[]) => void,
    private readonly intervalMs = 200,
  ) {}

  /** Reads the generations now and reports what changed since the last read. */
  async poll(): Promise<number[]> {
    const rows = (
      await this.store.pool.query<{ id: number; generation: number }>('SELECT id, generation FROM registries')
    ).rows;
    const next = new Map(rows.map((r) => [r.id, r.generation]));
    const changed: number[] = [];
    if (this.known) {
      for (const [id, generation] of next) if (this.known.get(id) !== generation) changed.push(id);
      for (const id of this.known.keys()) if (!next.has(id)) changed.push(id);
    }
    this.known = next;
    if (changed.length > 0) this.onChange(changed);
    return changed;
  }

  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => {
      if (this.polling) return;
      this.polling = true;
      // A failed poll (database away) is retried at the next tick; it never takes the process down.
      this.poll()
        .catch(() => {})
        .finally(() => {
          this.polling = false;
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * Cache invalidation across processes (docs/server.md, "Several replicas" and "Store"): every
 * index swap and every added version bumps its registry's `generation` in the same transaction
 * (sqlite/swap-index.ts, postgres/swap-index.ts, add-versions.ts, postgres/add-versions.ts); each process reads
 * every registry's id and generation every `intervalMs` (one small query per process, never one
 * per request) and reports the registries whose generation changed, appeared or went away, so
 * the in-memory answers for them are dropped, and the search's rows for the new generation
 * loaded, well within a second of the COMMIT. The same watch on both databases: on PostgreSQL it
 * sees the other replicas' swaps, on SQLite what another process (`dm-registry bundle import`,
 * `dm-registry index`) committed to the same file. A poll rather than LISTEN: it also works
 * behind PgBouncer in transaction mode, and SQLite has nothing to listen to.
 */
import type { RegistryGeneration } from './contract.js';
/**
 * Cache invalidation across processes (docs/server.md, "Several replicas" and "Store"): every
 * index swap and every added version bumps its registry's `generation` in the same transaction
 * (sqlite/swap-index.ts, postgres/swap-index.ts, add-versions.ts, postgres/add-versions.ts); each process reads
 * every registry's id and generation every `intervalMs` (one small query per process, never one
 * per request) and reports the registries whose generation changed, appeared or went away, so
 * the in-memory answers for them are dropped, and the search's rows for the new generation
 * loaded, well within a second of the COMMIT. The same watch on both databases: on PostgreSQL it
 * sees the other replicas' swaps, on SQLite what another process (`dm-registry bundle import`,
 * `dm-registry index`) committed to the same file. A poll rather than LISTEN: it also works
 * behind PgBouncer in transaction mode, and SQLite has nothing to listen to.
 */

export class GenerationWatch {
  private known: Map<number, number> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly read: () => Promise<RegistryGeneration[]>,
    /** The registries that changed, and every registry's generation as just read. */
    private readonly onChange: (registryIds: number[], generations: RegistryGeneration[]) => void,
    private readonly intervalMs = 200,
  ) {}

  /** Reads the generations now and reports what changed since the last read. */
  async poll(): Promise<number[]> {
    const rows = await this.read();
    const next = new Map(rows.map((r) => [r.id, r.generation]));
    const changed: number[] = [];
    if (this.known) {
      for (const [id, generation] of next) if (this.known.get(id) !== generation) changed.push(id);
      for (const id of this.known.keys()) if (!next.has(id)) changed.push(id);
    }
    this.known = next;
    if (changed.length > 0) this.onChange(changed, rows);
    return changed;
  }

  /**
   * Polls on a timer, after reading the generations once now (the baseline; `onStart` is given
   * them). A failed first read is reported (rejects) but the timer runs on: the watch retries,
   * and its first read that succeeds reports every registry.
   */
  async start(onStart?: (generations: RegistryGeneration[]) => void): Promise<void> {
    this.timer = setInterval(() => {
      if (this.polling) return;
      this.polling = true;
      // A failed poll (database away, SQLite busy) is retried at the next tick; it never takes the
      // process down.
      this.poll()
        .catch(() => {})
        .finally(() => {
          this.polling = false;
        });
    }, this.intervalMs);
    this.timer.unref();
    this.polling = true;
    try {
      await this.poll();
    } catch (error) {
      // No baseline: the first poll that succeeds reports every registry (as appeared).
      this.known = new Map();
      throw error;
    } finally {
      this.polling = false;
    }
    onStart?.([...(this.known ?? [])].map(([id, generation]) => ({ id, generation })));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

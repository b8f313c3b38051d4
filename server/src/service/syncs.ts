/**
 * Syncs (docs/server.md "Indexing"): one at a time per registry (and, on PostgreSQL, across
 * replicas under a lease), the scheduler, the revalidation of what a mirror holds, and the
 * search's rows loaded after a swap.
 */
import type { Checksums } from '../checksums.js';
import {
  failedOutcome,
  recoverInterruptedSyncs,
  type SyncOutcome,
  SyncQueue,
  type SyncTrigger,
  syncRegistry,
} from '../indexer/sync-registry.js';
import type { SourceType } from '../source/source-spec.js';
import type { RegistryLeases } from '../store/contract.js';
import { registryLeasesOf } from '../store/open-store.js';
import { replicaName } from '../store/replica.js';
import { PRIVATE_LABEL, type ServiceContext, ServicePart } from './context.js';
import type { MirrorCoordination } from './mirror-coordination.js';
import type { Registries } from './registries.js';

export class Syncs extends ServicePart {
  readonly queue = new SyncQueue();
  /** One sync per registry across replicas (PostgreSQL only; store/postgres/sync-lease.ts). */
  private readonly leases: RegistryLeases | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    ctx: ServiceContext,
    private readonly parts: {
      checksums: Checksums;
      registries: Registries;
      mirroring: MirrorCoordination;
    },
  ) {
    super(ctx);
    this.leases = registryLeasesOf(ctx.deps.store, replicaName(), {
      ttlMs: ctx.deps.syncLeaseTtlMs ?? 15_000,
    });
    this.recovered = recoverInterruptedSyncs(this.data, this.clock());
    // Nothing awaits it before the first sync; a failure is the first sync's to report.
    this.recovered.catch(() => {});
  }

  /** Loads the search's rows of every registry's current generation. Never rejects. */
  async warmSearch(): Promise<void> {
    try {
      await this.data.reads.warm(await this.data.registries.generations());
    } catch (error) {
      this.log('warn', 'search rows not loaded', { error: String(error) });
    }
  }

  /** Syncs a stopped process left `running`, marked `interrupted` at construction. */
  readonly recovered: Promise<number>;

  /**
   * Runs (or joins) a sync of a registry; serialised per registry. Never rejects: whatever fails
   * (the registry deleted meanwhile, a credential that cannot be decrypted, the source, the
   * swap) ends as a `failed` outcome, in the sync status and in a log line, so a sync started in
   * the background (`void service.sync(…)`) cannot take the process down.
   */
  sync(
    id: number,
    trigger: SyncTrigger,
    hooks: { beforeSwap?: () => Promise<void> | void; midSwap?: () => void; afterSwap?: () => void } = {},
  ): Promise<SyncOutcome> {
    return this.queue.run(id, async () => {
      const leases = this.leases;
      if (!leases) return this.syncOnce(id, trigger, hooks);
      // Across replicas (PostgreSQL): under the registry's lease, one sync at a time, triggers
      // arriving meanwhile coalesced into one more round (store/postgres/sync-lease.ts).
      let outcome: SyncOutcome | undefined;
      try {
        await leases.run(id, async () => {
          // Holding the lease, no live process is syncing this registry: a `running` row is dead.
          await this.data.syncs.interruptRunning(id, this.clock());
          outcome = await this.syncOnce(id, trigger, hooks);
        });
      } catch (error) {
        const exists = await this.data.registries.byId(id).then(
          (row) => row !== undefined,
          () => true,
        );
        if (exists) {
          outcome = failedOutcome(id, error);
          this.log('warn', 'sync lease failed', { registryId: id, error: String(error) });
        } else {
          // Deleted meanwhile (its lease row cannot refer to it): answered as on SQLite, where
          // the sync itself finds no registry (REGISTRY_NOT_FOUND), writes nothing and logs it.
          outcome = await this.syncOnce(id, trigger, hooks);
        }
      }
      if (!outcome) {
        this.log('info', 'sync coalesced: another replica is syncing the registry', {
          registryId: id,
          trigger,
        });
        return { ...failedOutcome(id, null), status: 'coalesced' };
      }
      return outcome;
    });
  }

  private async syncOnce(
    id: number,
    trigger: SyncTrigger,
    hooks: { beforeSwap?: () => Promise<void> | void; midSwap?: () => void; afterSwap?: () => void },
  ): Promise<SyncOutcome> {
    let name = String(id);
    let visibility = 'private';
    let outcome: SyncOutcome;
    try {
      await this.recovered.catch(() => 0);
      outcome = await syncRegistry(
        this.data,
        id,
        async (row) => {
          name = row.name;
          visibility = row.visibility;
          if (row.sourceType === 'upstream') return this.parts.mirroring.mirroredSource(row);
          return this.deps.sources({
            registryId: row.id,
            type: row.sourceType as SourceType,
            location: row.source,
            branch: row.branch,
            path: row.path,
            credential: await this.parts.registries.credentialFor(row),
          });
        },
        {
          trigger,
          clock: this.clock,
          ...(this.deps.syncDeadlineMs ? { deadlineMs: this.deps.syncDeadlineMs } : {}),
          ...(this.deps.indexPool ? { indexPool: this.deps.indexPool } : {}),
          onSwap: () => this.catalog.invalidate(),
          signer: this.parts.checksums.signer,
          onQuarantine: (events) =>
            this.parts.checksums.quarantined(events, visibility === 'public' ? name : PRIVATE_LABEL),
          ...(hooks.beforeSwap ? { beforeSwap: hooks.beforeSwap } : {}),
          ...(hooks.midSwap ? { midSwap: hooks.midSwap } : {}),
          ...(hooks.afterSwap ? { afterSwap: hooks.afterSwap } : {}),
        },
      );
      // The search's rows of the new generation are loaded before the sync is reported done
      // (searches meanwhile are answered from the database): the first search after it waits for
      // no load (docs/server.md, "Store").
      if (outcome.status === 'succeeded') await this.warmSearch();
    } catch (error) {
      // syncRegistry records its own failures; this is the database failing under it.
      outcome = failedOutcome(id, error);
    }
    this.log(outcome.status === 'failed' ? 'warn' : 'info', 'sync finished', {
      registry: name,
      trigger,
      status: outcome.status,
      commit: outcome.commit,
      apiRequests: outcome.apiRequests,
      rateLimitRemaining: outcome.rateLimitRemaining,
      ...(outcome.error ? { error: `${outcome.error.code}: ${outcome.error.message}` } : {}),
    });
    try {
      this.deps.onSync?.(visibility === 'public' ? name : PRIVATE_LABEL, outcome);
    } catch (error) {
      this.log('error', 'sync bookkeeping failed', { registry: name, error: String(error) });
    }
    return outcome;
  }

  /**
   * Revalidates the versions a mirror holds of a registry it only pulls through (source type
   * `upstream`, no interval): one sync of the registry, limited to what it holds, which takes the
   * upstream's acceptances, quarantines, reverts and removals the way an eager mirror's sync does
   * (docs/mirroring.md). Skipped for other registries, while the upstream is known down, and when
   * the registry was synced within the upstream TTL (by another replica, say). Never throws.
   */
  async revalidateHeld(name: string): Promise<void> {
    if (this.stopping || !this.parts.mirroring.mirror) return;
    try {
      const row = await this.data.registries.byName(name);
      if (row?.sourceType !== 'upstream' || row.intervalSeconds !== null) return;
      if (this.parts.mirroring.mirror.upstreamFor(row.source)?.isOpen() !== false) return;
      if (row.lastSyncAt !== null && this.clock() - row.lastSyncAt < this.parts.mirroring.mirror.ttlMs)
        return;
      if (this.queue.isRunning(row.id)) return;
      await this.sync(row.id, 'revalidate');
    } catch (error) {
      this.log('error', 'revalidating held versions failed', { registry: name, error: String(error) });
    }
  }

  /** Every `tickMs`, registries whose interval has passed are synced. */
  startSchedule(tickMs: number): void {
    this.timer = setInterval(() => {
      if (this.stopping) return;
      void this.data.registries.list().then(
        (rows) => {
          const now = this.clock();
          for (const row of rows) {
            if (!row.intervalSeconds || this.queue.isRunning(row.id)) continue;
            if (row.lastSyncAt === null || now - row.lastSyncAt >= row.intervalSeconds * 1000) {
              void this.sync(row.id, 'schedule');
            }
          }
        },
        (error: unknown) =>
          this.log('error', 'scheduler could not read the registries', { error: String(error) }),
      );
    }, tickMs);
    this.timer.unref();
  }

  /** Stops scheduling; syncs in flight go on (`queue.idle()` waits for them). */
  halt(): void {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
  }
}

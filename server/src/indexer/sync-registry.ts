/**
 * One sync of one registry (spec/server.md §1): open the source (a conditional request first),
 * build the index, swap it in with one transaction, record the outcome, the API requests it cost
 * and the rate-limit budget left. Syncs of one registry are serialised (and coalesced: a request
 * while one runs queues at most one more); a failure leaves the serving index untouched.
 */
import { eq, sql } from 'drizzle-orm';
import { DmError } from '../../../client/src/error.js';
import { createMeter, type Source } from '../../../client/src/source/source.js';
import type { Store } from '../store/db.js';
import { replicaName } from '../store/replica.js';
import { files, registries, syncs } from '../store/schema.js';
import { swapIndex } from '../store/swap-index.js';
import { buildIndex, type KnownContent } from './build-index.js';

/** Sync history kept per registry. */
export const KEEP_SYNCS = 100;

export type SyncTrigger = 'start' | 'schedule' | 'manual' | 'webhook' | 'cli';

export interface SyncOutcome {
  syncId: number;
  registryId: number;
  status: 'succeeded' | 'unchanged' | 'failed';
  commit: string | null;
  apiRequests: number;
  rateLimitRemaining: number | null;
  templateCount?: number;
  versionCount?: number;
  findingCount?: number;
  error?: { code: string; message: string };
}

export interface SyncOptions {
  trigger: SyncTrigger;
  clock?: () => number;
  signal?: AbortSignal;
  /** Called after a new index is committed (caches drop what they hold for the registry). */
  onSwap?: (registryId: number) => void;
  /** Test hook: runs after the index is built, before the swap transaction. */
  beforeSwap?: () => Promise<void> | void;
  /** Test hook: runs inside the swap transaction, halfway (to kill a process mid-swap). */
  midSwap?: () => void;
}

function knownContent(store: Store): KnownContent {
  const byGit = store.sqlite.prepare('SELECT sha256 FROM files WHERE git_sha = ?').pluck();
  const content = store.sqlite.prepare('SELECT content FROM files WHERE sha256 = ?').pluck();
  return {
    sha256ForGitSha: (gitSha) => (byGit.get(gitSha) as string | undefined) ?? undefined,
    content: (sha) => (content.get(sha) as Buffer | undefined) ?? undefined,
  };
}

/** Marks syncs a killed process left `running` as `interrupted` (their transaction never committed). */
export function recoverInterruptedSyncs(store: Store, now: number): number {
  const result = store.db
    .update(syncs)
    .set({ status: 'interrupted', finishedAt: now, error: 'the server stopped during the sync' })
    .where(eq(syncs.status, 'running'))
    .run();
  store.db
    .update(registries)
    .set({ lastSyncStatus: 'interrupted' })
    .where(eq(registries.lastSyncStatus, 'running'))
    .run();
  return result.changes;
}

export async function syncRegistry(
  store: Store,
  registryId: number,
  source: Source,
  options: SyncOptions,
): Promise<SyncOutcome> {
  const now = options.clock ?? Date.now;
  const registry = store.db.select().from(registries).where(eq(registries.id, registryId)).get();
  if (!registry)
    throw new DmError('REGISTRY_NOT_FOUND', `no registry with id ${registryId}`, { category: 'not-found' });
  const started = now();
  const syncRow = store.db
    .insert(syncs)
    .values({
      registryId,
      trigger: options.trigger,
      status: 'running',
      startedAt: started,
      replica: replicaName(),
    })
    .returning({ id: syncs.id })
    .get();
  store.db.update(registries).set({ lastSyncStatus: 'running' }).where(eq(registries.id, registryId)).run();
  const meter = createMeter();
  const finish = (values: Partial<typeof syncs.$inferInsert>) => {
    store.db
      .update(syncs)
      .set({
        ...values,
        finishedAt: now(),
        apiRequests: meter.requests,
        rateLimitRemaining: meter.rateLimitRemaining,
      })
      .where(eq(syncs.id, syncRow.id))
      .run();
    // The history keeps the last KEEP_SYNCS syncs of each registry.
    store.sqlite
      .prepare(
        `DELETE FROM syncs WHERE registry_id = ? AND id NOT IN
           (SELECT id FROM syncs WHERE registry_id = ? ORDER BY id DESC LIMIT ${KEEP_SYNCS})`,
      )
      .run(registryId, registryId);
  };
  try {
    const opened = await source.open({
      etag: registry.etag,
      commit: registry.commit,
      meter,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (opened.status === 'unchanged') {
      finish({ status: 'unchanged', commit: opened.commit });
      store.db
        .update(registries)
        .set({ lastSyncAt: now(), lastSyncStatus: 'unchanged', lastSyncError: null })
        .where(eq(registries.id, registryId))
        .run();
      return {
        syncId: syncRow.id,
        registryId,
        status: 'unchanged',
        commit: opened.commit,
        apiRequests: meter.requests,
        rateLimitRemaining: meter.rateLimitRemaining,
      };
    }
    const built = await buildIndex(opened, knownContent(store));
    await options.beforeSwap?.();
    const swapped = swapIndex(store, built, {
      registryId,
      commit: opened.commit,
      etag: opened.etag ?? null,
      now: now(),
      ...(options.midSwap ? { midSwap: options.midSwap } : {}),
    });
    finish({ status: 'succeeded', commit: opened.commit });
    store.db
      .update(registries)
      .set({ lastSyncAt: now(), lastSyncStatus: 'succeeded', lastSyncError: null })
      .where(eq(registries.id, registryId))
      .run();
    options.onSwap?.(registryId);
    return {
      syncId: syncRow.id,
      registryId,
      status: 'succeeded',
      commit: opened.commit,
      apiRequests: meter.requests,
      rateLimitRemaining: meter.rateLimitRemaining,
      templateCount: swapped.templateCount,
      versionCount: swapped.versionCount,
      findingCount: swapped.findingCount,
    };
  } catch (error) {
    const code = error instanceof DmError ? error.code : 'SYNC_FAILED';
    const message = error instanceof Error ? error.message : String(error);
    finish({ status: 'failed', error: `${code}: ${message}` });
    store.db
      .update(registries)
      .set({ lastSyncAt: now(), lastSyncStatus: 'failed', lastSyncError: `${code}: ${message}` })
      .where(eq(registries.id, registryId))
      .run();
    return {
      syncId: syncRow.id,
      registryId,
      status: 'failed',
      commit: null,
      apiRequests: meter.requests,
      rateLimitRemaining: meter.rateLimitRemaining,
      error: { code, message },
    };
  }
}

/** Serialises syncs per registry; a request while one runs coalesces into one follow-up sync. */
export class SyncQueue {
  private readonly running = new Map<number, Promise<SyncOutcome>>();
  private readonly pending = new Map<number, Promise<SyncOutcome>>();

  run(registryId: number, start: () => Promise<SyncOutcome>): Promise<SyncOutcome> {
    const queued = this.pending.get(registryId);
    if (queued) return queued;
    const current = this.running.get(registryId);
    if (!current) return this.launch(registryId, start);
    const next = current
      .catch(() => undefined)
      .then(() => {
        this.pending.delete(registryId);
        return this.launch(registryId, start);
      });
    this.pending.set(registryId, next);
    return next;
  }

  private launch(registryId: number, start: () => Promise<SyncOutcome>): Promise<SyncOutcome> {
    const promise = start().finally(() => {
      if (this.running.get(registryId) === promise) this.running.delete(registryId);
    });
    this.running.set(registryId, promise);
    return promise;
  }

  /** Waits for every sync in flight (graceful shutdown). */
  async idle(): Promise<void> {
    while (this.running.size || this.pending.size) {
      await Promise.allSettled([...this.running.values(), ...this.pending.values()]);
    }
  }

  isRunning(registryId: number): boolean {
    return this.running.has(registryId);
  }
}

/** Counts content rows (for metrics and tests). */
export function countFiles(store: Store): number {
  return store.db.select({ n: sql<number>`count(*)` }).from(files).get()?.n ?? 0;
}

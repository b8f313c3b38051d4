/**
 * One sync of one registry (docs/server.md "Indexing"): open the source (a conditional request first),
 * build the index, swap it in with one transaction, record the outcome, the API requests it cost
 * and the rate-limit budget left. Syncs of one registry are serialised (and coalesced: a request
 * while one runs queues at most one more); a failure leaves the serving index untouched.
 */
import { DmError } from '../../../client/src/error.js';
import type { LogSigner } from '../../../client/src/integrity/index.js';
import {
  checkSourceSize,
  createMeter,
  type OpenOptions,
  type Source,
} from '../../../client/src/source/index.js';
import type { QuarantineEvent, RegistryRow, ServiceStore, SyncValues } from '../store/contract.js';
import { type StoreHandle, serviceStoreOf } from '../store/open-store.js';
import { replicaName } from '../store/replica.js';
import type { IndexBuildPool } from './build-index-pool.js';
import { buildIndex } from './build-index-pool.js';

/** Sync history kept per registry. */
export const KEEP_SYNCS = 100;

/**
 * What started a sync; `revalidate`: a mirror revalidating the versions it holds of a registry it
 * only pulls through (docs/mirroring.md).
 */
export type SyncTrigger = 'start' | 'schedule' | 'manual' | 'webhook' | 'cli' | 'revalidate';

export interface SyncOutcome {
  /** The sync's row in the history; null when the registry was gone before the sync began. */
  syncId: number | null;
  registryId: number;
  /**
   * `coalesced`: another replica holds the registry's sync lease (PostgreSQL); it runs one more
   * sync when it finishes, which covers this trigger (docs/server.md, "Several replicas").
   */
  status: 'succeeded' | 'unchanged' | 'failed' | 'coalesced';
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
  /** The sync fails with SYNC_TIMEOUT after this long, releasing the registry (default 10 min). */
  deadlineMs?: number;
  /** The worker threads that build the index (default: the process's shared pool). */
  indexPool?: IndexBuildPool;
  /** Called after a new index is committed (caches drop what they hold for the registry). */
  onSwap?: (registryId: number) => void;
  /** Test hook: runs after the index is built, before the swap transaction. */
  beforeSwap?: () => Promise<void> | void;
  /** Test hook: runs inside the swap transaction, halfway (to kill a process mid-swap). */
  midSwap?: () => void;
  /** Test hook: runs right after the swap transaction commits (to kill a process there). */
  afterSwap?: () => void;
  /** Signs the checksum log's checkpoints (docs/integrity-store.md §2). */
  signer?: LogSigner;
  /** Called after the swap committed with the versions it quarantined (must not throw). */
  onQuarantine?: (events: QuarantineEvent[]) => void;
}

/**
 * A source that adds versions to the stored index instead of replacing it: a registry mirrored
 * from an upstream registry server (docs/mirroring.md), whose versions deleted upstream keep being
 * served. It stores what it adds itself (one transaction per version) and says what it did.
 */
export interface IncrementalSource {
  readonly description: string;
  update(options: OpenOptions): Promise<{
    status: 'succeeded' | 'unchanged';
    commit: string | null;
    etag: string | null;
    templateCount?: number;
    versionCount?: number;
  }>;
}

/** Default overall deadline of one sync. */
export const SYNC_DEADLINE_MS = 10 * 60 * 1000;

/**
 * Races `work` with the sync's deadline: past it, the sync fails at once (its registry is released
 * for the next sync) and the signal tells the source to stop what it still does.
 */
function withDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Marks syncs a killed process left `running` as `interrupted` (their transaction never committed). */
export function recoverInterruptedSyncs(store: ServiceStore | StoreHandle, now: number): Promise<number> {
  return queriesOf(store).syncs.recoverInterrupted(now);
}

/**
 * Runs one sync. It never rejects: every failure, including one building the source (a credential
 * that cannot be decrypted) and a registry deleted before the sync began, is a `failed` outcome,
 * recorded in the sync history when the registry still exists (docs/server.md, "Background work").
 */
export async function syncRegistry(
  storeOrHandle: ServiceStore | StoreHandle,
  registryId: number,
  source:
    | Source
    | ((registry: RegistryRow) => Source | IncrementalSource | Promise<Source | IncrementalSource>),
  options: SyncOptions,
): Promise<SyncOutcome> {
  const now = options.clock ?? Date.now;
  const store = queriesOf(storeOrHandle);
  const registry = await store.registries.byId(registryId);
  if (!registry) {
    return failedOutcome(
      registryId,
      new DmError('REGISTRY_NOT_FOUND', `no registry with id ${registryId} (deleted?)`, {
        category: 'not-found',
      }),
    );
  }
  const started = now();
  const syncRow = { id: await store.syncs.start(registryId, options.trigger, started, replicaName()) };
  const meter = createMeter();
  const deadlineMs = options.deadlineMs ?? SYNC_DEADLINE_MS;
  const deadline = new AbortController();
  const timer = setTimeout(
    () =>
      deadline.abort(
        new DmError('SYNC_TIMEOUT', `the sync did not finish within ${Math.round(deadlineMs / 1000)} s`, {
          category: 'unreachable',
        }),
      ),
    deadlineMs,
  );
  timer.unref();
  const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
  // The history keeps the last KEEP_SYNCS syncs of each registry.
  const ended = (values: SyncValues): SyncValues => ({
    ...values,
    finishedAt: now(),
    apiRequests: meter.requests,
    rateLimitRemaining: meter.rateLimitRemaining,
  });
  const finish = (values: SyncValues) =>
    store.syncs.finish(syncRow.id, registryId, ended(values), KEEP_SYNCS);
  try {
    const opener = typeof source === 'function' ? await source(registry) : source;
    if ('update' in opener) {
      const updated = await withDeadline(
        opener.update({ etag: registry.etag, commit: registry.commit, meter, signal }),
        signal,
      );
      await finish({ status: updated.status, commit: updated.commit });
      await store.syncs.setRegistryState(registryId, {
        lastSyncAt: now(),
        lastSyncStatus: updated.status,
        lastSyncError: null,
        etag: updated.etag,
        ...(updated.commit === null ? {} : { commit: updated.commit }),
      });
      options.onSwap?.(registryId);
      return {
        syncId: syncRow.id,
        registryId,
        status: updated.status,
        commit: updated.commit,
        ...(updated.templateCount === undefined ? {} : { templateCount: updated.templateCount }),
        ...(updated.versionCount === undefined ? {} : { versionCount: updated.versionCount }),
        apiRequests: meter.requests,
        rateLimitRemaining: meter.rateLimitRemaining,
      };
    }
    const opened = await withDeadline(
      opener.open({
        etag: registry.etag,
        commit: registry.commit,
        meter,
        signal,
      }),
      signal,
    );
    if (opened.status === 'unchanged') {
      await finish({ status: 'unchanged', commit: opened.commit });
      await store.syncs.setRegistryState(registryId, {
        lastSyncAt: now(),
        lastSyncStatus: 'unchanged',
        lastSyncError: null,
      });
      return {
        syncId: syncRow.id,
        registryId,
        status: 'unchanged',
        commit: opened.commit,
        apiRequests: meter.requests,
        rateLimitRemaining: meter.rateLimitRemaining,
      };
    }
    // The bound on what any source may hold, before its content is read (docs/server.md).
    checkSourceSize(opened.entries, opener.description);
    const built = await withDeadline(
      buildIndex(opened, store.knownContent(), {
        signal,
        previous: await store.syncs.versionTrees(registryId),
        ...(options.indexPool ? { pool: options.indexPool } : {}),
      }),
      signal,
    );
    await options.beforeSwap?.();
    if (signal.aborted) throw signal.reason;
    // The outcome is recorded inside the swap transaction: a process killed right after the
    // commit leaves the new index and `succeeded` together, never the new index and `interrupted`.
    const swapped = await store.swap(built, {
      registryId,
      commit: opened.commit,
      etag: opened.etag ?? null,
      now: now(),
      signer: options.signer,
      syncId: syncRow.id,
      ...(options.midSwap ? { midSwap: options.midSwap } : {}),
      record: {
        syncId: syncRow.id,
        registryId,
        sync: ended({ status: 'succeeded', commit: opened.commit }),
        state: { lastSyncAt: now(), lastSyncStatus: 'succeeded', lastSyncError: null },
        keep: KEEP_SYNCS,
      },
    });
    options.afterSwap?.();
    options.onSwap?.(registryId);
    if (swapped.quarantined.length > 0) options.onQuarantine?.(swapped.quarantined);
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
    try {
      await finish({ status: 'failed', error: `${code}: ${message}` });
      await store.syncs.setRegistryState(registryId, {
        lastSyncAt: now(),
        lastSyncStatus: 'failed',
        lastSyncError: `${code}: ${message}`,
      });
    } catch {
      // The database refused the record (gone, or the registry with it): the outcome still says it.
    }
    return {
      syncId: syncRow.id,
      registryId,
      status: 'failed',
      commit: null,
      apiRequests: meter.requests,
      rateLimitRemaining: meter.rateLimitRemaining,
      error: { code, message },
    };
  } finally {
    clearTimeout(timer);
  }
}

/** A sync that failed before it had a row in the history (`error` null: nothing to say). */
export function failedOutcome(registryId: number, error: unknown): SyncOutcome {
  return {
    syncId: null,
    registryId,
    status: 'failed',
    commit: null,
    apiRequests: 0,
    rateLimitRemaining: null,
    ...(error === null
      ? {}
      : {
          error: {
            code: error instanceof DmError ? error.code : 'SYNC_FAILED',
            message: error instanceof Error ? error.message : String(error),
          },
        }),
  };
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
export function countFiles(store: ServiceStore | StoreHandle): Promise<number> {
  return queriesOf(store).syncs.countFiles();
}

function queriesOf(store: ServiceStore | StoreHandle): ServiceStore {
  return 'handle' in store ? store : serviceStoreOf(store);
}

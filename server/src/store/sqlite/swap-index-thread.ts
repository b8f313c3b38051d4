// SQLite only: better-sqlite3 blocks its thread, so a big swap runs in a worker thread on its own connection to the file.
/**
 * The index swap off the request thread (docs/server.md, "Indexing"): `swapIndex` (sqlite/swap-index.ts),
 * the very same code, runs in a worker thread on its own connection to the database file, so the
 * request thread keeps answering from the old index (WAL readers) while a big registry's rows are
 * written. The main thread only hands the built index over, in slices that yield to the event loop
 * (rows as structured clones of 500 versions at a time, new content packed into transferable
 * buffers), and learns the result once the transaction has committed.
 *
 * One worker per open store (so per database file), kept with its connection between swaps: a
 * worker's start (loading the store modules, opening the file) cost about a second per sync. It
 * never keeps the process alive when idle, ends when the store is closed, and one that dies (out of
 * memory, killed) fails only the swap in flight with INDEX_SWAP_FAILED: its transaction never
 * committed, so the old index keeps serving, and the next swap starts another. A store without a
 * file (in memory) swaps on the calling thread.
 */
import { Worker } from 'node:worker_threads';
import { DmError } from '../../../../client/src/error.js';
import type { Finding } from '../../../../client/src/registry/index.js';
import type { BuiltIndex, IndexedFile, IndexedTemplate } from '../../indexer/build-index.js';
import {
  fromWireError,
  type PackedBuffers,
  packBuffers,
  type WireError,
} from '../../indexer/build-index-pool.js';
import type { SwapMeta, SwapResult } from '../contract.js';
import { nextTurn } from '../slices.js';
import type { Store } from './open.js';
import { swapIndex } from './swap-index.js';

/** A file as sent to the swap worker: its new content travels packed, by sha256. */
export type SwapWireFile = Omit<IndexedFile, 'content'> & { fresh?: true };
export type SwapWireTemplate = Omit<IndexedTemplate, 'versions'> & {
  versions: (Omit<IndexedTemplate['versions'][number], 'files'> & { files: SwapWireFile[] })[];
};
/** What the swap worker receives besides the rows: the swap's metadata without its hooks. */
export type SwapWireMeta = Omit<SwapMeta, 'midSwap'>;

/** Main thread → swap worker. */
export type ToSwapWorker =
  /** A swap's hand-over starts: what an unfinished earlier one left is dropped. */
  | { type: 'begin' }
  | { type: 'templates'; templates: SwapWireTemplate[]; packed: PackedBuffers }
  | {
      type: 'swap';
      findings: Finding[];
      registryYaml: SwapWireFile | null;
      packed: PackedBuffers;
      meta: SwapWireMeta;
      /** Present when the caller has a midSwap hook: the worker waits on it while the hook runs. */
      midSwap: SharedArrayBuffer | null;
    };

/** Swap worker → main thread. */
export type FromSwapWorker =
  | { type: 'mid-swap' }
  | { type: 'done'; result: SwapResult }
  | { type: 'failed'; error: WireError };

/** Versions per message to the worker. */
const BATCH_VERSIONS = 500;

/**
 * The swap in progress on each database file, if any. While a swap worker holds SQLite's write
 * lock, a write on the request thread would wait in better-sqlite3's busy timeout, blocking the
 * event loop, then fail with SQLITE_BUSY: writes on this thread (sqlite/service-store.ts) and the
 * next swap wait here first instead (docs/server.md, "Indexing").
 */
const swapping = new Map<string, Promise<unknown>>();

/** Settles once no index swap is writing to `store`'s file (at once when none is). */
export async function swapsSettled(store: Store): Promise<void> {
  for (let current = swapping.get(store.file); current; current = swapping.get(store.file)) {
    await current.catch(() => {});
  }
}

function wire(f: IndexedFile, fresh: Map<string, Uint8Array>): SwapWireFile {
  const { content, ...rest } = f;
  if (!content) return rest;
  fresh.set(f.sha256, content);
  return { ...rest, fresh: true };
}

/**
 * Swaps `built` in from a worker thread (see above); settles once the transaction has committed
 * (or failed, leaving the old index). Hooks (`midSwap`) run on the calling thread.
 */
export async function swapIndexOffThread(
  store: Store,
  built: BuiltIndex,
  meta: SwapMeta,
): Promise<SwapResult> {
  if (!store.file || store.file === ':memory:') return swapIndex(store, built, meta);
  // Check and claim with no await between them: one swap at a time per file.
  for (let current = swapping.get(store.file); current; current = swapping.get(store.file)) {
    await current.catch(() => {});
  }
  const running = swapWorkerOf(store).swap(built, meta);
  swapping.set(store.file, running);
  try {
    return await running;
  } finally {
    if (swapping.get(store.file) === running) swapping.delete(store.file);
  }
}

/**
 * The swap worker of one database file, kept between swaps: started at the first swap, unref'd
 * while idle (it never keeps the process alive; ref'd while a swap waits on it), ended when the
 * store is closed, and started again at the next swap when it died. Swaps of one file already run
 * one at a time (`swapping`), so at most one swap is in flight per worker.
 */
class SwapWorker {
  private worker: Worker | undefined;
  /** The swap in flight: its midSwap hook and flag, and how to settle it. */
  private pending:
    | {
        midSwap: (() => void) | undefined;
        flag: SharedArrayBuffer | null;
        settle: (error: unknown, result?: SwapResult) => void;
      }
    | undefined;

  constructor(private readonly file: string) {}

  get threadId(): number | undefined {
    return this.worker?.threadId;
  }

  private start(): Worker {
    const worker = new Worker(new URL('./swap-index-worker.js', import.meta.url), {
      name: 'dm-index-swap',
      workerData: { file: this.file },
    });
    worker.unref();
    worker.on('message', (message: FromSwapWorker) => {
      const pending = this.pending;
      if (!pending) return;
      if (message.type === 'mid-swap') {
        // 1: go on; 2: the hook threw, roll back (the worker reports it as the swap's error).
        let go = 1;
        try {
          pending.midSwap?.();
        } catch {
          go = 2;
        }
        const view = new Int32Array(pending.flag!);
        Atomics.store(view, 0, go);
        Atomics.notify(view, 0);
      } else if (message.type === 'done') pending.settle(null, message.result);
      else pending.settle(fromWireError(message.error));
    });
    // A worker that dies (out of memory, terminated) fails the swap in flight, if any; the next
    // swap starts another. Its transaction never committed: the old index keeps serving.
    const died = (reason: string, outOfMemory = false) => {
      if (this.worker === worker) this.worker = undefined;
      this.pending?.settle(
        new DmError(
          'INDEX_SWAP_FAILED',
          `the index swap worker of ${this.file} stopped (${reason}) before the swap committed; the registry keeps its previous index`,
          { category: outOfMemory ? 'limit' : 'error' },
        ),
      );
    };
    worker.on('error', (error: Error & { code?: string }) =>
      died(error.message, error.code === 'ERR_WORKER_OUT_OF_MEMORY'),
    );
    worker.on('exit', (code) => died(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  async swap(built: BuiltIndex, meta: SwapMeta): Promise<SwapResult> {
    const { midSwap, ...wireMeta } = meta;
    const worker = this.worker ?? this.start();
    const flag = midSwap ? new SharedArrayBuffer(4) : null;
    const outcome = new Promise<SwapResult>((resolve, reject) => {
      let settled = false;
      this.pending = {
        midSwap,
        flag,
        settle: (error, result) => {
          if (settled) return;
          settled = true;
          this.pending = undefined;
          if (result) resolve(result);
          else reject(error);
        },
      };
    });
    // A failure to hand the index over is the swap's error; the outcome is then not awaited.
    outcome.catch(() => {});
    worker.ref();
    try {
      worker.postMessage({ type: 'begin' } satisfies ToSwapWorker);
      let batch: SwapWireTemplate[] = [];
      let fresh = new Map<string, Uint8Array>();
      let versions = 0;
      const send = async () => {
        const packed = await packBuffers(fresh, true);
        const message: ToSwapWorker = { type: 'templates', templates: batch, packed };
        worker.postMessage(message, [packed.data]);
        batch = [];
        fresh = new Map();
        versions = 0;
        await nextTurn();
      };
      for (const t of built.templates) {
        batch.push({
          ...t,
          versions: t.versions.map((v) => ({ ...v, files: v.files.map((f) => wire(f, fresh)) })),
        });
        versions += t.versions.length;
        if (versions >= BATCH_VERSIONS) await send();
      }
      if (batch.length) await send();
      const registryYaml = built.registryYaml ? wire(built.registryYaml, fresh) : null;
      const packed = await packBuffers(fresh, true);
      const message: ToSwapWorker = {
        type: 'swap',
        findings: built.findings,
        registryYaml,
        packed,
        meta: wireMeta,
        midSwap: flag,
      };
      worker.postMessage(message, [packed.data]);
      return await outcome;
    } finally {
      this.pending = undefined;
      worker.unref();
    }
  }

  /** Ends the worker (its connection closes with it); a swap in flight fails. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }
}

/** The swap worker of each open store (docs/server.md, "Indexing"). */
const workers = new WeakMap<Store, SwapWorker>();

function swapWorkerOf(store: Store): SwapWorker {
  let worker = workers.get(store);
  if (!worker) {
    const created = new SwapWorker(store.file);
    worker = created;
    workers.set(store, created);
    store.onClose(() => {
      workers.delete(store);
      void created.stop();
    });
  }
  return worker;
}

/**
 * Ends `store`'s swap worker now, if it has one (closing the store does it too); a swap in flight
 * fails with INDEX_SWAP_FAILED and the next swap starts another worker.
 */
export async function stopSwapWorker(store: Store): Promise<void> {
  await workers.get(store)?.stop();
}

/** The thread id of `store`'s swap worker while it runs (tests: the worker is kept between swaps). */
export function swapWorkerThreadId(store: Store): number | undefined {
  return workers.get(store)?.threadId;
}

/**
 * The index swap off the request thread (docs/server.md, "Indexing"): `swapIndex` (swap-index.ts),
 * the very same code, runs in a worker thread on its own connection to the database file, so the
 * request thread keeps answering from the old index (WAL readers) while a big registry's rows are
 * written. The main thread only hands the built index over, in slices that yield to the event loop
 * (rows as structured clones of 500 versions at a time, new content packed into transferable
 * buffers), and learns the result once the transaction has committed.
 *
 * One worker per swap, ended when it is done: it holds no connection between syncs, and a worker
 * that crashes (out of memory) fails only that sync; its transaction was never committed, so the
 * old index keeps serving. A store without a file (in memory) swaps on the calling thread.
 */
import { Worker } from 'node:worker_threads';
import type { Finding } from '../../../client/src/registry/types.js';
import type { BuiltIndex, IndexedFile, IndexedTemplate } from '../indexer/build-index.js';
import {
  fromWireError,
  type PackedBuffers,
  packBuffers,
  type WireError,
} from '../indexer/build-index-pool.js';
import type { Store } from './db.js';
import { type SwapMeta, type SwapResult, swapIndex } from './swap-index.js';

/** A file as sent to the swap worker: its new content travels packed, by sha256. */
export type SwapWireFile = Omit<IndexedFile, 'content'> & { fresh?: true };
export type SwapWireTemplate = Omit<IndexedTemplate, 'versions'> & {
  versions: (Omit<IndexedTemplate['versions'][number], 'files'> & { files: SwapWireFile[] })[];
};
/** What the swap worker receives besides the rows: the swap's metadata without its hooks. */
export type SwapWireMeta = Omit<SwapMeta, 'midSwap'>;

/** Main thread → swap worker. */
export type ToSwapWorker =
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
 * event loop, then fail with SQLITE_BUSY: writes on this thread (service-store-sqlite.ts) and the
 * next swap wait here first instead (docs/server.md, "Indexing").
 */
const swapping = new Map<string, Promise<unknown>>();

/** Settles once no index swap is writing to `store`'s file (at once when none is). */
export async function swapsSettled(store: Store): Promise<void> {
  for (let current = swapping.get(store.file); current; current = swapping.get(store.file)) {
    await current.catch(() => {});
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

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
  const running = swapInWorker(store, built, meta);
  swapping.set(store.file, running);
  try {
    return await running;
  } finally {
    if (swapping.get(store.file) === running) swapping.delete(store.file);
  }
}

async function swapInWorker(store: Store, built: BuiltIndex, meta: SwapMeta): Promise<SwapResult> {
  const { midSwap, ...wireMeta } = meta;
  const worker = new Worker(new URL('./swap-index-worker.js', import.meta.url), {
    name: 'dm-index-swap',
    workerData: { file: store.file },
  });
  const flag = midSwap ? new SharedArrayBuffer(4) : null;
  const outcome = new Promise<SwapResult>((resolve, reject) => {
    let settled = false;
    const settle = (error: unknown, result?: SwapResult) => {
      if (settled) return;
      settled = true;
      if (result) resolve(result);
      else reject(error);
    };
    worker.on('message', (message: FromSwapWorker) => {
      if (message.type === 'mid-swap') {
        // 1: go on; 2: the hook threw, roll back (the worker reports it as the swap's error).
        let go = 1;
        try {
          midSwap?.();
        } catch {
          go = 2;
        }
        const view = new Int32Array(flag!);
        Atomics.store(view, 0, go);
        Atomics.notify(view, 0);
      } else if (message.type === 'done') settle(null, message.result);
      else settle(fromWireError(message.error));
    });
    worker.on('error', (error) => settle(new Error(`the index swap worker stopped: ${error.message}`)));
    worker.on('exit', (code) => settle(new Error(`the index swap worker stopped (exit code ${code})`)));
  });
  // A failure to hand the index over ends the worker; the outcome then says why.
  outcome.catch(() => {});
  try {
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
    await worker.terminate();
  }
}

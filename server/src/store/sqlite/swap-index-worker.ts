// SQLite only: the worker thread's side of sqlite/swap-index-thread.ts (its own better-sqlite3 connection).
/**
 * The index swap worker (sqlite/swap-index-thread.ts), kept between swaps: opens its own connection to
 * the database file at its first swap and keeps it, puts each built index back together from the
 * main thread's messages and runs `swapIndex` on it, then reports the result (or the error; the
 * transaction rolled back). The connection closes with the thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { IndexedFile, IndexedTemplate } from '../../indexer/build-index.js';
import { toWireError, unpackBuffers } from '../../indexer/build-index-pool.js';
import { openStore, type Store } from './open.js';
import { swapIndex } from './swap-index.js';
import type { FromSwapWorker, SwapWireFile, ToSwapWorker } from './swap-index-thread.js';

const port = parentPort;
if (!port) throw new Error('swap-index-worker runs as a worker thread');
const { file } = workerData as { file: string };

const post = (message: FromSwapWorker) => port.postMessage(message);
let templates: IndexedTemplate[] = [];
let opened: Store | undefined;

function attach(f: SwapWireFile, content: ReadonlyMap<string, Buffer>): IndexedFile {
  const { fresh, ...rest } = f;
  if (!fresh) return rest;
  const bytes = content.get(f.sha256);
  if (!bytes) throw new Error(`content ${f.sha256} of ${f.path} did not reach the swap worker`);
  return { ...rest, content: bytes };
}

function swap(message: Extract<ToSwapWorker, { type: 'swap' }>): void {
  try {
    opened ??= openStore(file, { migrate: false });
    const store = opened;
    const registryYaml = message.registryYaml
      ? attach(message.registryYaml, unpackBuffers(message.packed))
      : null;
    const flag = message.midSwap ? new Int32Array(message.midSwap) : null;
    const result = swapIndex(
      store,
      { templates, findings: message.findings, registryYaml },
      {
        ...message.meta,
        ...(flag
          ? {
              midSwap: () => {
                post({ type: 'mid-swap' });
                Atomics.wait(flag, 0, 0);
                if (Atomics.load(flag, 0) !== 1) throw new Error('the midSwap hook failed');
              },
            }
          : {}),
      },
    );
    post({ type: 'done', result });
  } catch (error) {
    post({ type: 'failed', error: toWireError(error) });
  } finally {
    templates = [];
  }
}

port.on('message', (message: ToSwapWorker) => {
  try {
    if (message.type === 'begin') templates = [];
    else if (message.type === 'templates') {
      const content = unpackBuffers(message.packed);
      for (const t of message.templates) {
        templates.push({
          ...t,
          versions: t.versions.map((v) => ({ ...v, files: v.files.map((f) => attach(f, content)) })),
        });
      }
    } else swap(message);
  } catch (error) {
    post({ type: 'failed', error: toWireError(error) });
  }
});

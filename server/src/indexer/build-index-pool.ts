/**
 * Index building off the request thread (docs/server.md, "Index building off the request
 * thread"): `indexSnapshot` (scanning, hashing, parsing schemas) runs in a small pool of worker
 * threads, so resolve and the pages keep answering while a big registry syncs. The main thread
 * keeps what touches the store and the source (looking up known content, reading blobs), in
 * slices that yield to the event loop, and answers the worker's batched requests.
 *
 * Bounds: each worker has a heap limit; the caller's signal (the sync's deadline) terminates a
 * worker that takes too long; a worker that crashes (out of memory, killed) fails that build with
 * INDEX_BUILD_FAILED and is replaced; nothing a worker does can take the process down.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { DmError, type ErrorCategory } from '../../../client/src/error.js';
import { isErrorCode } from '../../../client/src/error-codes.js';
import type { Finding, TreeEntry } from '../../../client/src/registry/index.js';
import type { Snapshot } from '../../../client/src/source/index.js';
import { nextTurn } from '../store/slices.js';
import type {
  BuiltIndex,
  IndexedFile,
  IndexedTemplate,
  KnownContent,
  PreviousVersion,
} from './build-index.js';

export interface IndexBuildPoolOptions {
  /** Most workers at once; default min(2, cores − 1), at least 1. Builds beyond it queue. */
  size?: number;
  /** Heap (old generation) limit of each worker, MB; default 768. */
  maxHeapMb?: number;
}

export const DEFAULT_WORKER_HEAP_MB = 768;

/** Buffers keyed by string, packed into one transferable ArrayBuffer. */
export interface PackedBuffers {
  keys: string[];
  /** End offset of each key's bytes in `data`. */
  ends: number[];
  data: ArrayBuffer;
}

/** A file as the worker sends it back: new content is named by its path, not copied again. */
export type WireFile = Omit<IndexedFile, 'content'> & { contentPath?: string };
export type WireTemplate = Omit<IndexedTemplate, 'versions'> & {
  versions: (Omit<IndexedTemplate['versions'][number], 'files'> & { files: WireFile[] })[];
};

export interface WireError {
  message: string;
  code?: string;
  category?: ErrorCategory;
  hint?: string;
  details?: Record<string, unknown>;
}

/** Main thread → worker. */
export type ToWorker =
  | {
      type: 'task';
      entries: TreeEntry[];
      knownSha: Map<string, string>;
      previous: ReadonlyMap<string, PreviousVersion> | undefined;
    }
  | { type: 'reply'; id: number; packed: PackedBuffers };

/** Worker → main thread. */
export type FromWorker =
  | { type: 'read'; id: number; paths: string[] }
  | { type: 'contents'; id: number; shas: string[] }
  | { type: 'templates'; templates: WireTemplate[] }
  | { type: 'done'; findings: Finding[]; registryYaml: WireFile | null }
  | { type: 'failed'; error: WireError };

/** Work done on the main thread between yields to the event loop. */
const SLICE = 512;
const SLICE_BYTES = 4 * 1024 * 1024;

/** Packs buffers into one ArrayBuffer (copied in slices, yielding between them when `yielding`). */
export async function packBuffers(
  map: ReadonlyMap<string, Uint8Array>,
  yielding: boolean,
): Promise<PackedBuffers> {
  let total = 0;
  for (const b of map.values()) total += b.byteLength;
  const data = new ArrayBuffer(total);
  const view = new Uint8Array(data);
  const keys: string[] = [];
  const ends: number[] = [];
  let at = 0;
  let sinceYield = 0;
  for (const [key, bytes] of map) {
    view.set(bytes, at);
    at += bytes.byteLength;
    keys.push(key);
    ends.push(at);
    sinceYield += bytes.byteLength + 256;
    if (yielding && sinceYield > SLICE_BYTES) {
      sinceYield = 0;
      await nextTurn();
    }
  }
  return { keys, ends, data };
}

/** The buffers of a pack, as views over its one ArrayBuffer. */
export function unpackBuffers(packed: PackedBuffers): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  let start = 0;
  for (const [i, key] of packed.keys.entries()) {
    const end = packed.ends[i]!;
    out.set(key, Buffer.from(packed.data, start, end - start));
    start = end;
  }
  return out;
}

export function toWireError(error: unknown): WireError {
  if (error instanceof DmError) {
    return {
      message: error.message,
      code: error.code,
      category: error.category,
      ...(error.hint === undefined ? {} : { hint: error.hint }),
      ...(error.details === undefined ? {} : { details: error.details }),
    };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}

/** The error a worker reported, as the same kind of error it was (so the sync records the same code). */
export function fromWireError(error: WireError): Error {
  if (!isErrorCode(error.code)) return new Error(error.message);
  return new DmError(error.code, error.message, {
    ...(error.category ? { category: error.category as never } : {}),
    ...(error.hint === undefined ? {} : { hint: error.hint }),
    ...(error.details === undefined ? {} : { details: error.details }),
  });
}

/** git blob id → sha256 for the snapshot's blobs the store has, looked up in slices. */
async function lookUpKnown(entries: readonly TreeEntry[], known: KnownContent): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const wanted = [...new Set(entries.flatMap((e) => (e.type === 'blob' && e.gitSha ? [e.gitSha] : [])))];
  for (let i = 0; i < wanted.length; i += SLICE) {
    for (const [g, sha] of await known.sha256ForGitShas(wanted.slice(i, i + SLICE))) out.set(g, sha);
    // A store answering at once (SQLite) leaves the event loop its turn between slices.
    await nextTurn();
  }
  return out;
}

function attachContent(file: WireFile, fetched: ReadonlyMap<string, Buffer>): IndexedFile {
  const { contentPath, ...rest } = file;
  if (contentPath === undefined) return rest;
  const content = fetched.get(contentPath);
  if (!content) throw new Error(`content of ${contentPath} is unavailable`);
  return { ...rest, content };
}

function crashError(cause: unknown, maxHeapMb: number): DmError {
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return new DmError(
      'INDEX_BUILD_FAILED',
      `building the index needed more than the indexing worker's ${maxHeapMb} MB of memory`,
      { category: 'limit', cause },
    );
  }
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new DmError('INDEX_BUILD_FAILED', `the indexing worker stopped: ${reason}`, { cause });
}

export class IndexBuildPool {
  readonly size: number;
  readonly maxHeapMb: number;
  private readonly idle: Worker[] = [];
  private readonly waiting: ((worker: Worker) => void)[] = [];
  private live = 0;

  constructor(options: IndexBuildPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(options.size ?? Math.min(2, availableParallelism() - 1)));
    this.maxHeapMb = options.maxHeapMb ?? DEFAULT_WORKER_HEAP_MB;
  }

  /** Workers alive (idle or busy), for tests and metrics. */
  get workers(): number {
    return this.live;
  }

  /**
   * Builds the index of a snapshot in a worker. Rejects with the signal's reason when it aborts
   * (the worker is terminated), with INDEX_BUILD_FAILED when the worker crashes, and otherwise
   * with the error the build itself raised.
   */
  async build(
    snapshot: Snapshot,
    known: KnownContent,
    signal?: AbortSignal,
    previous?: ReadonlyMap<string, PreviousVersion>,
  ): Promise<BuiltIndex> {
    signal?.throwIfAborted();
    const knownSha = await lookUpKnown(snapshot.entries, known);
    signal?.throwIfAborted();
    const worker = await this.acquire(signal);
    let reusable = false;
    try {
      const result = await this.run(worker, snapshot, known, knownSha, signal, previous);
      reusable = result.reusable;
      if ('error' in result) throw result.error;
      return result.built;
    } finally {
      this.release(worker, reusable);
    }
  }

  /** Terminates the idle workers (busy ones end with their build). */
  async close(): Promise<void> {
    const idle = this.idle.splice(0);
    this.live -= idle.length;
    await Promise.all(idle.map((w) => w.terminate()));
  }

  private spawn(): Worker {
    this.live++;
    const worker = new Worker(new URL('./build-index-worker.js', import.meta.url), {
      name: 'dm-index-build',
      resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb, stackSizeMb: 4 },
    });
    // Errors are a build's to report (its own listener); an idle worker that dies leaves the pool.
    worker.on('error', () => {});
    worker.once('exit', () => {
      const at = this.idle.indexOf(worker);
      if (at >= 0) {
        this.idle.splice(at, 1);
        this.live--;
      }
    });
    return worker;
  }

  private acquire(signal: AbortSignal | undefined): Promise<Worker> {
    const idle = this.idle.pop();
    if (idle) return Promise.resolve(idle);
    if (this.live < this.size) return Promise.resolve(this.spawn());
    return new Promise<Worker>((resolve, reject) => {
      const take = (worker: Worker) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(worker);
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(take);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(take);
    });
  }

  private release(worker: Worker, reusable: boolean): void {
    let next: Worker | undefined = worker;
    if (!reusable) {
      this.live--;
      void worker.terminate();
      next = this.waiting.length ? this.spawn() : undefined;
    }
    if (!next) return;
    const waiter = this.waiting.shift();
    if (waiter) waiter(next);
    else {
      next.unref();
      this.idle.push(next);
    }
  }

  private run(
    worker: Worker,
    snapshot: Snapshot,
    known: KnownContent,
    knownSha: Map<string, string>,
    signal: AbortSignal | undefined,
    previous: ReadonlyMap<string, PreviousVersion> | undefined,
  ): Promise<{ reusable: boolean; built: BuiltIndex } | { reusable: boolean; error: unknown }> {
    const byPath = new Map<string, TreeEntry>();
    for (const e of snapshot.entries) byPath.set(e.path, e);
    // Everything read for the worker, by path: the new content the swap stores.
    const fetched = new Map<string, Buffer>();
    const read = async (paths: readonly string[]) => {
      const wanted: TreeEntry[] = [];
      for (const p of paths) {
        const e = byPath.get(p);
        if (e) wanted.push(e);
      }
      const got = await snapshot.read(wanted);
      for (const [path, content] of got) fetched.set(path, content);
      return got;
    };
    const contents = async (shas: readonly string[]) => {
      const out = new Map<string, Buffer>();
      for (let i = 0; i < shas.length; i += SLICE) {
        for (const [sha, content] of await known.contents(shas.slice(i, i + SLICE))) out.set(sha, content);
        if (i + SLICE < shas.length) await nextTurn();
      }
      return out;
    };

    return new Promise((resolve) => {
      const templates: IndexedTemplate[] = [];
      let settled = false;
      const settle = (
        outcome: { reusable: boolean; built: BuiltIndex } | { reusable: boolean; error: unknown },
      ) => {
        if (settled) return;
        settled = true;
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const answer = (id: number, work: Promise<Map<string, Buffer>>) => {
        work
          .then((map) => packBuffers(map, true))
          .then((packed) => {
            if (settled) return;
            const message: ToWorker = { type: 'reply', id, packed };
            worker.postMessage(message, [packed.data]);
          })
          // The source failed (a download, a git error): the build fails with that error.
          .catch((error: unknown) => settle({ reusable: false, error }));
      };
      const onMessage = (message: FromWorker) => {
        try {
          if (message.type === 'read') answer(message.id, read(message.paths));
          else if (message.type === 'contents') answer(message.id, contents(message.shas));
          else if (message.type === 'templates') {
            for (const t of message.templates) {
              templates.push({
                ...t,
                versions: t.versions.map((v) => ({
                  ...v,
                  files: v.files.map((f) => attachContent(f, fetched)),
                })),
              });
            }
          } else if (message.type === 'done') {
            const registryYaml = message.registryYaml ? attachContent(message.registryYaml, fetched) : null;
            settle({ reusable: true, built: { templates, findings: message.findings, registryYaml } });
          } else if (message.type === 'failed') {
            settle({ reusable: true, error: fromWireError(message.error) });
          }
        } catch (error) {
          settle({ reusable: false, error });
        }
      };
      const onError = (error: unknown) =>
        settle({ reusable: false, error: crashError(error, this.maxHeapMb) });
      const onExit = (code: number) =>
        settle({ reusable: false, error: crashError(new Error(`exit code ${code}`), this.maxHeapMb) });
      const onAbort = () => settle({ reusable: false, error: signal?.reason });
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.ref();
      const task: ToWorker = { type: 'task', entries: snapshot.entries, knownSha, previous };
      worker.postMessage(task);
    });
  }
}

let shared: IndexBuildPool | undefined;

/** The process's pool, made on first use. */
export function sharedIndexBuildPool(): IndexBuildPool {
  shared ??= new IndexBuildPool();
  return shared;
}

export interface BuildIndexOptions {
  /** Stops the build and terminates its worker (the sync's deadline). */
  signal?: AbortSignal;
  /** The workers to build in; default the process's shared pool. */
  pool?: IndexBuildPool;
  /** The registry's stored versions by directory, reused where their tree SHA is unchanged. */
  previous?: ReadonlyMap<string, PreviousVersion>;
}

/**
 * Builds the index of a snapshot in a worker thread (`indexSnapshot` there), so the request
 * thread stays free; the store and the source are read here, in batches.
 */
export function buildIndex(
  snapshot: Snapshot,
  known: KnownContent,
  options: BuildIndexOptions = {},
): Promise<BuiltIndex> {
  return (options.pool ?? sharedIndexBuildPool()).build(snapshot, known, options.signal, options.previous);
}

/**
 * The request thread's side of the webhook worker (docs/server.md, "Webhooks"): one worker thread,
 * started on the first delivery and kept (it never holds the process open), with a heap bound of
 * its own. A worker that dies (a body whose parse outgrows that bound) fails the deliveries it held
 * with 413 and the next delivery starts another; the request thread never parses or hashes a body.
 */
import { Worker } from 'node:worker_threads';
import { DmError } from '../../../client/src/error.js';
import type { DeliveryCandidate, DeliveryCheck } from './check-delivery.js';
import type { FromDeliveryWorker, ToDeliveryWorker } from './delivery-worker.js';

/** The worker's heap bound, MB: a 25 MiB body parses into well under it. */
const WORKER_HEAP_MB = 256;

export class DeliveryChecker {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (check: DeliveryCheck) => void; reject: (error: unknown) => void }
  >();

  /**
   * Parses `body` and verifies `signature` with the candidates of its repository, in the worker,
   * which opens only their secrets with `key`.
   */
  check(
    body: Uint8Array,
    signature: string,
    candidates: DeliveryCandidate[],
    key: Uint8Array,
  ): Promise<DeliveryCheck> {
    const worker = this.worker ?? this.spawn();
    const id = this.nextId++;
    return new Promise<DeliveryCheck>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      const task: ToDeliveryWorker = { id, body, signature, candidates, key };
      // The body's bytes move to the worker (no copy); the request thread keeps none of them.
      const transfer = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
      worker.postMessage(task, transfer ? [body.buffer as ArrayBuffer] : []);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private spawn(): Worker {
    const worker = new Worker(new URL('./delivery-worker.js', import.meta.url), {
      name: 'dm-webhook-check',
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, stackSizeMb: 4 },
    });
    worker.on('message', (reply: FromDeliveryWorker) => {
      const entry = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      entry?.resolve(reply.check);
    });
    const fail = () => {
      if (this.worker === worker) this.worker = undefined;
      const error = new DmError(
        'BODY_TOO_LARGE',
        `the webhook body could not be checked within the server's ${WORKER_HEAP_MB} MB bound for it`,
        { category: 'limit' },
      );
      for (const entry of this.pending.values()) entry.reject(error);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.once('exit', fail);
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

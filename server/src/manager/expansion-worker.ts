/**
 * An expansion worker (docs/manager.md, "Expansions off the request thread"): runs one
 * `expandConfiguration` at a time; registry references and file contents are asked of the request
 * thread (which holds the catalog and the caller's access), so parsing and expanding a
 * configuration of any size never holds the server's event loop.
 */
import { parentPort } from 'node:worker_threads';
import type { Resolution as ServerResolution } from '../api/shapes.js';
import { fromWireError, toWireError, type WireError } from '../indexer/build-index-pool.js';
import type { CatalogView } from './catalog-resolver.js';
import { type ExpansionJob, expandConfiguration } from './expand-configuration.js';

/** Request thread → worker. */
export type ToExpansionWorker =
  | { type: 'expand'; job: ExpansionJob; answer: boolean }
  | { type: 'reply'; call: number; value?: unknown; error?: WireError };

/** Worker → request thread. */
export type FromExpansionWorker =
  | { type: 'resolve'; call: number; reference: string }
  | { type: 'file'; call: number; sha256: string }
  | { type: 'done'; input?: unknown; answer?: string }
  | { type: 'failed'; error: WireError };

const port = parentPort!;
let nextCall = 0;
const calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();

function ask<T>(
  message: { type: 'resolve'; reference: string } | { type: 'file'; sha256: string },
): Promise<T> {
  const call = nextCall++;
  return new Promise<T>((resolve, reject) => {
    calls.set(call, { resolve: resolve as (v: unknown) => void, reject });
    port.postMessage({ ...message, call } satisfies FromExpansionWorker);
  });
}

const catalog: CatalogView = {
  resolve: (reference) => ask<ServerResolution>({ type: 'resolve', reference }),
  fileContent: async (sha256) => {
    const bytes = await ask<Uint8Array | undefined>({ type: 'file', sha256 });
    return bytes === undefined ? undefined : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  },
};

port.on('message', (message: ToExpansionWorker) => {
  if (message.type === 'reply') {
    const pending = calls.get(message.call);
    calls.delete(message.call);
    if (message.error) pending?.reject(fromWireError(message.error));
    else pending?.resolve(message.value);
    return;
  }
  void expandConfiguration(message.job, catalog).then(
    (input) => {
      // POST /expand sends the expansion as it is: its JSON text is made here, so the request
      // thread only copies a string instead of cloning and serialising the objects.
      const reply: FromExpansionWorker = message.answer
        ? {
            type: 'done',
            answer: JSON.stringify({
              config: input.config,
              layout: input.layout,
              references: input.references,
            }),
          }
        : { type: 'done', input };
      port.postMessage(reply);
    },
    (error: unknown) =>
      port.postMessage({ type: 'failed', error: toWireError(error) } satisfies FromExpansionWorker),
  );
});

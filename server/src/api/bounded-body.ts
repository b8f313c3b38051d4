/**
 * A request body read into one buffer with a byte bound (docs/server.md, "Webhooks"): a declared
 * Content-Length beyond it is refused before a byte is read, and a body that grows beyond it while
 * streaming is refused as soon as it does; either way 413 `BODY_TOO_LARGE`, the way GitHub bounds
 * its own deliveries. Read inside an admission (admission.ts), so only admitted requests hold bodies.
 *
 * Over the Node server, the body is read from the connection itself (@hono/node-server's
 * `c.env.incoming`): each chunk the socket delivers is copied into its place in one buffer as it
 * arrives (of the declared length, so never copied again), one socket read per turn of the event
 * loop, instead of through a web stream whose queued chunks a read loop takes in one run of
 * microtasks and then copies whole (docs/server.md, "Bounds on one caller's work").
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { DmError } from '../../../client/src/error.js';
import { type AppEnv, errorResponse } from './http.js';

function tooLarge(c: Context<AppEnv>, max: number): Response {
  const res = errorResponse(
    c,
    new DmError('BODY_TOO_LARGE', `the request body is larger than ${max} bytes`, { category: 'limit' }),
  );
  return new Response(res.body, { status: 413, headers: res.headers });
}

/** The body's bytes (a buffer of its own, offset 0), or the 413 answer. */
export async function boundedBody(c: Context<AppEnv>, max: number): Promise<Uint8Array | Response> {
  const header = c.req.header('content-length');
  const declared = header === undefined ? undefined : Number(header);
  if (declared !== undefined && declared > max) return tooLarge(c, max);
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const body =
    incoming && !incoming.readableDidRead && incoming.listenerCount('data') === 0
      ? await fromConnection(incoming, max, Number.isSafeInteger(declared) ? declared : undefined)
      : await fromStream(c.req.raw.body, max);
  return body === 'too large' ? tooLarge(c, max) : body;
}

/** Reads `incoming` into one buffer, `declared` bytes long when the length was declared. */
function fromConnection(
  incoming: IncomingMessage,
  max: number,
  declared: number | undefined,
): Promise<Uint8Array | 'too large'> {
  return new Promise((resolve, reject) => {
    let body = new Uint8Array(declared ?? Math.min(max, 64 * 1024));
    let size = 0;
    const settle = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('close', onClose);
      incoming.off('error', onClose);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > max) {
        settle();
        incoming.pause();
        resolve('too large');
        return;
      }
      if (size + chunk.length > body.length) {
        // Undeclared length: grown by doubling, up to the bound.
        const grown = new Uint8Array(Math.min(max, Math.max(body.length * 2, size + chunk.length)));
        grown.set(body.subarray(0, size));
        body = grown;
      }
      body.set(chunk, size);
      size += chunk.length;
    };
    const onEnd = () => {
      settle();
      // A buffer of its own, exactly the body: what moves to a worker without a copy.
      resolve(size === body.length ? body : body.slice(0, size));
    };
    const onClose = () => {
      settle();
      reject(
        new DmError('INVALID_JSON', 'the request body ended before it was complete', {
          category: 'invalid-input',
        }),
      );
    };
    incoming.on('data', onData);
    incoming.once('end', onEnd);
    incoming.once('close', onClose);
    incoming.once('error', onClose);
  });
}

/** Reads a web stream into one buffer (a request that came through no socket: `app.request()`). */
async function fromStream(
  stream: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<Uint8Array | 'too large'> {
  if (!stream) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return 'too large';
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

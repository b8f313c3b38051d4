/**
 * A request body read into one buffer with a byte bound (docs/server.md, "Webhooks"): a declared
 * Content-Length beyond it is refused before a byte is read, and a body that grows beyond it while
 * streaming is refused as soon as it does; either way 413 `BODY_TOO_LARGE`, the way GitHub bounds
 * its own deliveries. Read inside an admission (admission.ts), so only admitted requests hold bodies.
 */
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
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > max) return tooLarge(c, max);
  const stream = c.req.raw.body;
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
      return tooLarge(c, max);
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

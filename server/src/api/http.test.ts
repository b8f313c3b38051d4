/**
 * `conditionalAnswer` (http.ts) sends a body's bytes as they are: the response the app hands to
 * @hono/node-server holds the very array the body function returned (a cached archive is up to
 * 64 MiB: a copy per request was 64 MiB per request), and the bytes that reach a client through a
 * real socket are those bytes, also for a view into a larger buffer.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { getRequestListener, serve } from '@hono/node-server';
import { Hono } from 'hono';
import { type AppEnv, conditionalAnswer, immutableContent } from './http.js';

/** The body @hono/node-server's response keeps to write as it is (its `Symbol("cache")` entry). */
function heldBody(res: Response): unknown {
  const key = Object.getOwnPropertySymbols(res).find((s) => s.description === 'cache');
  assert.ok(key, "the response is @hono/node-server's own (what its listener writes from)");
  return (res as unknown as Record<symbol, unknown[]>)[key]![1];
}

describe('conditionalAnswer: bytes without a copy', () => {
  // As the server runs: @hono/node-server's listener puts its Response in place.
  getRequestListener(() => new Response(''));
  const whole = new Uint8Array(4096).map((_, i) => i % 251);
  const view = whole.subarray(1000, 3000);
  const buffer = Buffer.from('a file of a template\n');
  const app = new Hono<AppEnv>();
  app.get('/view', (c) =>
    conditionalAnswer(c, { etag: '"v"', headers: {}, contentType: 'application/gzip' }, () => view),
  );
  app.get('/buffer', (c) => immutableContent(c, '"b"', 'text/plain', async () => buffer, 'public'));

  it('hands the same array to the response, sync and async', async () => {
    assert.equal(heldBody(await app.fetch(new Request('http://registry/view'))), view);
    assert.equal(heldBody(await app.fetch(new Request('http://registry/buffer'))), buffer);
    const notModified = await app.fetch(
      new Request('http://registry/view', { headers: { 'if-none-match': '"v"' } }),
    );
    assert.equal(notModified.status, 304);
    assert.equal(heldBody(notModified), null);
  });

  it('sends exactly those bytes through a socket', async () => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    await new Promise((r) => server.once('listening', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const got = new Uint8Array(await (await fetch(`${base}/view`)).arrayBuffer());
      assert.deepEqual(got, new Uint8Array(view));
      const text = await (await fetch(`${base}/buffer`)).text();
      assert.equal(text, buffer.toString());
    } finally {
      server.close();
    }
  });
});

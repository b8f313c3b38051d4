/**
 * A webhook delivery's body read from the connection (docs/server.md, "Bounds on one caller's
 * work"; server/src/api/bounded-body.ts), over a real Node HTTP server: with a declared length and
 * chunked, at the bound and one byte beyond it (413, declared or found while streaming), and a
 * client that goes away mid-body frees its slot. Every wait has a hard bound.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { request, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe, it } from 'node:test';
import { serve } from '@hono/node-server';
import { testServer } from '../helpers.js';
import { within } from './process.js';

const MAX = 256 * 1024;
const SECRET = 'body-secret';

/** A ping delivery for acme/body padded to `size` bytes of JSON. */
function delivery(size: number): Buffer {
  const head = '{"zen":"x","repository":{"full_name":"acme/body"},"pad":"';
  return Buffer.from(`${head}${'p'.repeat(size - head.length - 2)}"}`);
}

/** The request options of a ping delivery to the server on `port`. */
const deliveryTo = (port: number, headers: Record<string, string>) => ({
  host: '127.0.0.1',
  port,
  path: '/api/v1/webhooks/github',
  method: 'POST',
  agent: false,
  headers: { 'x-github-event': 'ping', ...headers },
});

const sign = (body: Buffer) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;

describe('hostile: webhook bodies read from the connection', () => {
  it('declared and chunked, at the bound and beyond it, and a client gone mid-body', {
    timeout: 120_000,
  }, async () => {
    const s = testServer({ maxWebhookBytes: MAX });
    await s.service.add({ source: 'github.com/acme/body', webhookSecret: SECRET });
    const server = serve({ fetch: s.app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const { port } = server.address() as AddressInfo;
    /** Sends `body` in pieces (chunked unless `declare`), answers the status and the body. */
    const post = (body: Buffer, declare: boolean) =>
      within(
        new Promise<{ status: number; text: string }>((resolve, reject) => {
          const req = request(
            deliveryTo(port, {
              'x-hub-signature-256': sign(body),
              ...(declare ? { 'content-length': String(body.length) } : {}),
            }),
            (res) => {
              let text = '';
              res.on('data', (c: Buffer) => {
                text += c.toString();
              });
              res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
            },
          );
          req.on('error', reject);
          for (let at = 0; at < body.length; at += 10_000) req.write(body.subarray(at, at + 10_000));
          req.end();
        }),
        60_000,
        `a ${declare ? 'declared' : 'chunked'} delivery of ${body.length} bytes`,
      );
    try {
      for (const declare of [true, false]) {
        const small = await post(delivery(1000), declare);
        assert.equal(small.status, 200, small.text);
        const atBound = await post(delivery(MAX), declare);
        assert.equal(atBound.status, 200, atBound.text);
        const beyond = await post(delivery(MAX + 1), declare);
        assert.equal(beyond.status, 413, beyond.text);
        assert.match(beyond.text, /BODY_TOO_LARGE/);
      }
      // A signed delivery whose client goes away after half of its declared body.
      const closed = new Promise<void>((resolve) =>
        server.once('connection', (socket: Socket) => socket.once('close', () => resolve())),
      );
      const body = delivery(MAX);
      const req = request(
        deliveryTo(port, { 'x-hub-signature-256': sign(body), 'content-length': String(body.length) }),
      );
      req.on('error', () => {});
      req.write(body.subarray(0, MAX / 2), () => req.destroy());
      await within(closed, 60_000, 'the server seeing the client gone');
      // Its slot is free again: the next delivery is answered, and nothing runs or waits.
      const next = await post(delivery(1000), true);
      assert.equal(next.status, 200, next.text);
      const metrics = await (await s.app.request('/metrics')).text();
      assert.match(metrics, /^dm_registry_bounded_work\{work="webhook",state="running"\} 0$/m);
      assert.match(metrics, /^dm_registry_bounded_work\{work="webhook",state="waiting"\} 0$/m);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await s.close();
    }
  });
});

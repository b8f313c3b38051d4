/**
 * A client that stops reading a streamed batch resolve (docs/server.md, "Bounds on one caller's
 * work"): past the write deadline the server closes the connection and the batch's slots are free
 * again, so the same caller's next batch is answered. Over a real Node HTTP server (the app served
 * by @hono/node-server, as `dm-registry start` does), with a deadline of 2 s; every wait has a hard
 * bound, so the test fails instead of hanging when the connection stays open.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { type ClientRequest, request, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { serve } from '@hono/node-server';
import { tempDir, testServer } from '../helpers.js';
import { within } from './process.js';

const NAME = 'local.dm/acme/wide';
/** Files in the version: 1,000 references to it are an answer of tens of MB, far beyond socket buffers. */
const FILES = 400;

describe('hostile: a batch answer its client stops reading', () => {
  it('is cut at the write deadline: the connection closes and the slots are free again', {
    timeout: 180_000,
  }, async () => {
    const root = tempDir('dm-batch-deadline-');
    const dir = join(root, 'wide', 'v1.0.0');
    mkdirSync(join(dir, 'data'), { recursive: true });
    writeFileSync(join(dir, 'wide.jinja'), 'resources: []\n');
    for (let i = 0; i < FILES - 1; i++) {
      writeFileSync(join(dir, 'data', `a-file-with-a-long-name-${String(i).padStart(4, '0')}.txt`), `${i}\n`);
    }
    const s = testServer({ batchAnswerDeadlineMs: 2000 });
    const row = await s.service.add({ source: root, name: NAME });
    const outcome = await s.service.sync(row.id, 'manual');
    assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome.error));
    const server = serve({ fetch: s.app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    // The server's side of the batch's connection (the first one made), closed by the deadline.
    const serverSocketClosed = new Promise<void>((resolve) =>
      server.once('connection', (socket: Socket) => socket.once('close', () => resolve())),
    );
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const refs = Array.from({ length: 1000 }, () => `${NAME}/wide:v1`);
    let req: ClientRequest | undefined;
    try {
      let received = 0;
      let resume = () => {};
      let firstBytes = () => {};
      const started = new Promise<void>((resolve) => {
        firstBytes = resolve;
      });
      // Settles when the connection is gone: how the answer ended (complete or not) and its status.
      const closed = new Promise<{ status: number; complete: boolean }>((resolve) => {
        req = request(
          `${url}/api/v1/resolve`,
          { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
          (res) => {
            let paused = false;
            res.on('data', (chunk: Buffer) => {
              received += chunk.length;
              // Reads nothing more: the server's writes fill the socket and wait for it to drain.
              if (!paused) {
                paused = true;
                res.pause();
                firstBytes();
              }
            });
            res.on('error', () => {});
            resume = () => res.resume();
            res.once('close', () => resolve({ status: res.statusCode ?? 0, complete: res.complete }));
          },
        );
        req.on('error', () => resolve({ status: 0, complete: false }));
        req.end(JSON.stringify({ refs }));
      });
      await within(started, 60_000, 'the first bytes of the batch answer');
      // A paused client reads nothing, so it learns of the close only when it reads again: the
      // server's side of the connection is what closes at the deadline.
      await within(serverSocketClosed, 60_000, 'the server closing a batch answer nobody reads');
      // Its slots are free: nothing running.
      const metrics = await (await s.app.request('/metrics')).text();
      assert.match(metrics, /^dm_registry_bounded_work\{work="batch-resolve",state="running"\} 0$/m);
      // Reading again, the client gets what was in flight, then the end of an unfinished answer.
      resume();
      const ended = await within(closed, 60_000, 'the client seeing the connection closed');
      assert.equal(ended.status, 200);
      assert.equal(ended.complete, false, 'the answer was cut, not finished');
      assert.ok(received > 0);

      // The same caller's next batch is answered whole.
      const next = await within(
        fetch(`${url}/api/v1/resolve`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ refs: refs.slice(0, 20) }),
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as { results: unknown[] } })),
        60_000,
        'the next batch of the same caller',
      );
      assert.equal(next.status, 200);
      assert.equal(next.body.results.length, 20);
    } finally {
      req?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await s.close();
    }
  });
});

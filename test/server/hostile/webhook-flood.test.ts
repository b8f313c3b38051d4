/**
 * Issue 25 item 1: webhook deliveries cannot stall the server. A real dm-registry with 31 GitHub
 * registries holding webhook secrets gets 24 MiB deliveries with wrong signatures: an unrelated
 * resolve is answered while such a delivery is being checked (the check runs in a worker and tries
 * only the secret of the repository the delivery names), a flood of them is admitted two at a time
 * (the rest wait or get 503 with Retry-After: the bodies held at once are bounded by the counters
 * /metrics shows), a body beyond 25 MiB gets 413 before it is read, and a correctly signed push
 * still syncs its one registry.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { startGitHubStandin } from '../../github-standin/standin.js';
import { DIALECTS, FIXTURES } from '../helpers.js';
import { ADMIN, boundedWork, startRegistry } from './process.js';

const REG = 'github.com/dm-samples/templates';
const MIB = 1024 * 1024;

/** A POST through node:http (the body sent as it is); resolves with the status and headers. */
function post(
  url: string,
  body: Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/api/v1/webhooks/github`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    // The server may answer (413, 503) before the whole body is sent and close the connection:
    // the write that follows fails on the socket (EPIPE, ECONNRESET). When the answer was read it
    // settles the request; when the closed socket lost it, the refusal is reported as status 0
    // ("closed before the body was read"), which only a refused delivery can give.
    req.on('socket', (socket) => socket.on('error', () => {}));
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') {
        resolve({ status: 0, headers: {}, body: '' });
      } else reject(error);
    });
    req.end(body);
  });
}

const webhookWork = (url: string) => boundedWork(url, 'webhook');

/** Polls until `ok` holds (each poll is a request; the limit only ends a test that failed). */
async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  const limit = Date.now() + 120_000;
  while (!(await ok())) {
    if (Date.now() > limit) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const dialect of DIALECTS) {
  describe(`hostile: webhook flood (${dialect})`, () => {
    it('31 GitHub registries with secrets, 24 MiB wrong-signature deliveries', async () => {
      const standin = await startGitHubStandin({ repos: {} });
      const server = await startRegistry(['--index', FIXTURES], {
        dialect,
        env: { GITHUB_API_URL: standin.url },
      });
      try {
        for (let i = 0; i < 31; i++) {
          const res = await fetch(`${server.url}/api/v1/registries`, {
            method: 'POST',
            headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
            body: JSON.stringify({ source: `github.com/acme/r${i}`, webhookSecret: `secret-${i}` }),
          });
          assert.equal(res.status, 201, await res.text());
        }
        const resolve = async () => {
          const res = await fetch(`${server.url}/api/v1/resolve?ref=${REG}/redis:v1.0`);
          assert.equal(res.status, 200);
          return ((await res.json()) as { version: string }).version;
        };
        assert.equal(await resolve(), 'v1.0.3');

        const payload = (repo: string) =>
          Buffer.from(
            JSON.stringify({
              ref: 'refs/heads/main',
              repository: { full_name: repo, default_branch: 'main' },
              pad: 'x'.repeat(24 * MIB),
            }),
          );
        const big = payload('acme/r7');
        const wrong = { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` };

        // Two deliveries being checked (one worker checks them in turn): the unrelated resolve is
        // answered before both are.
        const order: string[] = [];
        const attack = Promise.all(
          [0, 1].map(() =>
            post(server.url, big, wrong).then((r) => {
              order.push('webhook');
              return r;
            }),
          ),
        );
        await until('a delivery is admitted', async () => (await webhookWork(server.url)).running! >= 1);
        assert.equal(await resolve(), 'v1.0.3');
        order.push('resolve');
        for (const answered of await attack) {
          assert.equal(answered.status, 401, answered.body);
          assert.match(answered.body, /INVALID_SIGNATURE/);
        }
        assert.equal(order.at(-1), 'webhook', order.join(' '));

        // A flood of 16: at most two bodies are read and checked at once, at most 8 wait, the
        // rest are refused with 503 and Retry-After; resolve keeps answering meanwhile.
        const flood = Array.from({ length: 16 }, () => post(server.url, big, wrong));
        let settled = 0;
        for (const f of flood) void f.then(() => settled++);
        let resolvedDuring = 0;
        while (settled < flood.length) {
          assert.equal(await resolve(), 'v1.0.3');
          if (settled < flood.length) resolvedDuring++;
        }
        const statuses = (await Promise.all(flood)).map((r) => r.status);
        assert.ok(resolvedDuring > 0);
        // 0: refused, and the closed socket lost the 503 (see post()).
        assert.ok(
          statuses.every((s) => s === 401 || s === 503 || s === 0),
          statuses.join(' '),
        );
        assert.ok(
          statuses.some((s) => s === 503 || s === 0),
          statuses.join(' '),
        );
        for (const r of await Promise.all(flood)) {
          if (r.status === 503) {
            assert.equal(r.headers['retry-after'], '1');
            assert.match(r.body, /SERVER_BUSY/);
          }
        }
        const work = await webhookWork(server.url);
        assert.ok(work.peakRunning! <= 2, JSON.stringify(work));
        assert.ok(work.refused! >= 1, JSON.stringify(work));
        assert.equal(work.running, 0);
        assert.equal(work.waiting, 0);

        // Beyond GitHub's 25 MiB: 413.
        const huge = Buffer.alloc(25 * MIB + 1, 0x20);
        const tooBig = await post(server.url, huge, wrong);
        assert.ok(tooBig.status === 413 || tooBig.status === 0, `${tooBig.status} ${tooBig.body}`);
        if (tooBig.status === 413) assert.match(tooBig.body, /BODY_TOO_LARGE/);

        // A correctly signed push syncs the one registry of its repository.
        const push = JSON.stringify({
          ref: 'refs/heads/main',
          repository: { full_name: 'acme/r12', default_branch: 'main' },
        });
        const signed = await post(server.url, Buffer.from(push), {
          'x-github-event': 'push',
          'x-github-delivery': 'flood-1',
          'x-hub-signature-256': `sha256=${createHmac('sha256', 'secret-12').update(push).digest('hex')}`,
        });
        assert.equal(signed.status, 202, signed.body);
        assert.deepEqual(JSON.parse(signed.body), { syncing: ['github.com/acme/r12'] });
        // Signed with another registry's secret: not this repository's.
        const crossed = await post(server.url, Buffer.from(push), {
          'x-github-event': 'push',
          'x-hub-signature-256': `sha256=${createHmac('sha256', 'secret-13').update(push).digest('hex')}`,
        });
        assert.equal(crossed.status, 401, crossed.body);
        assert.equal(server.exited(), undefined, server.log().slice(-2000));
        assert.equal(await server.stop(), 0);
      } finally {
        server.dispose();
        await standin.close();
      }
    });
  });
}

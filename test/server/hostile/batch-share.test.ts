/**
 * Issue 25 item 3: batch resolve cannot take the event loop or one caller's share of it. A real
 * dm-registry gets 30 anonymous batches of 1,000 distinct references at once from one address: they
 * run one at a time for that caller (8 more wait, the rest are refused with 429 CALLER_BUSY and
 * Retry-After), each answered in slices, so an unrelated resolve is answered while they run;
 * callers with a token are not held to the anonymous share, but to the server's bound of 2 at once.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { DIALECTS, FIXTURES } from '../helpers.js';
import { ADMIN, boundedWork, startRegistry } from './process.js';

const REG = 'github.com/dm-samples/templates';

async function batch(url: string, token?: string) {
  const refs = Array.from({ length: 1000 }, (_, i) =>
    i % 2 ? `${REG}/redis:v1.0` : `${REG}/t${randomBytes(12).toString('hex')}:v1`,
  );
  const res = await fetch(`${url}/api/v1/resolve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ refs }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
}

const batchWork = (url: string) => boundedWork(url, 'batch-resolve');

for (const dialect of DIALECTS) {
  describe(`hostile: batch resolve share (${dialect})`, () => {
    it('30 anonymous batches of 1,000 references from one address, then 12 with a token', async () => {
      const server = await startRegistry(['--index', FIXTURES], { dialect });
      try {
        const resolve = async () => {
          const res = await fetch(`${server.url}/api/v1/resolve?ref=${REG}/redis:v1.0`);
          assert.equal(res.status, 200);
          return ((await res.json()) as { version: string }).version;
        };
        assert.equal(await resolve(), 'v1.0.3');
        const flood = Array.from({ length: 30 }, () => batch(server.url));
        let settled = 0;
        for (const f of flood) void f.then(() => settled++);
        const limit = Date.now() + 120_000;
        while ((await batchWork(server.url)).running !== 1) {
          assert.ok(Date.now() < limit && settled < flood.length, 'no batch was seen running');
        }
        // An unrelated resolve is answered while the caller's batches are still being answered.
        assert.equal(await resolve(), 'v1.0.3');
        assert.ok(settled < flood.length, `all ${flood.length} batches were answered before one resolve`);
        const answers = await Promise.all(flood);
        const ok = answers.filter((a) => a.status === 200);
        const refused = answers.filter((a) => a.status === 429);
        assert.equal(ok.length + refused.length, answers.length, answers.map((a) => a.status).join(' '));
        assert.ok(ok.length >= 9, `${ok.length} answered`);
        assert.ok(refused.length >= 1, `${refused.length} refused`);
        for (const r of refused) {
          assert.equal(r.retryAfter, '1');
          assert.match(r.body, /CALLER_BUSY/);
        }
        const results = (JSON.parse(ok[0]!.body) as { results: { ref: string; resolution?: unknown }[] })
          .results;
        assert.equal(results.length, 1000);
        assert.equal(results.filter((r) => r.resolution).length, 500);
        // One address: one batch at a time.
        assert.equal((await batchWork(server.url)).peakRunning, 1);

        // With a token: no per-caller share, the server's bound of 2 at once.
        const withToken = await Promise.all(Array.from({ length: 12 }, () => batch(server.url, ADMIN)));
        assert.deepEqual(
          withToken.map((a) => a.status),
          withToken.map(() => 200),
        );
        const work = await batchWork(server.url);
        assert.ok(work.peakRunning! <= 2, JSON.stringify(work));
        assert.equal(work.running, 0);
        assert.equal(server.exited(), undefined, server.log().slice(-2000));
        assert.equal(await server.stop(), 0);
      } finally {
        server.dispose();
      }
    });
  });
}

/**
 * The mirror's upstream client against a real HTTP origin behind the fault-injecting proxy:
 * answers pass through, failures open the breaker, an open breaker answers at once without
 * contacting the upstream, and the state names what happened.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DmError, httpStatusFor } from '../../client/src/error.js';
import { Upstream } from '../../server/src/mirror/upstream.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';

let origin: Server;
let proxy: FaultProxy;

before(async () => {
  origin = createServer((req, res) => {
    if (req.url?.startsWith('/api/v1/etag')) {
      if (req.headers['if-none-match'] === '"v1"') res.writeHead(304, { etag: '"v1"' }).end();
      else res.writeHead(200, { 'content-type': 'application/json', etag: '"v1"' }).end('{"n":1}');
      return;
    }
    if (req.url?.startsWith('/api/v1/missing')) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"error":{"code":"NOT_FOUND","message":"no"}}');
      return;
    }
    if (req.url?.startsWith('/api/v1/big')) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(2048));
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ path: req.url, auth: req.headers.authorization ?? null }));
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  proxy = await startFaultProxy(`http://127.0.0.1:${(origin.address() as AddressInfo).port}`);
});

after(async () => {
  await proxy.close();
  await new Promise<void>((resolve) => origin.close(() => resolve()));
});

function clock(start = Date.parse('2026-01-01T00:00:00Z')) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<DmError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DmError, `expected a DmError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}`);
}

describe('Upstream', () => {
  it('passes answers through with the token, and 404 is an answer, not a failure', async () => {
    proxy.set({ mode: 'pass' });
    const up = new Upstream({ url: `${proxy.url}/`, token: 's3cret' });
    const ok = await up.getJson<{ path: string; auth: string }>({ path: '/api/v1/x?y=1' });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json, { path: '/api/v1/x?y=1', auth: 'Bearer s3cret' });
    const missing = await up.get({ path: '/api/v1/missing' });
    assert.equal(missing.status, 404);
    assert.equal(up.state().state, 'ok');
    assert.equal(up.isOpen(), false);
  });

  it('sends If-None-Match and returns 304 without a body', async () => {
    proxy.set({ mode: 'pass' });
    const up = new Upstream({ url: proxy.url });
    const first = await up.getJson<{ n: number }>({ path: '/api/v1/etag' });
    assert.equal(first.headers.get('etag'), '"v1"');
    const second = await up.getJson({ path: '/api/v1/etag', etag: '"v1"' });
    assert.equal(second.status, 304);
    assert.equal(second.json, undefined);
  });

  for (const [label, mode, state] of [
    ['a refused connection', { mode: 'refuse' }, 'unreachable'],
    ['503', { mode: 'status', status: 503 }, 'unreachable'],
    ['401 (an expired token)', { mode: 'status', status: 401 }, 'unauthorized'],
    ['403', { mode: 'status', status: 403 }, 'unauthorized'],
    ['429', { mode: 'status', status: 429, retryAfter: '30' }, 'rate-limited'],
  ] as const) {
    it(`opens the breaker on ${label}, then fails at once without a request, then probes`, async () => {
      proxy.set(mode);
      const c = clock();
      const up = new Upstream({ url: proxy.url, now: c.now, baseBackoffMs: 1000 });
      const first = await rejectsWith(up.get({ path: '/api/v1/resolve?ref=a' }), 'UPSTREAM_UNAVAILABLE');
      assert.equal(httpStatusFor(first), 502);
      assert.match(first.message, new RegExp(proxy.url.replace(/[.:/]/g, '\\$&')));
      assert.doesNotMatch(first.message, /injected/, 'the upstream error text is never passed through');
      assert.equal(up.state().state, state);
      assert.equal(up.isOpen(), true);
      const sent = up.requests;
      const seen = proxy.seen.length;
      await rejectsWith(up.get({ path: '/api/v1/resolve?ref=b' }), 'UPSTREAM_UNAVAILABLE');
      assert.equal(up.requests, sent, 'an open breaker sends nothing');
      assert.equal(proxy.seen.length, seen);
      // After the backoff (30 s for the 429's Retry-After), one probe goes out; it succeeds.
      proxy.set({ mode: 'pass' });
      c.advance(30_001);
      const probe = await up.get({ path: '/api/v1/ping' });
      assert.equal(probe.status, 200);
      assert.equal(up.state().state, 'ok');
      assert.equal(up.isOpen(), false);
    });
  }

  it('doubles the backoff while failures continue', async () => {
    proxy.set({ mode: 'status', status: 500 });
    const c = clock();
    const up = new Upstream({ url: proxy.url, now: c.now, baseBackoffMs: 1000 });
    await rejectsWith(up.get({ path: '/a' }), 'UPSTREAM_UNAVAILABLE');
    c.advance(1001);
    await rejectsWith(up.get({ path: '/a' }), 'UPSTREAM_UNAVAILABLE'); // probe fails: 2 s now
    c.advance(1500);
    const before = up.requests;
    await rejectsWith(up.get({ path: '/a' }), 'UPSTREAM_UNAVAILABLE');
    assert.equal(up.requests, before, 'still open at 1.5 s of a 2 s backoff');
    c.advance(600);
    await rejectsWith(up.get({ path: '/a' }), 'UPSTREAM_UNAVAILABLE');
    assert.equal(up.requests, before + 1, 'probed after 2 s');
    const state = up.state();
    assert.equal(state.state, 'unreachable');
    assert.equal(
      state.state === 'unreachable' && state.since,
      '2026-01-01T00:00:00.000Z',
      'since the first failure',
    );
  });

  it('times out a hanging upstream and says so (504), then fails at once saying it timed out (502)', async () => {
    proxy.set({ mode: 'hang' });
    const up = new Upstream({ url: proxy.url, timeoutMs: 200 });
    const error = await rejectsWith(up.get({ path: '/slow' }), 'UPSTREAM_TIMEOUT');
    assert.equal(error.message, `the upstream registry ${proxy.url} did not answer /slow within 0.2 s`);
    assert.equal(httpStatusFor(error), 504);
    const open = await rejectsWith(up.get({ path: '/slow' }), 'UPSTREAM_UNAVAILABLE');
    assert.match(open.message, /timed out/);
    assert.equal(httpStatusFor(open), 502);
    proxy.set({ mode: 'pass' });
  });

  it('names an HTML answer as not a registry server', async () => {
    proxy.set({ mode: 'html' });
    const up = new Upstream({ url: proxy.url });
    const error = await rejectsWith(up.getJson({ path: '/api/v1/resolve?ref=x' }), 'UPSTREAM_NOT_A_REGISTRY');
    assert.match(error.message, /is not a dm registry server \(it answered text\/html/);
    proxy.set({ mode: 'pass' });
  });

  it('refuses a body over the bound without failing the upstream', async () => {
    proxy.set({ mode: 'pass' });
    const up = new Upstream({ url: proxy.url, maxBodyBytes: 1024 });
    const error = await rejectsWith(up.get({ path: '/api/v1/big' }), 'UPSTREAM_ANSWER_TOO_LARGE');
    assert.equal(up.state().state, 'ok');
    // The upstream's fault, not the caller's: a mirror answers 502, not 422 (issue 25 item 13).
    assert.equal(httpStatusFor(error), 502);
  });

  it('refuses URLs with credentials, queries or other schemes', () => {
    for (const bad of [
      'ftp://x',
      'http://u:p@h',
      'http://h/?access_token=1',
      'not a url',
      '--upload-pack=x',
    ]) {
      assert.throws(
        () => Upstream.normaliseUrl(bad),
        (e: unknown) => e instanceof DmError && e.code === 'INVALID_UPSTREAM',
      );
    }
    assert.equal(Upstream.normaliseUrl('https://reg.example:8443/base/'), 'https://reg.example:8443/base');
  });
});

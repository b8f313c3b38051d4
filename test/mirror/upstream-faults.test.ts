/**
 * Issue 25 item 13 (docs/mirroring.md, "When the upstream fails"; docs/errors.md): what a mirror
 * answers when its upstream misbehaves, through the server's app on each database, with a real
 * origin behind the fault-injecting proxy. An upstream that does not answer in time is 504
 * `UPSTREAM_TIMEOUT`; one that answers an error (400, 500) or garbage (malformed JSON, an archive
 * that is none, a page) is 502; never the caller's 400 or 422. Every answer is one sentence naming
 * the upstream, and none relays the upstream's own text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS, type DialectTestServer, testServerOn } from '../server/helpers.js';
import { type FaultMode, type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';

const TIMEOUT_MS = 1500;

interface Case {
  name: string;
  fault: FaultMode;
  status: number;
  code: string;
}

const RESOLVE = '/api/v1/resolve';
const ARCHIVES = '/api/v1/templates/';
const CASES: readonly Case[] = [
  {
    name: 'a resolve that hangs',
    fault: { mode: 'hang', only: RESOLVE },
    status: 504,
    code: 'UPSTREAM_TIMEOUT',
  },
  {
    name: 'a resolve answered 400',
    fault: { mode: 'status', status: 400, only: RESOLVE },
    status: 502,
    code: 'UPSTREAM_INVALID_ANSWER',
  },
  {
    name: 'a resolve answered 500',
    fault: { mode: 'status', status: 500, only: RESOLVE },
    status: 502,
    code: 'UPSTREAM_UNAVAILABLE',
  },
  {
    name: 'a resolve answered with malformed JSON',
    fault: { mode: 'malformed', only: RESOLVE },
    status: 502,
    code: 'UPSTREAM_NOT_A_REGISTRY',
  },
  {
    name: 'a resolve answered with a page',
    fault: { mode: 'html', only: RESOLVE },
    status: 502,
    code: 'UPSTREAM_NOT_A_REGISTRY',
  },
  {
    name: 'an archive that hangs',
    fault: { mode: 'hang', only: ARCHIVES },
    status: 504,
    code: 'UPSTREAM_TIMEOUT',
  },
  {
    name: 'an archive answered 400',
    fault: { mode: 'status', status: 400, only: ARCHIVES },
    status: 502,
    code: 'UPSTREAM_INVALID_ANSWER',
  },
  {
    name: 'an archive that is no archive',
    fault: { mode: 'malformed', only: ARCHIVES },
    status: 502,
    code: 'UPSTREAM_INVALID_ANSWER',
  },
];

let origin: RunningRegistry;
let proxy: FaultProxy;

before(async () => {
  origin = await startRegistry(['registry-fixtures']);
  proxy = await startFaultProxy(origin.url);
});
after(async () => {
  await proxy?.close();
  await origin?.stop();
});

for (const dialect of DIALECTS)
  describe(`a mirror whose upstream fails (${dialect})`, () => {
    // A mirror per case: each starts with a closed breaker and nothing stored.
    let mirrors: DialectTestServer[] = [];
    const mirror = async () => {
      const m = await testServerOn(dialect, {
        upstreams: [{ url: proxy.url }],
        upstreamTimeoutMs: TIMEOUT_MS,
      });
      mirrors.push(m);
      return m;
    };
    after(async () => {
      for (const m of mirrors) await m.close();
      mirrors = [];
      proxy.set({ mode: 'pass' });
    });

    async function resolve(m: DialectTestServer, ref: string) {
      const res = await m.app.request(`/api/v1/resolve?ref=${encodeURIComponent(ref)}`);
      const text = await res.text();
      const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
      return { status: res.status, code: body.error?.code, message: body.error?.message ?? '', text };
    }

    for (const c of CASES) {
      it(`${c.name}: ${c.status} ${c.code}, one sentence naming the upstream`, async () => {
        const m = await mirror();
        proxy.set(c.fault);
        const answer = await resolve(m, 'github.com/dm-samples/templates/redis:v1.0');
        proxy.set({ mode: 'pass' });
        assert.equal(answer.status, c.status, answer.text);
        assert.equal(answer.code, c.code, answer.text);
        assert.ok(answer.message.includes(proxy.url), `names the upstream: ${answer.message}`);
        assert.doesNotMatch(answer.message, /\n|injected|captive portal| {4}at /, answer.message);
        if (c.status === 504) assert.match(answer.message, new RegExp(`within ${TIMEOUT_MS / 1000} s`));
      });
    }

    for (const c of CASES.filter((x) => x.fault.mode !== 'status')) {
      it(`${c.name}, for a content endpoint of a version not held: ${c.status} ${c.code}`, async () => {
        const m = await mirror();
        proxy.set(c.fault);
        const res = await m.app.request(
          '/api/v1/templates/github.com/dm-samples/templates/redis/versions/v1.0.3/files/redis.jinja',
        );
        proxy.set({ mode: 'pass' });
        const text = await res.text();
        assert.equal(res.status, c.status, text);
        const error = (JSON.parse(text) as { error: { code: string; message: string } }).error;
        assert.equal(error.code, c.code, text);
        assert.ok(error.message.includes(proxy.url), error.message);
      });
    }

    it('once a timeout opened the breaker, a request fails at once with 502 saying it timed out', async () => {
      const m = await mirror();
      proxy.set({ mode: 'hang', only: RESOLVE });
      const first = await resolve(m, 'github.com/dm-samples/templates/hpa:v1');
      assert.equal(first.status, 504, first.text);
      const seen = proxy.seen.length;
      const second = await resolve(m, 'github.com/dm-samples/templates/secret:v1');
      proxy.set({ mode: 'pass' });
      assert.equal(second.status, 502, second.text);
      assert.equal(second.code, 'UPSTREAM_UNAVAILABLE');
      assert.match(second.message, /timed out/);
      assert.ok(second.message.includes(proxy.url), second.message);
      assert.equal(proxy.seen.length, seen, 'an open breaker sends nothing');
    });
  });

/**
 * Mirroring with real processes (docs/mirroring.md): an origin dm-registry indexing
 * registry-fixtures, a mirror dm-registry started with `--upstream`, and the fault-injecting proxy
 * between them. The mirror pulls through with two upstream requests, serves what it stored like
 * indexed content (same digests and bytes as the origin), keeps serving it while the upstream
 * refuses or answers 503/401/429, fails fast for what it never saw, and `dm install` through it
 * writes the same dm.lock as through the origin.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { isolatedEnv, runDm } from '../support/run-cli.js';
import { DIALECTS, dbArgs } from './dialect.js';

const REDIS = 'github.com/dm-samples/templates/redis:v1.0';
let origin: RunningRegistry;
let proxy: FaultProxy;
let mirror: RunningRegistry;
const dir = mkdtempSync(join(tmpdir(), 'dm-mirror-e2e-'));

after(() => rmSync(dir, { recursive: true, force: true }));

async function resolve(server: RunningRegistry, ref: string) {
  const res = await fetch(`${server.url}/api/v1/resolve?ref=${encodeURIComponent(ref)}`);
  return {
    status: res.status,
    cacheStatus: res.headers.get('cache-status'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

for (const dialect of DIALECTS) {
  describe(`a mirror on ${dialect}`, () => {
    before(async () => {
      origin = await startRegistry(['registry-fixtures']);
      proxy = await startFaultProxy(origin.url);
      mirror = await startRegistry([], {}, [
        '--upstream',
        proxy.url,
        '--upstream-ttl',
        '300',
        ...(await dbArgs(dialect)),
      ]);
    });

    after(async () => {
      await mirror?.stop();
      await proxy?.close();
      await origin?.stop();
    });

    describe('a dm-registry mirroring another', () => {
      it('pulls an unseen version through with two upstream requests and answers as the origin does', async () => {
        proxy.reset();
        const pulled = await resolve(mirror, REDIS);
        assert.equal(pulled.status, 200, JSON.stringify(pulled.body));
        assert.equal(pulled.cacheStatus, 'dm-registry; fwd=miss; stored');
        assert.equal(proxy.count('/api/v1/resolve'), 1);
        assert.equal(proxy.count('/api/v1/templates/'), 1);
        assert.equal(proxy.forwarded.length, 2, proxy.forwarded.join('\n'));
        const direct = await resolve(origin, REDIS);
        for (const key of [
          'resolved',
          'registry',
          'version',
          'digest',
          'files',
          'kind',
          'schema',
          'templateFile',
        ]) {
          assert.deepEqual(pulled.body[key], direct.body[key], key);
        }
      });

      it('serves the stored version from its own store: resolve, files and archive', async () => {
        proxy.reset();
        const again = await resolve(mirror, REDIS);
        assert.equal(again.status, 200);
        assert.equal(again.cacheStatus, 'dm-registry; hit');
        const files = again.body.files as { path: string; sha256: string }[];
        const version = String(again.body.version);
        for (const f of files) {
          const path = `/api/v1/templates/github.com/dm-samples/templates/redis/versions/${version}/files/${f.path}`;
          const [m, o] = await Promise.all([fetch(`${mirror.url}${path}`), fetch(`${origin.url}${path}`)]);
          assert.equal(m.status, 200, f.path);
          assert.ok(Buffer.from(await m.arrayBuffer()).equals(Buffer.from(await o.arrayBuffer())), f.path);
        }
        const archive = await fetch(
          `${mirror.url}/api/v1/templates/github.com/dm-samples/templates/redis/versions/${version}/archive.tar.gz`,
        );
        assert.equal(archive.status, 200);
        assert.equal(proxy.forwarded.length, 0, `no upstream request: ${proxy.forwarded.join(', ')}`);
      });

      for (const mode of [
        { mode: 'refuse' },
        { mode: 'status', status: 503 },
        { mode: 'status', status: 401 },
        { mode: 'status', status: 429, retryAfter: '1' },
      ] as const) {
        it(`keeps serving what it stored while the upstream ${mode.mode === 'refuse' ? 'refuses connections' : `answers ${mode.status}`}`, async () => {
          proxy.set(mode);
          try {
            for (const ref of [REDIS, `github.com/dm-samples/templates/redis:=${'v1.0.3'}`]) {
              const r = await resolve(mirror, ref);
              assert.equal(r.status, 200, `${ref}: ${JSON.stringify(r.body)}`);
              assert.match(String(r.cacheStatus), /^dm-registry; hit/);
            }
          } finally {
            proxy.set({ mode: 'pass' });
          }
        });
      }

      it('fails fast with UPSTREAM_UNAVAILABLE, naming the upstream, for what it never saw while the upstream is down', async () => {
        proxy.set({ mode: 'refuse' });
        try {
          const first = await resolve(mirror, 'github.com/dm-samples/templates/hpa:v1');
          assert.equal(first.status, 502, JSON.stringify(first.body));
          const error = first.body.error as { code: string; message: string };
          assert.equal(error.code, 'UPSTREAM_UNAVAILABLE');
          assert.ok(error.message.includes(proxy.url), error.message);
          const seen = proxy.seen.length;
          const second = await resolve(mirror, 'github.com/dm-samples/templates/secret:v1');
          assert.equal(second.status, 502);
          assert.equal(proxy.seen.length, seen, 'the open breaker sent nothing upstream');
          // Cached content is still served meanwhile.
          assert.equal((await resolve(mirror, REDIS)).status, 200);
        } finally {
          proxy.set({ mode: 'pass' });
        }
      });

      it('pulls a version never resolved through the mirror on its archive and file endpoints, with the bytes of the origin', async () => {
        const base = '/api/v1/templates/github.com/dm-samples/templates';
        // The breaker may still be open from the previous test: wait for its backoff.
        let archive = await fetch(`${mirror.url}${base}/configmap/versions/v1/archive.tar.gz`);
        for (let i = 0; archive.status === 502 && i < 30; i++) {
          await new Promise((done) => setTimeout(done, 1000));
          archive = await fetch(`${mirror.url}${base}/configmap/versions/v1/archive.tar.gz`);
        }
        assert.equal(archive.status, 200, await archive.clone().text());
        assert.equal(archive.headers.get('cache-status'), 'dm-registry; fwd=miss; stored');
        const fromOrigin = await fetch(`${origin.url}${base}/configmap/versions/v1/archive.tar.gz`);
        assert.ok(
          Buffer.from(await archive.arrayBuffer()).equals(Buffer.from(await fromOrigin.arrayBuffer())),
        );
        proxy.reset();
        const again = await fetch(`${mirror.url}${base}/configmap/versions/v1/archive.tar.gz`);
        assert.equal(again.status, 200);
        assert.equal(again.headers.get('cache-status'), 'dm-registry; hit');
        await again.arrayBuffer();
        assert.equal(proxy.forwarded.length, 0, proxy.forwarded.join('\n'));

        const origins = (await resolve(origin, 'github.com/dm-samples/templates/namespace:=v1')).body;
        const file = (origins.files as { path: string }[])[0]!.path;
        const [m, o] = await Promise.all([
          fetch(`${mirror.url}${base}/namespace/versions/v1/files/${file}`),
          fetch(`${origin.url}${base}/namespace/versions/v1/files/${file}`),
        ]);
        assert.equal(m.status, 200);
        assert.equal(m.headers.get('cache-status'), 'dm-registry; fwd=miss; stored');
        assert.ok(Buffer.from(await m.arrayBuffer()).equals(Buffer.from(await o.arrayBuffer())));
        // Two upstream requests for the version: resolve and archive.
        assert.equal(proxy.forwarded.length, 2, proxy.forwarded.join('\n'));
        const missing = await fetch(`${mirror.url}${base}/namespace/versions/v9.9.9/files/${file}`);
        assert.equal(missing.status, 404);
      });

      it('answers UPSTREAM_UNAVAILABLE at once for the content of a version it never saw while the upstream is down', async () => {
        proxy.set({ mode: 'refuse' });
        try {
          const base = `${mirror.url}/api/v1/templates/github.com/dm-samples/templates/cron-job/versions`;
          const first = await fetch(`${base}/v1/archive.tar.gz`);
          assert.equal(first.status, 502);
          assert.equal(
            ((await first.json()) as { error: { code: string } }).error.code,
            'UPSTREAM_UNAVAILABLE',
          );
          const seen = proxy.seen.length;
          const second = await fetch(`${base}/v1/schema`);
          assert.equal(second.status, 502);
          await second.arrayBuffer();
          assert.equal(proxy.seen.length, seen, 'the open breaker sent nothing upstream');
        } finally {
          proxy.set({ mode: 'pass' });
        }
      });

      it('dm install through the mirror writes the same dm.lock as through the origin', async () => {
        const config =
          'resources:\n- name: cache\n  type: github.com/dm-samples/templates/redis:v1.0\n- name: web\n  type: github.com/dm-samples/templates/web-app:v1.1\n';
        const locks: string[] = [];
        for (const server of [origin, mirror]) {
          const work = mkdtempSync(join(dir, 'work-'));
          writeFileSync(join(work, 'config.yaml'), config);
          // The mirror's breaker may still be open from the previous test: wait for its backoff.
          let r = await runDm(['install', 'config.yaml', '--registry-url', server.url], {
            cwd: work,
            env: await isolatedEnv(),
          });
          for (let i = 0; r.code !== 0 && i < 30 && /UPSTREAM_UNAVAILABLE|upstream/.test(r.stderr); i++) {
            await new Promise((done) => setTimeout(done, 1000));
            r = await runDm(['install', 'config.yaml', '--registry-url', server.url], {
              cwd: work,
              env: await isolatedEnv(),
            });
          }
          assert.equal(r.code, 0, r.stderr);
          locks.push(readFileSync(join(work, 'dm.lock'), 'utf8'));
        }
        assert.equal(locks[1], locks[0]);
      });
    });

    describe('a mirror revalidating floating references (--upstream-ttl 0)', () => {
      let revalidating: RunningRegistry;
      let counting: FaultProxy;
      before(async () => {
        counting = await startFaultProxy(origin.url);
        revalidating = await startRegistry([], {}, [
          '--upstream',
          counting.url,
          '--upstream-ttl',
          '0',
          ...(await dbArgs(dialect)),
        ]);
      });
      after(async () => {
        await revalidating?.stop();
        await counting?.close();
      });

      it('the origin answers resolve with an ETag and 304 to If-None-Match', async () => {
        const url = `${origin.url}/api/v1/resolve?ref=${encodeURIComponent(REDIS)}`;
        const first = await fetch(url);
        assert.equal(first.status, 200);
        const etag = first.headers.get('etag');
        assert.match(String(etag), /^"[A-Za-z0-9_-]+"$/);
        await first.arrayBuffer();
        const same = await fetch(url, { headers: { 'if-none-match': String(etag) } });
        assert.equal(same.status, 304);
        assert.equal(same.headers.get('etag'), etag);
        assert.equal((await same.arrayBuffer()).byteLength, 0);
        const other = await fetch(url, { headers: { 'if-none-match': '"something-else"' } });
        assert.equal(other.status, 200);
        assert.equal(other.headers.get('etag'), etag);
        await other.arrayBuffer();
        const another = await fetch(`${origin.url}/api/v1/resolve?ref=${encodeURIComponent(`${REDIS}.1`)}`);
        assert.equal(another.status, 200);
        assert.notEqual(another.headers.get('etag'), etag, 'another resolution, another ETag');
        await another.arrayBuffer();
      });

      it('revalidates a floating reference with one conditional request answered 304, fetching no content', async () => {
        const pulled = await resolve(revalidating, REDIS);
        assert.equal(pulled.status, 200, JSON.stringify(pulled.body));
        assert.equal(pulled.cacheStatus, 'dm-registry; fwd=miss; stored');
        counting.reset();
        for (let i = 0; i < 3; i++) {
          const again = await resolve(revalidating, REDIS);
          assert.equal(again.status, 200);
          assert.equal(again.cacheStatus, 'dm-registry; hit; fwd=stale; fwd-status=304');
          assert.deepEqual(again.body, pulled.body);
        }
        assert.equal(counting.forwarded.length, 3, counting.forwarded.join('\n'));
        assert.equal(counting.count('/api/v1/resolve'), 3);
        assert.equal(counting.countStatus(304, '/api/v1/resolve'), 3, counting.answered.join('\n'));
        // The mirror's own answers carry an ETag too (a mirror can stand in front of a mirror).
        const res = await fetch(`${revalidating.url}/api/v1/resolve?ref=${encodeURIComponent(REDIS)}`);
        const etag = String(res.headers.get('etag'));
        await res.arrayBuffer();
        const conditional = await fetch(
          `${revalidating.url}/api/v1/resolve?ref=${encodeURIComponent(REDIS)}`,
          {
            headers: { 'if-none-match': etag },
          },
        );
        assert.equal(conditional.status, 304);
        // The registry's upstream state says when the upstream last answered.
        const info = await fetch(`${revalidating.url}/api/v1/registries/github.com/dm-samples/templates`);
        assert.equal(info.status, 200);
        const upstream = ((await info.json()) as { upstream?: { state: string; checkedAt: string | null } })
          .upstream;
        assert.equal(upstream?.state, 'ok', JSON.stringify(upstream));
      });

      it("an exact pin it holds is never revalidated; the registry's version list is, conditionally", async () => {
        const exact = (await resolve(revalidating, REDIS)).body.resolved as string;
        counting.reset();
        const r = await resolve(revalidating, exact);
        assert.equal(r.status, 200);
        assert.equal(r.cacheStatus, 'dm-registry; hit');
        // The quarantine and acceptance state of what it holds is revalidated in the background
        // (docs/mirroring.md): one request for the version list, answered 304 once it has an ETag.
        const list = '/api/v1/registries/github.com/dm-samples/templates/versions';
        for (let i = 0; i < 300 && counting.countStatus(304, list) === 0; i++) {
          await new Promise((done) => setTimeout(done, 100));
          assert.equal((await resolve(revalidating, exact)).cacheStatus, 'dm-registry; hit');
        }
        assert.ok(counting.countStatus(304, list) >= 1, counting.answered.join('\n'));
        assert.equal(counting.count('/api/v1/resolve'), 0, counting.forwarded.join('\n'));
        assert.equal(counting.count('/api/v1/templates/'), 0, counting.forwarded.join('\n'));
        assert.equal(counting.forwarded.length, counting.count(list), counting.forwarded.join('\n'));
      });
    });
  });
}

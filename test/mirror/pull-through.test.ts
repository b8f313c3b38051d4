/**
 * Pull-through against a real dm-registry origin (registry-fixtures indexed) behind the
 * fault-injecting proxy, storing into an in-memory target: two upstream requests per unseen
 * version, one exchange for concurrent first requests, verified content, remembered 404s, a stored
 * version never replaced by other bytes, and an open breaker that answers at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DmError } from '../../client/src/error.js';
import { versionDigest } from '../../client/src/registry/digest.js';
import type { Resolution } from '../../server/src/api/shapes.js';
import {
  archivePath,
  type DigestMismatch,
  type MirrorTarget,
  type PulledVersion,
  PullThrough,
} from '../../server/src/mirror/pull-through.js';
import { Upstream } from '../../server/src/mirror/upstream.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';

let origin: RunningRegistry;
let proxy: FaultProxy;

before(async () => {
  origin = await startRegistry(['registry-fixtures']);
  proxy = await startFaultProxy(origin.url);
});

after(async () => {
  await proxy.close();
  await origin.stop();
});

class MemoryTarget implements MirrorTarget {
  readonly stored = new Map<string, PulledVersion>();
  readonly mismatches: string[] = [];
  private key(r: Resolution): string {
    return `${r.registry}/${r.collection}/${r.template}@${r.version}`;
  }
  async storedDigest(r: Resolution): Promise<string | undefined> {
    return this.stored.get(this.key(r))?.resolution.digest;
  }
  async store(v: PulledVersion): Promise<void> {
    this.stored.set(this.key(v.resolution), v);
  }
  reportMismatch(m: DigestMismatch): void {
    this.mismatches.push(`${m.reference} ${m.storedDigest} -> ${m.upstreamDigest}`);
  }
}

function setup(options: { negativeTtlMs?: number } = {}) {
  proxy.set({ mode: 'pass' });
  proxy.reset();
  const upstream = new Upstream({ url: proxy.url });
  const target = new MemoryTarget();
  return { upstream, target, pull: new PullThrough({ upstreams: [upstream], target, ...options }) };
}

describe('PullThrough', () => {
  it('stores an unseen version with exactly two upstream requests, verified', async () => {
    const { target, pull } = setup();
    const result = await pull.pull('github.com/dm-samples/templates/redis:v1.0');
    assert.equal(result.kind, 'stored');
    assert.equal(proxy.forwarded.length, 2, proxy.forwarded.join('\n'));
    assert.equal(proxy.count('/api/v1/resolve'), 1);
    assert.equal(proxy.count('/api/v1/templates/'), 1);
    const [stored] = [...target.stored.values()];
    assert.ok(stored);
    assert.equal(stored.private, false);
    assert.equal(stored.resolution.version, 'v1.0.3');
    assert.deepEqual(
      stored.files.map((f) => f.path),
      stored.resolution.files.map((f) => f.path),
    );
    assert.equal(versionDigest(stored.files), stored.resolution.digest);
  });

  it('collapses concurrent first requests into one exchange', async () => {
    const { target, pull } = setup();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => pull.pull('github.com/dm-samples/templates/web-app:v1.1')),
    );
    assert.ok(results.every((r) => r.kind === 'stored'));
    assert.equal(proxy.forwarded.length, 2, proxy.forwarded.join('\n'));
    assert.equal(target.stored.size, 1);
  });

  it('asks only the resolve when the version is already stored with the same digest', async () => {
    const { pull } = setup();
    await pull.pull('github.com/dm-samples/templates/redis:v1.0');
    proxy.reset();
    const again = await pull.pull('github.com/dm-samples/templates/redis:v1.0');
    assert.equal(again.kind, 'present');
    assert.deepEqual(
      proxy.forwarded.map((l) => l.split('?')[0]),
      ['GET /api/v1/resolve'],
    );
  });

  it('never replaces a stored version whose digest the upstream now answers differently', async () => {
    const { target, pull } = setup();
    await pull.pull('github.com/dm-samples/templates/redis:v1.0');
    const [key, stored] = [...target.stored.entries()][0]!;
    const old = `sha256:${'0'.repeat(64)}`;
    target.stored.set(key, { ...stored, resolution: { ...stored.resolution, digest: old } });
    proxy.reset();
    const result = await pull.pull('github.com/dm-samples/templates/redis:v1.0');
    assert.equal(result.kind, 'mismatch');
    assert.equal(target.stored.get(key)!.resolution.digest, old, 'the stored version is kept');
    assert.equal(target.mismatches.length, 1);
    assert.equal(proxy.count('/api/v1/templates/'), 0, 'no archive is fetched for a mismatch');
  });

  it('remembers a not-found answer for the negative TTL', async () => {
    const { pull } = setup({ negativeTtlMs: 60_000 });
    const first = await pull.pull('github.com/dm-samples/templates/nosuch:v1');
    assert.equal(first.kind, 'not-found');
    const second = await pull.pull('github.com/dm-samples/templates/nosuch:v1');
    assert.equal(second.kind, 'not-found');
    assert.equal(proxy.forwarded.length, 1);
  });

  it('fails at once with UPSTREAM_UNAVAILABLE naming the upstream once it is known down', async () => {
    const { pull } = setup();
    proxy.set({ mode: 'refuse' });
    await assert.rejects(pull.pull('github.com/dm-samples/templates/hpa:v1'), (e: unknown) => {
      return e instanceof DmError && e.code === 'UPSTREAM_UNAVAILABLE' && e.message.includes(proxy.url);
    });
    const seen = proxy.seen.length;
    assert.equal(pull.allOpen(), true);
    await assert.rejects(
      pull.pull('github.com/dm-samples/templates/hpa:v1'),
      /UPSTREAM_UNAVAILABLE|unreachable/,
    );
    assert.equal(proxy.seen.length, seen, 'an open breaker sends nothing');
  });

  it('refuses content that does not match the upstream resolution', async () => {
    // An upstream whose archive differs from what its resolve says: a flipped resolution digest.
    const upstream = new Upstream({ url: proxy.url });
    proxy.set({ mode: 'pass' });
    const lying: Upstream = Object.create(upstream);
    lying.getJson = async <T>(request: Parameters<Upstream['getJson']>[0]) => {
      const answer = await upstream.getJson<Resolution>(request);
      const r = answer.json!;
      return {
        ...answer,
        json: { ...r, files: r.files.map((f, i) => (i === 0 ? { ...f, sha256: 'f'.repeat(64) } : f)) } as T,
      };
    };
    const target = new MemoryTarget();
    const pull = new PullThrough({ upstreams: [lying], target });
    await assert.rejects(pull.pull('github.com/dm-samples/templates/redis:v1.0'), (e: unknown) => {
      // The upstream's fault (502), naming it: never the caller's 400.
      return (
        e instanceof DmError &&
        e.code === 'UPSTREAM_INVALID_ANSWER' &&
        e.details?.cause === 'CONTENT_MISMATCH' &&
        e.message.startsWith(proxy.url) &&
        /sha256/.test(e.message)
      );
    });
    assert.equal(target.stored.size, 0);
  });

  it('builds archive paths for root and named collections', () => {
    assert.equal(
      archivePath({ registry: 'github.com/o/r', collection: '', template: 'redis', version: 'v1.0.3' }),
      '/api/v1/templates/github.com/o/r/redis/versions/v1.0.3/archive.tar.gz',
    );
    assert.equal(
      archivePath({ registry: 'github.com/o/r', collection: 'big-data', template: 'spark', version: 'v2' }),
      '/api/v1/templates/github.com/o/r/big-data/spark/versions/v2/archive.tar.gz',
    );
  });
});

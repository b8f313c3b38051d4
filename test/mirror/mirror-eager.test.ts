/**
 * Eager mirroring with real processes (docs/mirroring.md, "Mirroring a whole registry"): an origin
 * dm-registry indexing a copy of registry-fixtures, the fault-injecting proxy, and two mirrors, one
 * given the registry by `--index <upstream>/<name>`, one by `POST /api/v1/registries` (and a third
 * whose registry a pull-through created before that POST made it a whole mirror). A mirror
 * holds every version after its sync (served with the upstream refusing connections), revalidates
 * the version list with one conditional request (304), shows the upstream's state and staleness,
 * and flags a version deleted upstream `removedUpstream` while it keeps serving it.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { repoRoot } from '../support/run-cli.js';
import { DIALECTS, dbArgs } from './dialect.js';

const NAME = 'github.com/dm-samples/templates';
const ADMIN = 'eager-mirror-admin';
const env = { DM_ADMIN_TOKEN: ADMIN };
const admin = { authorization: `Bearer ${ADMIN}` };
const dir = mkdtempSync(join(tmpdir(), 'dm-mirror-eager-'));
let registryDir = join(dir, 'registry');
let origin: RunningRegistry;
let proxy: FaultProxy;
let indexed: RunningRegistry;
let posted: RunningRegistry;
let pulled: RunningRegistry;

interface RegistryInfo {
  id: number;
  interval: number | null;
  sync: { status: string; error: string | null };
  counts: { versions: number; templates: number };
  source: { type: string; location: string };
  upstream?: {
    url: string;
    state: string;
    since?: string;
    until?: string;
    detail?: string;
    checkedAt: string | null;
    staleSeconds: number | null;
    removedUpstream: number;
  };
}

async function json<T>(url: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as T };
}

async function info(server: RunningRegistry): Promise<RegistryInfo> {
  const r = await json<RegistryInfo>(`${server.url}/api/v1/registries/${NAME}`, { headers: admin });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** Runs a sync and returns its outcome (the endpoint waits for it). */
async function sync(server: RunningRegistry): Promise<{ status: string; apiRequests: number }> {
  const r = await json<{ status: string; apiRequests: number; error?: unknown }>(
    `${server.url}/api/v1/registries/${NAME}/sync`,
    { method: 'POST', headers: admin },
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** The origin's version list: what every mirror must hold. */
async function originVersions(): Promise<
  { collection: string; template: string; version: string; digest: string }[]
> {
  const r = await json<{
    versions: { collection: string; template: string; version: string; digest: string }[];
  }>(`${origin.url}/api/v1/registries/${NAME}/versions`);
  assert.equal(r.status, 200);
  return r.body.versions;
}

function pin(v: { collection: string; template: string; version: string }): string {
  return `${[NAME, v.collection, v.template].filter(Boolean).join('/')}:=${v.version}`;
}

after(() => rmSync(dir, { recursive: true, force: true }));

for (const dialect of DIALECTS) {
  describe(`eager mirrors on ${dialect}`, () => {
    before(async () => {
      registryDir = join(dir, `registry-${dialect}`);
      cpSync(join(repoRoot, 'registry-fixtures'), registryDir, { recursive: true });
      origin = await startRegistry([registryDir], env);
      proxy = await startFaultProxy(origin.url);
      [indexed, posted, pulled] = await Promise.all([
        startRegistry([`${proxy.url}/${NAME}`], env, ['--upstream', proxy.url, ...(await dbArgs(dialect))]),
        startRegistry([], env, ['--upstream', proxy.url, ...(await dbArgs(dialect))]),
        startRegistry([], env, ['--upstream', proxy.url, ...(await dbArgs(dialect))]),
      ]);
    });

    after(async () => {
      await Promise.all([indexed?.stop(), posted?.stop(), pulled?.stop()]);
      await proxy?.close();
      await origin?.stop();
    });

    describe('a dm-registry mirroring a whole upstream registry', () => {
      it('the version list answers with an ETag and 304 to If-None-Match', async () => {
        const first = await fetch(`${origin.url}/api/v1/registries/${NAME}/versions`);
        assert.equal(first.status, 200);
        const etag = first.headers.get('etag');
        assert.ok(etag, 'an ETag');
        const body = (await first.json()) as { registry: string; versions: unknown[] };
        assert.equal(body.registry, NAME);
        assert.ok(body.versions.length > 20);
        const again = await fetch(`${origin.url}/api/v1/registries/${NAME}/versions`, {
          headers: { 'if-none-match': etag },
        });
        assert.equal(again.status, 304);
      });

      it('POST /api/v1/registries with <upstream>/<name> creates a mirrored registry that holds every version after its sync', async () => {
        const created = await json<RegistryInfo>(`${posted.url}/api/v1/registries`, {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify({ source: `${proxy.url}/${NAME}`, interval: 3600 }),
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        assert.equal(created.body.source.type, 'upstream');
        assert.equal(created.body.interval, 3600);
        // The sync started by the POST may still run: this one queues behind it and waits.
        const outcome = await sync(posted);
        assert.ok(['succeeded', 'unchanged'].includes(outcome.status), JSON.stringify(outcome));
        const expected = await originVersions();
        assert.equal((await info(posted)).counts.versions, expected.length);
      });

      it('POST /api/v1/registries with <upstream>/<name> of a registry so far only pulled through makes it a whole mirror (200), keeping its id', async () => {
        const pinned = await json<{ version: string }>(
          `${pulled.url}/api/v1/resolve?ref=${encodeURIComponent(`${NAME}/redis:=v1.1`)}`,
        );
        assert.equal(pinned.status, 200, JSON.stringify(pinned.body));
        const before = await info(pulled);
        assert.deepEqual(
          [before.source.type, before.interval, before.counts.versions],
          ['upstream', null, 1],
        );
        const post = (body: Record<string, unknown>) =>
          json<RegistryInfo & { error?: { code: string; message: string } }>(
            `${pulled.url}/api/v1/registries`,
            {
              method: 'POST',
              headers: { ...admin, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            },
          );
        const source = `${proxy.url}/${NAME}`;
        // What cannot be done says what can.
        const elsewhere = await post({ source: 'github.com/dm-samples/templates' });
        assert.equal(elsewhere.status, 409);
        assert.equal(elsewhere.body.error?.code, 'REGISTRY_EXISTS');
        assert.match(
          String(elsewhere.body.error?.message),
          new RegExp(`register source '${source}' to mirror it whole`),
        );
        const hidden = await post({ source, visibility: 'private' });
        assert.equal(hidden.status, 409);
        assert.match(
          String(hidden.body.error?.message),
          /pulled through as public: register it without visibility/,
        );
        assert.equal((await info(pulled)).interval, null, 'nothing changed by a refused POST');
        const mirrored = await post({ source, interval: 3600 });
        assert.equal(mirrored.status, 200, JSON.stringify(mirrored.body));
        assert.deepEqual(
          [mirrored.body.id, mirrored.body.source.type, mirrored.body.interval],
          [before.id, 'upstream', 3600],
        );
        const outcome = await sync(pulled);
        assert.ok(['succeeded', 'unchanged'].includes(outcome.status), JSON.stringify(outcome));
        assert.equal((await info(pulled)).counts.versions, (await originVersions()).length);
        // Now registered: a second POST is the usual conflict.
        const again = await post({ source });
        assert.equal(again.status, 409);
        assert.match(String(again.body.error?.message), /already exists/);
      });

      it('--index <upstream>/<name> mirrors every version: each resolves with the origin digest while the upstream refuses connections', async () => {
        // The start sync runs in the background: a sync now queues behind it.
        await sync(indexed);
        const expected = await originVersions();
        const seen = await info(indexed);
        assert.equal(seen.source.type, 'upstream');
        assert.equal(seen.counts.versions, expected.length);
        assert.ok(seen.interval !== null && seen.interval >= 60, 'synced on an interval');
        proxy.set({ mode: 'refuse' });
        try {
          for (const v of expected) {
            const r = await json<{ digest: string }>(
              `${indexed.url}/api/v1/resolve?ref=${encodeURIComponent(pin(v))}`,
            );
            assert.equal(r.status, 200, `${pin(v)}: ${JSON.stringify(r.body)}`);
            assert.equal(r.body.digest, v.digest, pin(v));
          }
          const search = await json<{ total: number }>(`${indexed.url}/api/v1/search?q=redis`);
          assert.ok(search.body.total > 0, 'mirrored templates are in the search');
        } finally {
          proxy.set({ mode: 'pass' });
        }
      });

      it('an unchanged upstream registry costs one conditional request (304) per sync', async () => {
        proxy.reset();
        // The breaker may still be open from the refusing upstream: wait for its backoff (1-2 s).
        let outcome = await sync(indexed);
        for (let i = 0; outcome.status === 'failed' && i < 30; i++) {
          await new Promise((done) => setTimeout(done, 1000));
          proxy.reset();
          outcome = await sync(indexed);
        }
        assert.equal(outcome.status, 'unchanged', JSON.stringify(outcome));
        assert.equal(proxy.forwarded.length, 1, proxy.forwarded.join('\n'));
        assert.equal(proxy.count(`/api/v1/registries/${NAME}/versions`), 1);
      });

      it('GET /api/v1/registries/{id} shows the upstream state: ok, then unreachable since T, with staleness', async () => {
        const ok = (await info(indexed)).upstream;
        assert.ok(ok, 'an upstream section');
        assert.equal(ok.url, proxy.url);
        assert.equal(ok.state, 'ok');
        assert.ok(ok.checkedAt !== null && ok.staleSeconds !== null && ok.staleSeconds >= 0);
        proxy.set({ mode: 'refuse' });
        try {
          const outcome = await sync(indexed);
          assert.equal(outcome.status, 'failed');
          const down = (await info(indexed)).upstream;
          assert.equal(down?.state, 'unreachable');
          assert.ok(down?.since && !Number.isNaN(Date.parse(down.since)), JSON.stringify(down));
          // In the client's words for a connection that got no answer (docs/errors.md).
          assert.match(
            String(down?.detail),
            /^(connection refused \(ECONNREFUSED\)|the connection was reset \(ECONNRESET\)|the other side closed the connection \(UND_ERR_SOCKET\))$/,
          );
          // The registries page says it too.
          const page = await fetch(`${indexed.url}/registries`);
          assert.equal(page.status, 200);
          assert.match(await page.text(), /unreachable since/);
        } finally {
          proxy.set({ mode: 'pass' });
        }
      });

      for (const [mode, expected, says] of [
        [{ mode: 'status', status: 401 }, 'unauthorized', /upstream unauthorized since \S+ \(HTTP 401\)/],
        [{ mode: 'status', status: 429, retryAfter: '2' }, 'rate-limited', /upstream rate-limited until \S+/],
      ] as const) {
        it(`GET /api/v1/registries/{id} and the registries page show ${expected} when the upstream answers ${mode.status}`, async () => {
          proxy.set(mode);
          try {
            // The breaker may still be open from an earlier failure: sync until the upstream is asked.
            let up = (await info(indexed)).upstream;
            for (let i = 0; up?.state !== expected && i < 30; i++) {
              assert.equal((await sync(indexed)).status === 'succeeded', false, 'no sync succeeds meanwhile');
              up = (await info(indexed)).upstream;
              if (up?.state !== expected) await new Promise((done) => setTimeout(done, 1000));
            }
            assert.equal(up?.state, expected, JSON.stringify(up));
            const when = expected === 'rate-limited' ? up?.until : up?.since;
            assert.ok(when && !Number.isNaN(Date.parse(when)), JSON.stringify(up));
            const page = await fetch(`${indexed.url}/registries`);
            assert.equal(page.status, 200);
            assert.match(await page.text(), says);
            // Everything stored keeps resolving meanwhile.
            const stored = await json<{ digest: string }>(
              `${indexed.url}/api/v1/resolve?ref=${encodeURIComponent(`${NAME}/redis:=v1.1`)}`,
            );
            assert.equal(stored.status, 200, JSON.stringify(stored.body));
          } finally {
            proxy.set({ mode: 'pass' });
          }
        });
      }

      it('a version deleted upstream keeps being served, flagged removedUpstream in resolve answers and the registry', async () => {
        const victim = (await originVersions()).find((v) => v.template === 'redis' && v.version === 'v1.0.3');
        assert.ok(victim, 'redis v1.0.3 in the fixtures');
        rmSync(join(registryDir, 'redis', 'v1.0.3'), { recursive: true });
        const originSync = await json<{ status: string }>(`${origin.url}/api/v1/registries/${NAME}/sync`, {
          method: 'POST',
          headers: admin,
        });
        assert.equal(originSync.body.status, 'succeeded', JSON.stringify(originSync.body));
        let outcome = await sync(indexed);
        for (let i = 0; outcome.status === 'failed' && i < 30; i++) {
          await new Promise((done) => setTimeout(done, 1000));
          outcome = await sync(indexed);
        }
        assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome));
        const r = await json<{ digest: string; removedUpstream?: boolean }>(
          `${indexed.url}/api/v1/resolve?ref=${encodeURIComponent(pin(victim))}`,
        );
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.digest, victim.digest);
        assert.equal(r.body.removedUpstream, true);
        const other = await json<{ removedUpstream?: boolean }>(
          `${indexed.url}/api/v1/resolve?ref=${encodeURIComponent(`${NAME}/redis:=v1.1`)}`,
        );
        assert.equal(other.status, 200);
        assert.equal(other.body.removedUpstream, undefined);
        assert.equal((await info(indexed)).upstream?.removedUpstream, 1);
        const page = await fetch(`${indexed.url}/templates/${NAME}/redis`);
        assert.equal(page.status, 200);
        assert.match(await page.text(), /removed upstream/);
      });
    });
  });
}

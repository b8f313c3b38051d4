/**
 * Issue 25 item 15 (docs/mirroring.md, "One source of truth for what is quarantined"): a
 * pull-through mirror whose upstream's resolve answer and version list disagree — the resolve
 * says a version is quarantined, the list says it is not — does not open and close its quarantine
 * over and over. The version list decides the quarantine state of the versions the mirror holds;
 * a resolve answer's is taken only when that answer stores the version (its first pull).
 *
 * The upstream is a stand-in in front of a real origin: it adds a `quarantined` field to every
 * resolve answer, passes the version list as the origin answers it, and drops `ETag`s and
 * `If-None-Match` so every revalidation is a full answer. Each round resolves the floating
 * reference (a revalidation of the resolve, the TTL being 0) and syncs the registry (the list
 * revalidation); the quarantines opened are counted in `/metrics`.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, DIALECTS, testServerOn } from '../server/helpers.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';

const NAME = 'github.com/dm-samples/templates';
const REF = `${NAME}/redis:v1.1`;
const ROUNDS = 4;

let origin: RunningRegistry;
let standin: Server;
let standinUrl: string;
let resolves = 0;
let lists = 0;

/** The upstream that disagrees with itself. */
async function startDisagreeingUpstream(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    void (async () => {
      const url = req.url ?? '/';
      const headers: Record<string, string> = {};
      if (req.headers.authorization) headers.authorization = req.headers.authorization;
      const answer = await fetch(`${target}${url}`, { headers, redirect: 'manual' });
      const body = Buffer.from(await answer.arrayBuffer());
      const out: Record<string, string> = {};
      for (const name of ['content-type', 'cache-control']) {
        const value = answer.headers.get(name);
        if (value) out[name] = value;
      }
      if (url.startsWith('/api/v1/resolve') && answer.status === 200) {
        resolves += 1;
        const r = JSON.parse(body.toString('utf8')) as { files: { path: string; sha256: string }[] };
        const first = r.files[0]!;
        const quarantined = {
          since: '2026-01-01T00:00:00.000Z',
          newDigest: `sha256:${'e'.repeat(64)}`,
          changedFiles: [{ path: first.path, old: first.sha256, new: 'e'.repeat(64) }],
        };
        res.writeHead(200, out).end(JSON.stringify({ ...r, quarantined }));
        return;
      }
      if (/^\/api\/v1\/registries\/.+\/versions$/.test(url.split('?')[0]!)) lists += 1;
      res.writeHead(answer.status, out).end(body);
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

before(async () => {
  origin = await startRegistry(['registry-fixtures']);
  standin = await startDisagreeingUpstream(origin.url);
  standinUrl = `http://127.0.0.1:${(standin.address() as AddressInfo).port}`;
});
after(async () => {
  await new Promise<void>((r) => standin?.close(() => r()));
  await origin?.stop();
});

for (const dialect of DIALECTS)
  describe(`a pull-through mirror whose upstream's resolve and version list disagree (${dialect})`, () => {
    it(`opens its quarantine at most once over ${ROUNDS} revalidations of each kind, then keeps the list's state`, async () => {
      const s = await testServerOn(dialect, { upstreams: [{ url: standinUrl }], upstreamTtlMs: 0 });
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const quarantineOpened = async () => {
        const text = await (await s.app.request('/metrics', { headers: admin })).text();
        const m = new RegExp(
          `^dm_registry_quarantined_versions_total\\{registry="${NAME}"\\} (\\d+)$`,
          'm',
        ).exec(text);
        return m ? Number(m[1]) : 0;
      };
      const isQuarantined = async () => {
        const res = await s.app.request(`/api/v1/registries/${NAME}`, { headers: admin });
        const body = (await res.json()) as { quarantined?: unknown[] };
        assert.equal(res.status, 200, JSON.stringify(body));
        return (body.quarantined ?? []).length > 0;
      };
      try {
        const states: string[] = [];
        const before = { resolves, lists };
        for (let round = 0; round < ROUNDS; round++) {
          const resolved = await s.app.request(`/api/v1/resolve?ref=${encodeURIComponent(REF)}`);
          assert.equal(resolved.status, 200, await resolved.text());
          const afterResolve = await isQuarantined();
          const synced = await s.app.request(`/api/v1/registries/${NAME}/sync`, {
            method: 'POST',
            headers: admin,
          });
          const outcome = (await synced.json()) as { status: string; error?: unknown };
          assert.equal(synced.status, 200, JSON.stringify(outcome));
          assert.match(outcome.status, /^(succeeded|unchanged|coalesced)$/, JSON.stringify(outcome));
          states.push(`${afterResolve ? 'open' : 'closed'}/${(await isQuarantined()) ? 'open' : 'closed'}`);
        }
        // Each round did revalidate both ways (the stand-in saw the requests).
        assert.ok(resolves - before.resolves >= ROUNDS, `resolves: ${resolves - before.resolves}`);
        assert.ok(lists - before.lists >= ROUNDS, `lists: ${lists - before.lists}`);
        // The first pull stores the version quarantined as its resolve said; the list closes it;
        // nothing opens it again.
        assert.equal(states[0], 'open/closed', states.join(' '));
        assert.deepEqual(new Set(states.slice(1)), new Set(['closed/closed']), states.join(' '));
        assert.equal(await quarantineOpened(), 1, `quarantine opened more than once: ${states.join(' ')}`);
      } finally {
        await s.close();
      }
    });
  });

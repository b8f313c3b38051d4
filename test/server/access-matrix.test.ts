/**
 * The access matrix (issue 25 items 4-7; docs/server.md "HTTP API", docs/integrity-store.md §4):
 * who learns what from the checksum lookup, `/metrics` and the registry listings, on each database.
 * A public registry, a private one and a local git registry (a `file://` URL) are indexed; every
 * caller (anonymous, a token nobody issued, a read token for the private registry, a metrics
 * token, an admin token) asks every case, and the answers are compared with what that caller may
 * know: a private registry's key answers exactly like a missing one (status, code, shape) to
 * anyone who may not read it, also with a bad token and also after the registry is deleted;
 * anonymous metrics carry no private series, and the private ones are sums over every private
 * registry; no listing or page shows a local path but an admin's, nor a private registry to those who
 * may not read it;
 * content is sent with nosniff and a CSP (item 13).
 */
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commitAll, commitDirectory, type Standin, startGitHubStandin } from '../github-standin/standin.js';
import { ADMIN_TOKEN, DIALECTS, type DialectTestServer, FIXTURES, tempDir, testServerOn } from './helpers.js';

const PUBLIC = 'github.com/acme/templates';
const PRIVATE = 'github.com/acme/secret';
/** A second private registry: the private sums in /metrics add both up. */
const PRIVATE_TOO = 'github.com/acme/secret-too';
const MISSING = 'github.com/acme/nothere';
const LOCAL = 'git.example/acme/local';
const METRICS_TOKEN = 'metrics-token-for-the-matrix';

type Caller = 'anonymous' | 'bad token' | 'reader' | 'metrics' | 'admin';
const CALLERS: readonly Caller[] = ['anonymous', 'bad token', 'reader', 'metrics', 'admin'];

interface Answer {
  status: number;
  code: string | undefined;
  body: string;
}

for (const dialect of DIALECTS)
  describe(`the access matrix: checksums, metrics, registry listings (${dialect})`, () => {
    let s: DialectTestServer;
    let repo: string;
    let readerToken: string;
    let privateId: number;
    /** The versions of the two private registries and of the public one, as the store counts them. */
    let privateVersions: number;
    let publicVersions: number;
    let standin: Standin;

    const tokenOf = (caller: Caller): string | undefined =>
      ({
        anonymous: undefined,
        'bad token': 'a-token-nobody-issued',
        reader: readerToken,
        metrics: METRICS_TOKEN,
        admin: ADMIN_TOKEN,
      })[caller];

    async function ask(path: string, caller: Caller, init: RequestInit = {}): Promise<Answer> {
      const token = tokenOf(caller);
      const res = await s.app.request(path, {
        ...init,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      const body = await res.text();
      let code: string | undefined;
      try {
        code = (JSON.parse(body) as { error?: { code?: string } }).error?.code;
      } catch {
        code = undefined;
      }
      return { status: res.status, code, body };
    }

    /** An answer with the key it names taken out, to compare a private key's with a missing one's. */
    const shape = (a: Answer, key: string) => ({ ...a, body: a.body.split(key).join('KEY') });

    before(async () => {
      const dir = tempDir();
      repo = join(dir, 'localgit');
      commitDirectory(FIXTURES, repo);
      commitAll(repo, 'publish');
      // Two GitHub repositories (through the stand-in), whose syncs count requests and a budget.
      commitDirectory(join(FIXTURES, 'redis'), join(dir, 'gh-a'));
      commitDirectory(join(FIXTURES, 'redis'), join(dir, 'gh-b'));
      standin = await startGitHubStandin({
        repos: { 'acme/gh-a': { gitDir: join(dir, 'gh-a') }, 'acme/gh-b': { gitDir: join(dir, 'gh-b') } },
      });
      s = await testServerOn(dialect, { metricsTokens: [METRICS_TOKEN], githubApiUrl: standin.url });
      const pub = await s.service.add({ source: FIXTURES, name: PUBLIC });
      const priv = await s.service.add({ source: FIXTURES, name: PRIVATE, visibility: 'private' });
      const local = await s.service.add({ source: `file://${repo}`, name: LOCAL });
      // Fewer versions than the first private registry, so neither count alone is the sum.
      const small = join(dir, 'small');
      cpSync(join(FIXTURES, 'redis'), join(small, 'redis'), { recursive: true });
      const privToo = await s.service.add({ source: small, name: PRIVATE_TOO, visibility: 'private' });
      privateId = priv.id;
      const counts = new Map<string, number>();
      for (const row of [pub, priv, local, privToo]) {
        const outcome = await s.service.sync(row.id, 'manual');
        assert.equal(outcome.status, 'succeeded', `${row.name}: ${JSON.stringify(outcome)}`);
        assert.ok(
          outcome.versionCount && outcome.versionCount > 0,
          `${row.name}: ${JSON.stringify(outcome)}`,
        );
        counts.set(row.name, outcome.versionCount);
      }
      assert.notEqual(counts.get(PRIVATE), counts.get(PRIVATE_TOO));
      privateVersions = counts.get(PRIVATE)! + counts.get(PRIVATE_TOO)!;
      publicVersions = counts.get(PUBLIC)!;
      readerToken = await s.service.createToken({ admin: false, registry: PRIVATE });
    });
    after(async () => {
      await s?.close();
      await standin?.close();
    });

    const lookup = (registry: string) => `/api/v1/checksums/lookup/${registry}/redis@v1.1`;

    it('checksum lookup: a private key answers like a missing one to everyone who may not read it', async () => {
      for (const caller of CALLERS) {
        const priv = await ask(lookup(PRIVATE), caller);
        const missing = await ask(lookup(MISSING), caller);
        const pub = await ask(lookup(PUBLIC), caller);
        // A metrics token is a token for /metrics only: anywhere else it is a token nobody issued.
        if (caller === 'bad token' || caller === 'metrics') {
          assert.equal(priv.status, 401, `${caller}: ${priv.body}`);
          assert.deepEqual(shape(priv, PRIVATE), shape(missing, MISSING), caller);
          assert.equal(pub.status, 401, caller);
          continue;
        }
        assert.equal(pub.status, 200, `${caller} reads the public record: ${pub.body}`);
        assert.equal(missing.status, 404, `${caller}: ${missing.body}`);
        assert.equal(missing.code, 'CHECKSUM_RECORD_NOT_FOUND');
        if (caller === 'reader' || caller === 'admin') {
          assert.equal(priv.status, 200, `${caller} may read the private record: ${priv.body}`);
        } else {
          assert.deepEqual(shape(priv, PRIVATE), shape(missing, MISSING), caller);
        }
      }
    });

    it('/metrics: private sums only with a metrics or admin token; a bad token is 401', async () => {
      const expected: Record<Caller, number | 'private'> = {
        anonymous: 200,
        'bad token': 401,
        reader: 200,
        metrics: 'private',
        admin: 'private',
      };
      for (const caller of CALLERS) {
        const a = await ask('/metrics', caller);
        if (expected[caller] === 'private') {
          assert.equal(a.status, 200, caller);
          // Summed over both private registries, not the count of the last one synced.
          assert.match(
            a.body,
            new RegExp(`^dm_registry_versions\\{registry="\\(private\\)"\\} ${privateVersions}$`, 'm'),
            caller,
          );
          assert.match(a.body, /dm_registry_syncs_total\{registry="\(private\)",status="succeeded"\} 2/);
        } else {
          assert.equal(a.status, expected[caller], `${caller}: ${a.body.slice(0, 200)}`);
          assert.doesNotMatch(a.body, /\(private\)/, caller);
          if (a.status === 200) {
            assert.match(
              a.body,
              new RegExp(`^dm_registry_versions\\{registry="${PUBLIC}"\\} ${publicVersions}$`, 'm'),
              caller,
            );
          }
        }
      }
    });

    it('registry listings (API and pages): a local source path is shown to admins only', async () => {
      for (const caller of CALLERS) {
        const api = await ask('/api/v1/registries', caller);
        const apiOne = await ask(`/api/v1/registries/${LOCAL}`, caller);
        const page = await ask('/registries', caller);
        const one = await ask(`/registries/${LOCAL}`, caller);
        const priv = await ask(`/api/v1/registries/${PRIVATE}`, caller);
        const missing = await ask(`/api/v1/registries/${MISSING}`, caller);
        if (caller === 'bad token' || caller === 'metrics') {
          assert.equal(api.status, 401);
          assert.equal(apiOne.status, 401);
          assert.equal(page.status, 401);
          assert.deepEqual(shape(priv, PRIVATE), shape(missing, MISSING), caller);
          continue;
        }
        assert.equal(api.status, 200, caller);
        assert.equal(apiOne.status, 200, caller);
        assert.equal(page.status, 200, caller);
        assert.equal(one.status, 200, caller);
        const names = (JSON.parse(api.body) as { registries: { name: string }[] }).registries.map(
          (r) => r.name,
        );
        // A private registry is listed, and found, only for those who may read it.
        if (caller === 'reader' || caller === 'admin') {
          assert.ok(names.includes(PRIVATE), caller);
          assert.equal(priv.status, 200, caller);
        } else {
          assert.ok(!names.includes(PRIVATE) && !names.includes(PRIVATE_TOO), caller);
          assert.equal(missing.status, 404, caller);
          assert.deepEqual(shape(priv, PRIVATE), shape(missing, MISSING), caller);
        }
        const listed = (
          JSON.parse(api.body) as { registries: { name: string; source: { location: string } }[] }
        ).registries.find((r) => r.name === LOCAL);
        const alone = JSON.parse(apiOne.body) as { source: { location: string } };
        if (caller === 'admin') {
          assert.equal(listed?.source.location, `file://${repo}`);
          assert.equal(alone.source.location, `file://${repo}`);
          continue;
        }
        assert.equal(listed?.source.location, 'local directory', caller);
        assert.equal(alone.source.location, 'local directory', caller);
        for (const [where, body] of [
          ['API', api.body],
          ['API (one registry)', apiOne.body],
          ['registries page', page.body],
          ['registry page', one.body],
        ] as const) {
          assert.ok(!body.includes(repo), `${caller} sees the server path in the ${where}`);
          assert.doesNotMatch(body, /file:\/\//, `${caller}: ${where}`);
        }
      }
    });

    it('content (a file, the schema, the archive) is sent with nosniff and a CSP, to every reader', async () => {
      const base = `/api/v1/templates/${PUBLIC}/redis/versions/v1.1`;
      for (const caller of ['anonymous', 'admin'] as const) {
        for (const path of [`${base}/files/redis.jinja`, `${base}/schema`, `${base}/archive.tar.gz`]) {
          const token = tokenOf(caller);
          const res = await s.app.request(
            path,
            token ? { headers: { authorization: `Bearer ${token}` } } : {},
          );
          assert.equal(res.status, 200, `${caller} ${path}`);
          assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
          assert.equal(res.headers.get('content-security-policy'), "default-src 'none'; sandbox", path);
          await res.arrayBuffer();
        }
      }
    });

    it('deleting a private registry leaves its checksum records as unreadable as they were', async () => {
      const before = await ask(lookup(PRIVATE), 'anonymous');
      assert.equal(before.status, 404);
      const del = await ask(`/api/v1/registries/${privateId}`, 'admin', { method: 'DELETE' });
      assert.ok(del.status === 200 || del.status === 204, `DELETE: ${del.status} ${del.body}`);
      for (const caller of ['anonymous', 'bad token'] as const) {
        const after = await ask(lookup(PRIVATE), caller);
        const missing = await ask(lookup(MISSING), caller);
        assert.deepEqual(shape(after, PRIVATE), shape(missing, MISSING), caller);
      }
      // The log still holds the record: an admin reads it.
      const admin = await ask(lookup(PRIVATE), 'admin');
      assert.equal(admin.status, 200, admin.body);
    });
    it('/metrics: the last syncs of private registries are added up under (private), never overwritten', async () => {
      const a = await s.service.add({ source: 'github.com/acme/gh-a', visibility: 'private' });
      const b = await s.service.add({ source: 'github.com/acme/gh-b', visibility: 'private' });
      const outcomes = [];
      for (const row of [a, b]) {
        const outcome = await s.service.sync(row.id, 'manual');
        assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome.error));
        assert.ok(outcome.apiRequests > 0 && outcome.rateLimitRemaining !== null, JSON.stringify(outcome));
        outcomes.push(outcome);
      }
      const [oa, ob] = outcomes as [(typeof outcomes)[0], (typeof outcomes)[0]];
      // The directory registries' syncs made no requests: the private sum is the two GitHub ones'.
      const series = (body: string, name: string) =>
        new RegExp(`^${name}\\{registry="\\(private\\)"\\} (\\d+)$`, 'm').exec(body)?.[1];
      let scrape = (await ask('/metrics', 'metrics')).body;
      assert.equal(series(scrape, 'dm_registry_sync_api_requests'), String(oa.apiRequests + ob.apiRequests));
      // The budget shown is the lowest any private registry reported (b synced last, so b's).
      const lowest = Math.min(oa.rateLimitRemaining!, ob.rateLimitRemaining!);
      assert.equal(series(scrape, 'dm_registry_source_rate_limit_remaining'), String(lowest));
      for (const caller of ['anonymous', 'reader'] as const) {
        const body = (await ask('/metrics', caller)).body;
        assert.doesNotMatch(body, /\(private\)/, caller);
        assert.doesNotMatch(body, /gh-a|gh-b/, caller);
      }
      // Once b is gone, only a's figures remain: a's own budget, not the deleted b's lower one.
      assert.ok(ob.rateLimitRemaining! < oa.rateLimitRemaining!);
      const del = await ask(`/api/v1/registries/${b.id}`, 'admin', { method: 'DELETE' });
      assert.ok(del.status === 200 || del.status === 204, del.body);
      scrape = (await ask('/metrics', 'admin')).body;
      assert.equal(series(scrape, 'dm_registry_sync_api_requests'), String(oa.apiRequests));
      assert.equal(series(scrape, 'dm_registry_source_rate_limit_remaining'), String(oa.rateLimitRemaining));
    });
  });

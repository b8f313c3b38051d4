/**
 * Issue 11 end to end (docs/integrity-store.md): a git registry built here with real git is
 * published and synced; a force-push edits one file of a published version; the next sync
 * quarantines it. No response carries the new bytes (resolve, files, archive, schema, pages,
 * search); exactly one notification, HMAC-signed, names the file; the checksum log verifies with
 * the client's own verifier; an admin's accept serves the new digest, audited and logged as
 * superseding the old one.
 */
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import {
  type ChecksumLogSource,
  ChecksumVerifier,
  decodeProof,
  type LookupAnswer,
  MemoryCheckpointMemory,
} from '../../client/src/integrity/index.js';
import { createLogger } from '../../server/src/log.js';
import { isPostgres } from '../../server/src/store/open-store.js';
import { amendLastCommit, commitAll, commitDirectory } from '../github-standin/standin.js';
import { admin, DIALECTS, type DialectTestServer, FIXTURES, tempDir, testServerOn } from './helpers.js';

const NAME = 'git.example/acme/local';
const MARKER = 'Zanzibarized';
const SECRET = 'notify-secret-for-the-test';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver that records every POST and answers 204. */
async function receiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Rows of a `$1`-style query on either dialect's store. */
async function query<T>(s: DialectTestServer, sql: string, params: unknown[] = []): Promise<T[]> {
  if (isPostgres(s.store)) return (await s.store.pool.query(sql, params)).rows as T[];
  const statement = s.store.sqlite.prepare(sql.replace(/\$\d+/g, '?'));
  if (!statement.reader) {
    statement.run(...params);
    return [];
  }
  return statement.all(...params) as T[];
}

/** The checksum log over the app's HTTP routes, as a client sees it. */
function httpLog(s: DialectTestServer): ChecksumLogSource {
  const get = async (path: string) => {
    const res = await s.app.request(path);
    assert.equal(res.status, 200, `${path}: ${res.status}`);
    return res;
  };
  return {
    latestCheckpoint: async () => (await get('/api/v1/checksums/latest')).text(),
    consistencyProof: async (from, to) =>
      decodeProof(
        (
          (await (await get(`/api/v1/checksums/consistency?from=${from}&to=${to}`)).json()) as {
            proof: unknown;
          }
        ).proof,
      ),
    lookup: async (key) => {
      const a = (await (await get(`/api/v1/checksums/lookup/${key}`)).json()) as LookupAnswer & {
        proof: unknown;
      };
      return { ...a, proof: decodeProof(a.proof) };
    },
  };
}

for (const dialect of DIALECTS)
  describe(`quarantine of a changed published version (${dialect})`, () => {
    let dir: string;
    let repo: string;
    let hook: Awaited<ReturnType<typeof receiver>>;
    let s: DialectTestServer;

    before(async () => {
      dir = tempDir();
      repo = join(dir, 'repo');
      commitDirectory(FIXTURES, repo);
      commitAll(repo, 'publish');
      hook = await receiver();
      s = await testServerOn(dialect, {
        checksums: { notify: { urls: [hook.url], secret: SECRET, retryBaseMs: 10 } },
      });
    });
    after(async () => {
      await s.close();
      await hook.close();
    });

    it('a force-pushed edit of one file is quarantined: the first-seen bytes stay served everywhere', async () => {
      const row = await s.service.add({ source: repo, name: NAME });
      assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
      const ref = `${NAME}/redis:v1.1`;
      const first = (await (await s.app.request(`/api/v1/resolve?ref=${ref}`)).json()) as { digest: string };
      const verifier = new ChecksumVerifier({
        key: s.service.checksums.signer.verifierKey,
        source: httpLog(s),
        memory: new MemoryCheckpointMemory(),
      });
      await verifier.verifyDigest({ template: `${NAME}/redis`, version: 'v1.1', digest: first.digest });

      // The force-push: the schema's title (the search snippet, the schema route, the pages) changes.
      const schemaPath = join(repo, 'redis', 'v1.1', 'redis.jinja.schema');
      writeFileSync(
        schemaPath,
        readFileSync(schemaPath, 'utf8').replace('title: Redis', `title: Redis ${MARKER}`),
      );
      amendLastCommit(repo);
      assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');

      const resolved = await s.app.request(`/api/v1/resolve?ref=${ref}`);
      const body = await resolved.text();
      assert.equal(resolved.status, 200);
      assert.ok(!body.includes(MARKER), 'resolve carries the new bytes');
      const answer = JSON.parse(body);
      assert.equal(answer.digest, first.digest);
      assert.deepEqual(
        answer.quarantined.changedFiles.map((f: { path: string }) => f.path),
        ['redis.jinja.schema'],
      );
      assert.notEqual(answer.quarantined.newDigest, first.digest);

      const base = `/api/v1/templates/${NAME}/redis`;
      for (const path of [
        `${base}`,
        `${base}/versions/v1.1/files/redis.jinja.schema`,
        `${base}/versions/v1.1/schema`,
        `/templates/${NAME}/redis`,
        `/templates/${NAME}/redis/versions/v1.1`,
        `/api/v1/search?q=redis`,
        `/search?q=redis`,
        `/api/v1/registries/${row.id}`,
      ]) {
        const res = await s.app.request(path);
        assert.equal(res.status, 200, path);
        assert.ok(!(await res.text()).includes(MARKER), `${path} carries the new bytes`);
      }
      const archive = await s.app.request(`${base}/versions/v1.1/archive.tar.gz`);
      assert.equal(archive.status, 200);
      assert.ok(!gunzipSync(Buffer.from(await archive.arrayBuffer())).includes(MARKER), 'the archive');
      const search = (await (await s.app.request(`/api/v1/search?q=${MARKER}`)).json()) as { total: number };
      assert.equal(search.total, 0);
      const template = (await (await s.app.request(base)).json()) as {
        versions: { version: string; quarantined?: { newDigest: string } }[];
      };
      assert.equal(
        template.versions.find((v) => v.version === 'v1.1')?.quarantined?.newDigest,
        answer.quarantined.newDigest,
      );
      const status = (await (await s.app.request(`/api/v1/registries/${row.id}`)).json()) as {
        quarantined: { template: string; version: string }[];
      };
      assert.deepEqual(
        status.quarantined.map((q) => `${q.template}@${q.version}`),
        [`${NAME}/redis@v1.1`],
      );
      const page = await (await s.app.request(`/templates/${NAME}/redis`)).text();
      assert.match(page, /Quarantined since .*redis\.jinja\.schema/s);
      const metrics = await (await s.app.request('/metrics')).text();
      assert.match(
        metrics,
        /dm_registry_quarantined_versions_total\{registry="git\.example\/acme\/local"\} 1/,
      );

      // Exactly one notification, signed, naming the file; a sync that sees nothing new sends none.
      assert.equal((await s.service.sync(row.id, 'manual')).status, 'unchanged');
      await s.service.checksums.notifier.idle();
      assert.equal(hook.received.length, 1);
      const [note] = hook.received;
      const expected = `sha256=${createHmac('sha256', SECRET).update(note!.body).digest('hex')}`;
      const got = String(note!.headers['x-dm-signature-256']);
      assert.ok(got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected)));
      const event = JSON.parse(note!.body);
      assert.equal(event.event, 'version.quarantined');
      assert.equal(event.template, `${NAME}/redis`);
      assert.deepEqual(
        event.changedFiles.map((f: { path: string }) => f.path),
        ['redis.jinja.schema'],
      );
      const [notified] = await query<{ notified_at: number | string | null }>(
        s,
        'SELECT notified_at FROM quarantines',
      );
      assert.ok(Number(notified?.notified_at) > 0, 'the delivery is not marked');

      // The log still says the first digest; a client holding the new one is refused.
      await verifier.verifyDigest({ template: `${NAME}/redis`, version: 'v1.1', digest: first.digest });
      await assert.rejects(
        verifier.verifyDigest({
          template: `${NAME}/redis`,
          version: 'v1.1',
          digest: answer.quarantined.newDigest,
        }),
        { code: 'CHECKSUM_MISMATCH' },
      );

      // The open-quarantines gauge, read at each scrape; a private registry's under `(private)`.
      assert.match(metrics, /^dm_registry_open_quarantines\{registry="git\.example\/acme\/local"\} 1$/m);
      await query(s, "UPDATE registries SET visibility = 'private' WHERE id = $1", [row.id]);
      // The private sums are for an admin (or metrics) token; an anonymous scrape leaves them out.
      const hidden = await (await s.app.request('/metrics', { headers: admin })).text();
      assert.match(hidden, /^dm_registry_open_quarantines\{registry="\(private\)"\} 1$/m);
      assert.doesNotMatch(hidden, /dm_registry_open_quarantines\{registry="git/);
      assert.doesNotMatch(await (await s.app.request('/metrics')).text(), /\(private\)/);
      await query(s, "UPDATE registries SET visibility = 'public' WHERE id = $1", [row.id]);

      // The audit listing: admin only, empty before any acceptance.
      const auditUrl = `/api/v1/registries/${row.id}/audit`;
      assert.equal((await s.app.request(auditUrl)).status, 401);
      const reader = await s.service.createToken({ admin: false, registry: null });
      const forbidden = await s.app.request(auditUrl, { headers: { authorization: `Bearer ${reader}` } });
      assert.equal(forbidden.status, 403);
      const none = await s.app.request(auditUrl, { headers: admin });
      assert.equal(none.status, 200);
      assert.deepEqual(await none.json(), { registry: NAME, acceptances: [] });
      assert.equal((await s.app.request(`${auditUrl}?limit=0`, { headers: admin })).status, 400);

      // Accepting: refused without a reason or a token, then audited, logged, served.
      const url = `/api/v1/registries/${row.id}/versions/redis@v1.1/accept`;
      const post = (init: { headers?: Record<string, string>; body: string }) =>
        s.app.request(url, {
          method: 'POST',
          ...init,
          headers: { 'content-type': 'application/json', ...init.headers },
        });
      assert.equal((await post({ body: '{"reason":"x"}' })).status, 401);
      const noReason = await post({ headers: admin, body: '{}' });
      assert.equal(noReason.status, 400);
      assert.match(((await noReason.json()) as { error: { message: string } }).error.message, /reason/);
      const accepted = await post({ headers: admin, body: '{"reason":"the title was fixed on purpose"}' });
      assert.equal(accepted.status, 200);
      const audit = (await accepted.json()) as { oldDigest: string; newDigest: string; acceptedBy: string };
      assert.equal(audit.oldDigest, first.digest);
      assert.equal(audit.newDigest, answer.quarantined.newDigest);
      assert.match(audit.acceptedBy, /^token:[0-9a-f]{12}$/);
      assert.equal((await post({ headers: admin, body: '{"reason":"again"}' })).status, 404);
      // The audit listing holds exactly what the accept answered; the gauge has nothing open.
      const listed = (await (await s.app.request(auditUrl, { headers: admin })).json()) as {
        acceptances: unknown[];
      };
      assert.deepEqual(listed.acceptances, [audit]);
      assert.doesNotMatch(
        await (await s.app.request('/metrics')).text(),
        /^dm_registry_open_quarantines\{registry="git\.example\/acme\/local"\} [1-9]/m,
      );
      await s.service.sync(row.id, 'manual');
      const after = (await (await s.app.request(`/api/v1/resolve?ref=${ref}`)).json()) as {
        digest: string;
        quarantined?: unknown;
      };
      assert.equal(after.digest, audit.newDigest);
      assert.equal(after.quarantined, undefined);
      const [row2] = await query<{ reason: string }>(
        s,
        'SELECT accepted_by, reason FROM quarantines WHERE accepted_at IS NOT NULL',
      );
      assert.equal(row2?.reason, 'the title was fixed on purpose');
      // The log now holds the accepted digest as superseding the old one, consistent with before.
      const verified = await verifier.verifyDigest({
        template: `${NAME}/redis`,
        version: 'v1.1',
        digest: audit.newDigest,
      });
      assert.equal(verified.record.supersedes, first.digest);
      assert.equal(hook.received.length, 1);
    });

    it('the first-seen record and the log refuse UPDATE and DELETE', async () => {
      for (const sql of [
        "UPDATE first_seen SET digest = 'x'",
        'DELETE FROM first_seen',
        'DELETE FROM log_hashes',
        'UPDATE log_checkpoints SET note = note',
      ]) {
        await assert.rejects(async () => query(s, sql), /append-only/, sql);
      }
    });
  });

for (const dialect of DIALECTS)
  describe(`the open-quarantines gauge when the database does not answer (${dialect})`, () => {
    it('is left empty and logged; the rest of /metrics is served', async () => {
      const lines: string[] = [];
      const logger = createLogger({ write: (text) => lines.push(text) });
      const s = await testServerOn(dialect, { logger });
      try {
        // The table the gauge reads is gone: its query fails at the next scrape.
        await query(s, 'ALTER TABLE quarantines RENAME TO quarantines_gone');
        const res = await s.app.request('/metrics');
        assert.equal(res.status, 200);
        const text = await res.text();
        assert.match(text, /^# TYPE dm_registry_open_quarantines gauge$/m);
        assert.doesNotMatch(text, /^dm_registry_open_quarantines\{/m);
        assert.match(text, /dm_registry_http_requests_total/);
        logger.flush();
        assert.match(lines.join(''), /open quarantines could not be counted for \/metrics/);
      } finally {
        await s.close();
      }
    });
  });

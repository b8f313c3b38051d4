/**
 * Issue 13's server items: `dm-registry start` listens on loopback unless `--host` says otherwise;
 * anonymous listings and pages never show where a directory source is on the server's disk; a
 * missing token is 401 UNAUTHORIZED (with WWW-Authenticate), a token without the right 403
 * FORBIDDEN; an archive has a Content-Disposition filename; a directory source costs no API request.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { attachment } from '../../server/src/api/http.js';
import { admin, DIALECTS, databaseOn, FIXTURES, tempDir, testServerOn } from './helpers.js';
import { BIN, startRegistry } from './hostile/process.js';

/** Whether a TCP connection to host:port is accepted (a refused one is an answer, not an error). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host, port, path: '/healthz', timeout: 30_000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** A non-loopback IPv4 address of this machine, when it has one. */
function externalAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

for (const dialect of DIALECTS) {
  describe(`dm-registry for a newcomer (issue 13, server, ${dialect})`, () => {
    it('start listens on 127.0.0.1 by default and says so; --host changes it; a bad --host is a usage error', async () => {
      const loopback = await startRegistry([], { dialect });
      try {
        assert.match(
          loopback.log(),
          /"msg":"listening","port":\d+,"host":"127\.0\.0\.1","url":"http:\/\/127\.0\.0\.1:\d+\/"/,
        );
        const port = Number(new URL(loopback.url).port);
        assert.equal(await accepts('127.0.0.1', port), true);
        const external = externalAddress();
        if (external) assert.equal(await accepts(external, port), false, `reachable on ${external}`);
        assert.equal(await loopback.stop(), 0);
      } finally {
        loopback.dispose();
      }
      const everywhere = await startRegistry(['--host', '0.0.0.0'], { dialect });
      try {
        assert.match(everywhere.log(), /"host":"0\.0\.0\.0"/);
        const port = Number(new URL(everywhere.url).port);
        assert.equal(await accepts('127.0.0.1', port), true);
        const external = externalAddress();
        if (external) assert.equal(await accepts(external, port), true, `not reachable on ${external}`);
        assert.equal(await everywhere.stop(), 0);
      } finally {
        everywhere.dispose();
      }
      const dir = tempDir('dm-host-');
      const db = await databaseOn(dialect, dir);
      try {
        for (const [host, pattern] of [
          ['not a host', /'not a host' is not an address or host name \(--host\)/],
          ['192.0.2.254', /cannot listen on '192\.0\.2\.254' \(--host\): not an address of this machine/],
        ] as const) {
          const r = spawnSync(process.execPath, [BIN, 'start', '--port', '0', '--host', host, '--db', db], {
            encoding: 'utf8',
            timeout: 120_000,
            cwd: dir,
          });
          assert.equal(r.status, 2, r.stderr);
          assert.match(r.stderr, pattern);
          assert.doesNotMatch(r.stderr, /\n\s+at /);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('anonymous listings and pages show "local directory", not the path; an admin sees the path', async () => {
      const s = await testServerOn(dialect);
      const missing = join(tempDir('dm-hidden-'), 'srv-secret-registry');
      try {
        const row = await s.service.add({ source: FIXTURES, name: 'local.dm/acme/fixtures' });
        assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
        mkdirSync(missing);
        const gone = await s.service.add({ source: missing, name: 'local.dm/acme/gone' });
        rmSync(missing, { recursive: true });
        assert.equal((await s.service.sync(gone.id, 'manual')).status, 'failed');

        const reader = await s.service.createToken({ admin: false, registry: null });
        for (const headers of [{}, { authorization: `Bearer ${reader}` }] as Record<string, string>[]) {
          for (const path of [
            '/api/v1/registries',
            `/api/v1/registries/${row.id}`,
            `/api/v1/registries/${gone.id}`,
            '/registries',
            `/registries/${row.id}`,
            `/registries/${gone.id}`,
          ]) {
            const res = await s.app.request(path, { headers });
            assert.equal(res.status, 200, path);
            const text = await res.text();
            assert.ok(!text.includes(FIXTURES), `${path} shows ${FIXTURES}`);
            assert.ok(!text.includes(missing), `${path} shows ${missing}`);
            assert.match(text, /local directory/, path);
          }
        }
        const listed = (await (await s.app.request('/api/v1/registries')).json()) as {
          registries: { name: string; source: { location: string }; sync: { error: string | null } }[];
        };
        const goneInfo = listed.registries.find((r) => r.name === 'local.dm/acme/gone');
        assert.equal(goneInfo?.source.location, 'local directory');
        assert.match(goneInfo?.sync.error ?? '', /local directory/);

        const asAdmin = (await (
          await s.app.request(`/api/v1/registries/${row.id}`, { headers: admin })
        ).json()) as {
          source: { location: string };
        };
        assert.equal(asAdmin.source.location, FIXTURES);
      } finally {
        await s.close();
      }
    });

    it('writes: no token is 401 UNAUTHORIZED with WWW-Authenticate, a read token 403 FORBIDDEN without it', async () => {
      const s = await testServerOn(dialect);
      try {
        const row = await s.service.add({ source: FIXTURES, name: 'local.dm/acme/fixtures' });
        const reader = await s.service.createToken({ admin: false, registry: null });
        for (const [method, path, body] of [
          ['POST', '/api/v1/registries', { source: FIXTURES, name: 'local.dm/acme/x' }],
          ['POST', `/api/v1/registries/${row.id}/sync`, undefined],
          ['DELETE', `/api/v1/registries/${row.id}`, undefined],
          ['POST', '/api/v1/credentials/gh', { secret: 's' }],
        ] as const) {
          const send = (headers: Record<string, string>) =>
            s.app.request(path, {
              method,
              headers: { 'content-type': 'application/json', ...headers },
              ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            });
          for (const [headers, status, code] of [
            [{}, 401, 'UNAUTHORIZED'],
            [{ authorization: 'Bearer not-a-token' }, 401, 'UNAUTHORIZED'],
            [{ authorization: `Bearer ${reader}` }, 403, 'FORBIDDEN'],
          ] as const) {
            const res = await send(headers);
            assert.equal(res.status, status, `${method} ${path} ${JSON.stringify(headers)}`);
            const error = ((await res.json()) as { error: { code: string; message: string } }).error;
            assert.equal(error.code, code, `${method} ${path}`);
            assert.equal(
              res.headers.get('www-authenticate'),
              status === 401 ? 'Bearer realm="dm-registry"' : null,
              `${method} ${path}`,
            );
          }
        }
        assert.equal((await s.service.all()).length, 1);
      } finally {
        await s.close();
      }
    });

    it('an archive carries a safe Content-Disposition filename; a directory sync counts no API request', async () => {
      const s = await testServerOn(dialect);
      try {
        const row = await s.service.add({ source: FIXTURES, name: 'local.dm/acme/fixtures' });
        const outcome = await s.service.sync(row.id, 'manual');
        assert.equal(outcome.status, 'succeeded');
        assert.equal(outcome.apiRequests, 0);
        const info = (await (await s.app.request(`/api/v1/registries/${row.id}`)).json()) as {
          sync: { apiRequests: number | null };
        };
        assert.equal(info.sync.apiRequests, null);
        const page = await (await s.app.request(`/registries/${row.id}`)).text();
        assert.match(page, /<dt>API requests<\/dt><dd><span class="muted">—<\/span><\/dd>/);

        const archive = await s.app.request(
          '/api/v1/templates/local.dm/acme/fixtures/redis/versions/v1.0.3/archive.tar.gz',
        );
        assert.equal(archive.status, 200);
        assert.equal(
          archive.headers.get('content-disposition'),
          'attachment; filename="redis-v1.0.3.tar.gz"',
        );
        const again = await s.app.request(
          '/api/v1/templates/local.dm/acme/fixtures/redis/versions/v1.0.3/archive.tar.gz',
          { headers: { 'if-none-match': archive.headers.get('etag') ?? '' } },
        );
        assert.equal(again.status, 304);
      } finally {
        await s.close();
      }
    });
  });
}

describe('dm-registry for a newcomer (issue 13, server)', () => {
  it('attachment() keeps only safe filename characters', () => {
    assert.equal(attachment('redis-v1.0.3.tar.gz'), 'attachment; filename="redis-v1.0.3.tar.gz"');
    assert.equal(attachment('a"b\r\nc/../d é.tgz'), 'attachment; filename="a_b_c_.._d_.tgz"');
    assert.equal(attachment('../..'), 'attachment; filename="download"');
    assert.equal(attachment('x'.repeat(300)).length, 'attachment; filename=""'.length + 200);
  });
});

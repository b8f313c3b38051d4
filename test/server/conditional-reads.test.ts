/**
 * Every conditional read of the API answers alike (docs/server.md "Caching"; decided once, in
 * `conditionalAnswer` of server/src/api/http.ts): a `304` to its own ETag (also weak, in a list, or
 * `*`) with no body and the same ETag and caching headers as the full answer, a `200` to any other
 * ETag; for a public registry and a private one (read with a token: `private` and `Vary`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURES, type TestServer, testServer } from './helpers.js';

const PUBLIC = 'github.com/acme/public';
const PRIVATE = 'github.com/acme/private';
/** Headers that must be the same on the 304 and the full answer. */
const CACHING = ['etag', 'cache-control', 'vary', 'x-content-type-options', 'content-security-policy'];

describe('conditional reads: resolve, a registry’s versions, files, schema, archive', () => {
  let s: TestServer;
  let token: string;
  before(async () => {
    s = testServer();
    for (const [name, visibility] of [
      [PUBLIC, 'public'],
      [PRIVATE, 'private'],
    ] as const) {
      const row = await s.service.add({ source: FIXTURES, name, visibility });
      assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
    }
    token = await s.service.createToken({ admin: false, registry: PRIVATE });
  });
  after(async () => {
    await s?.close();
  });

  const paths = (registry: string) => {
    const base = `/api/v1/templates/${registry}/redis/versions/v1.1`;
    return [
      `/api/v1/resolve?ref=${encodeURIComponent(`${registry}/redis:v1`)}`,
      `/api/v1/registries/${registry}/versions`,
      `${base}/files/redis.jinja`,
      `${base}/schema`,
      `${base}/archive.tar.gz`,
    ];
  };

  for (const [registry, visibility] of [
    [PUBLIC, 'public'],
    [PRIVATE, 'private'],
  ] as const) {
    it(`answers 304 to its own ETag and 200 to another (${visibility})`, async () => {
      const get = (path: string, headers: Record<string, string> = {}) =>
        s.app.request(path, {
          headers: visibility === 'private' ? { ...headers, authorization: `Bearer ${token}` } : headers,
        });
      for (const path of paths(registry)) {
        const full = await get(path);
        assert.equal(full.status, 200, path);
        assert.ok((await full.arrayBuffer()).byteLength > 0, path);
        const etag = full.headers.get('etag');
        assert.match(etag ?? '', /^"[^"]+"$/, `${path}: a strong ETag`);
        // Resolve answers carry no Cache-Control (a floating reference moves); the others say theirs.
        if (!path.startsWith('/api/v1/resolve')) {
          assert.match(full.headers.get('cache-control') ?? '', visibility === 'private' ? /^private/ : /./);
          if (visibility === 'private') assert.equal(full.headers.get('vary'), 'Authorization', path);
        }
        for (const asked of [etag!, `W/${etag}`, `"other", ${etag}`, '*']) {
          const again = await get(path, { 'if-none-match': asked });
          assert.equal(again.status, 304, `${path} with If-None-Match: ${asked}`);
          assert.equal(await again.text(), '', path);
          for (const name of CACHING) {
            assert.equal(again.headers.get(name), full.headers.get(name), `${path}: ${name} on the 304`);
          }
        }
        const other = await get(path, { 'if-none-match': '"other"' });
        assert.equal(other.status, 200, path);
        assert.equal(other.headers.get('etag'), etag, path);
        assert.equal(other.headers.get('content-type'), full.headers.get('content-type'), path);
      }
    });
  }
});

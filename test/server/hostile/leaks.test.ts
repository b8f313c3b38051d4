/**
 * Issue 15 items 5 and 12 (in part): what private content and credentials leak through headers
 * and listings. Private files, schemas and archives are `private` + `Vary: Authorization` (a
 * shared cache must not keep them); a git URL's `?access_token=…` and `user:pass@` never reach a
 * listing; a 401 says how to authenticate (`WWW-Authenticate: Bearer`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admin, DIALECTS, FIXTURES, testServerOn } from '../helpers.js';

for (const dialect of DIALECTS) {
  describe(`hostile: leaks through headers and listings (${dialect})`, () => {
    it('private content is privately cacheable only; public content stays public', async () => {
      const s = await testServerOn(dialect);
      try {
        for (const [name, visibility] of [
          ['github.com/acme/public', 'public'],
          ['github.com/acme/private', 'private'],
        ] as const) {
          const row = await s.service.add({ source: FIXTURES, name, visibility });
          assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
        }
        const reader = await s.service.createToken({ admin: false, registry: 'github.com/acme/private' });
        const auth = { authorization: `Bearer ${reader}` };
        for (const tail of ['files/redis.jinja', 'schema', 'archive.tar.gz']) {
          const priv = await s.app.request(
            `/api/v1/templates/github.com/acme/private/redis/versions/v1.0.3/${tail}`,
            {
              headers: auth,
            },
          );
          assert.equal(priv.status, 200, tail);
          assert.equal(priv.headers.get('cache-control'), 'private, max-age=31536000, immutable', tail);
          assert.equal(priv.headers.get('vary'), 'Authorization', tail);
          const pub = await s.app.request(
            `/api/v1/templates/github.com/acme/public/redis/versions/v1.0.3/${tail}`,
          );
          assert.equal(pub.status, 200, tail);
          assert.equal(pub.headers.get('cache-control'), 'public, max-age=31536000, immutable', tail);
        }
      } finally {
        await s.close();
      }
    });

    it('git URL credentials are stripped from listings; 401 carries WWW-Authenticate: Bearer', async () => {
      const s = await testServerOn(dialect);
      try {
        await s.service.add({
          source: 'https://user:pw@git.example.com/acme/a.git?access_token=sekrit#frag',
        });
        await s.service.add({ source: 'https://git.example.com/acme/b.git?private_token=sekrit2' });
        const res = await s.app.request('/api/v1/registries');
        const text = await res.text();
        assert.equal(res.status, 200);
        assert.doesNotMatch(text, /sekrit|pw@|user:/);
        assert.match(text, /https:\/\/git\.example\.com\/acme\/a\.git/);
        const adminList = await (await s.app.request('/api/v1/registries', { headers: admin })).text();
        assert.doesNotMatch(adminList, /sekrit/);
        const denied = await s.app.request('/api/v1/registries', {
          method: 'POST',
          headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' },
          body: '{}',
        });
        assert.equal(denied.status, 401);
        assert.match(denied.headers.get('www-authenticate') ?? '', /^Bearer/);
      } finally {
        await s.close();
      }
    });
  });

  describe(`hostile: metrics (${dialect})`, () => {
    it('/metrics never names a private registry', async () => {
      const s = await testServerOn(dialect);
      try {
        for (const [name, visibility] of [
          ['github.com/acme/open', 'public'],
          ['git.secret.corp/acme/hidden', 'private'],
        ] as const) {
          const row = await s.service.add({ source: FIXTURES, name, visibility });
          assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
        }
        // Anonymous: public series only (docs/server.md, "Metrics"); with an admin token the
        // private ones are there, under one label, never by name.
        const res = await s.app.request('/metrics');
        assert.equal(res.status, 200);
        const text = await res.text();
        assert.match(text, /dm_registry_syncs_total\{registry="github.com\/acme\/open"/);
        assert.doesNotMatch(text, /\(private\)/);
        assert.doesNotMatch(text, /secret\.corp|hidden/);
        const privileged = await (await s.app.request('/metrics', { headers: admin })).text();
        assert.match(privileged, /dm_registry_syncs_total\{registry="\(private\)"/);
        assert.doesNotMatch(privileged, /secret\.corp|hidden/);
      } finally {
        await s.close();
      }
    });
  });
}

/**
 * Issue 25 item 13, the bounds of what an admin sends (docs/server.md): an `interval` of 1e308 (a
 * whole number, as JavaScript sees it) is refused with the bounds named, and nothing is added; a
 * 900 KB credential is refused with a message about its size, not "must be a non-empty string".
 * On each database.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admin, DIALECTS, FIXTURES, testServerOn } from './helpers.js';

for (const dialect of DIALECTS)
  describe(`registry input bounds (${dialect})`, () => {
    it('refuses interval 1e308 and a 900 KB credential, each saying why', async () => {
      const s = await testServerOn(dialect);
      try {
        const post = (path: string, body: string) =>
          s.app.request(path, {
            method: 'POST',
            headers: { ...admin, 'content-type': 'application/json' },
            body,
          });
        const huge = await post(
          '/api/v1/registries',
          `{"source": ${JSON.stringify(FIXTURES)}, "name": "github.com/acme/t", "interval": 1e308}`,
        );
        assert.equal(huge.status, 400);
        const error = ((await huge.json()) as { error: { code: string; message: string } }).error;
        assert.equal(error.code, 'INVALID_REGISTRY');
        assert.match(error.message, /from 60 to 31536000 \(a year\), not 1e\+308/);
        assert.deepEqual(await s.service.all(), [], 'nothing was added');
        const fine = await post(
          '/api/v1/registries',
          `{"source": ${JSON.stringify(FIXTURES)}, "interval": 3600}`,
        );
        assert.equal(fine.status, 201, await fine.text());

        const secret = 'x'.repeat(900 * 1024);
        const big = await post('/api/v1/credentials/deploy', JSON.stringify({ secret }));
        assert.equal(big.status, 400);
        const message = ((await big.json()) as { error: { message: string } }).error.message;
        assert.match(message, /the secret is 921600 characters, more than 10000/);
        assert.doesNotMatch(message, /non-empty/);
      } finally {
        await s.close();
      }
    });
  });

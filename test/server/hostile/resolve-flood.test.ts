/**
 * Issue 15 item 1: a flood of distinct unknown references (long invalid ones, 62 × 16 KB per batch
 * request, and short valid ones naming templates that do not exist) against a real dm-registry
 * whose heap is capped at 80 MB. The resolve answer cache is bounded in bytes, so the process
 * survives, keeps answering, and stops cleanly; an entry-count bound let it die of heap exhaustion.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { DIALECTS, FIXTURES } from '../helpers.js';
import { startRegistry } from './process.js';

const REG = 'github.com/dm-samples/templates';

async function post(url: string, refs: string[]): Promise<number> {
  const res = await fetch(`${url}/api/v1/resolve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refs }),
  });
  await res.arrayBuffer();
  return res.status;
}

for (const dialect of DIALECTS) {
  describe(`hostile: resolve cache flood (${dialect})`, () => {
    it('survives 6,200 distinct 16 KB references and 10,000 unknown templates with an 80 MB heap', async () => {
      const server = await startRegistry(['--index', FIXTURES], {
        nodeArgs: ['--max-old-space-size=80'],
        dialect,
      });
      try {
        const long = () => `${REG}/${randomBytes(8192).toString('hex')}:v1`;
        // 100 requests of 62 long references, 4 at a time: 100 MB of distinct cache keys.
        for (let round = 0; round < 25; round++) {
          const statuses = await Promise.all(
            Array.from({ length: 4 }, () =>
              post(
                server.url,
                Array.from({ length: 62 }, () => long()),
              ),
            ),
          );
          assert.deepEqual(statuses, [200, 200, 200, 200], `round ${round}: ${server.log().slice(-500)}`);
        }
        // 10,000 short references to templates that do not exist in a registry that does.
        for (let round = 0; round < 10; round++) {
          const refs = Array.from({ length: 1000 }, () => `${REG}/t${randomBytes(40).toString('hex')}:v1`);
          assert.equal(await post(server.url, refs), 200);
        }
        const res = await fetch(`${server.url}/api/v1/resolve?ref=${REG}/redis:v1.0`);
        assert.equal(res.status, 200);
        assert.equal(((await res.json()) as { version: string }).version, 'v1.0.3');
        assert.equal(server.exited(), undefined, server.log().slice(-2000));
        assert.equal(await server.stop(), 0);
        assert.doesNotMatch(server.log(), /heap limit|FATAL/);
      } finally {
        server.dispose();
      }
    });
  });
}

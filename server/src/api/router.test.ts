/**
 * The app's router keeps plain paths' matches (router.ts): whatever the order of requests, it
 * answers every method and path exactly as Hono's own router does over the app's real routes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Result } from 'hono/router';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';
import { testServer } from '../../../test/server/helpers.js';
import { MemoRouter } from './router.js';

/** A result with handlers named by their index in the route table (params as they are). */
function shape(result: Result<number>): unknown {
  return [result[0].map((entry) => [entry[0], entry[1]]), result[1] ?? null];
}

describe('MemoRouter', () => {
  it('matches as Hono’s router does, for the app’s routes and any request', async () => {
    const s = testServer();
    const routes = s.app.routes.map((r) => [r.method, r.path] as const);
    await s.close();
    const ours = new MemoRouter<number>();
    const hono = new SmartRouter<number>({ routers: [new RegExpRouter(), new TrieRouter()] });
    routes.forEach(([method, path], i) => {
      ours.add(method, path, i);
      hono.add(method, path, i);
    });
    const plain = routes.map(([, path]) => path).filter((p) => !/[:*{]/.test(p));
    assert.ok(plain.includes('/api/v1/resolve') && plain.includes('/healthz'), 'plain paths are tested');
    const segment = fc.stringMatching(/^[a-z0-9.:=%-]{1,8}$/);
    const path = fc.oneof(
      fc.constantFrom(...plain),
      fc.constantFrom(...plain).map((p) => `${p}/`),
      fc.array(segment, { minLength: 1, maxLength: 6 }).map((parts) => `/${parts.join('/')}`),
      fc
        .tuple(fc.constantFrom('/api/v1/registries/', '/api/v1/templates/', '/v2/'), segment)
        .map(([a, b]) => a + b),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'), path), {
          minLength: 1,
          maxLength: 40,
        }),
        (requests) => {
          for (const [method, p] of requests) {
            // Twice: the first match of a plain path is kept, the second is the kept one.
            assert.deepEqual(shape(ours.match(method, p)), shape(hono.match(method, p)), `${method} ${p}`);
            assert.deepEqual(shape(ours.match(method, p)), shape(hono.match(method, p)), `${method} ${p}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses a route added after the first match, as Hono’s router does', () => {
    const router = new MemoRouter<number>();
    router.add('GET', '/a', 1);
    assert.deepEqual(
      router.match('GET', '/a')[0].map((entry) => entry[0]),
      [1],
    );
    assert.throws(() => router.add('GET', '/b', 2));
  });
});

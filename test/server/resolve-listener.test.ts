/**
 * The server's listener answers a cached resolve itself (docs/server.md "Read path";
 * server/src/api/listener.ts): over a corpus of requests — anonymous and token-bearing (admin, a
 * reader of the private registry, a reader of the public one, a token nobody issued, a malformed
 * header, a repeated one), public and private registries, If-None-Match hits and misses, HEAD, bad
 * and missing references, unknown registries and templates, request ids given or not, Host headers
 * and targets the app's adapter rewrites — every answer of `dm-registry start`'s listener (status,
 * headers but `date` and generated `x-request-id` values, body) and its access-log line equal
 * those of the same app served through @hono/node-server alone; the fast path is taken for the
 * cached ones (counted), and after a sync that changes the source the new answer is served at once.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { serve } from '@hono/node-server';
import fc from 'fast-check';
import { serveApp } from '../../server/src/api/listener.js';
import { createLogger } from '../../server/src/log.js';
import { ADMIN_TOKEN, DIALECTS, type DialectTestServer, FIXTURES, tempDir, testServerOn } from './helpers.js';

const PUBLIC = 'github.com/acme/templates';
const PRIVATE = 'github.com/acme/private';

interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** One request over a fresh connection, headers exactly as given (repeated ones too). */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          pairs.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
        }
        resolve({ status: res.statusCode!, headers: pairs, body: Buffer.concat(chunks).toString() });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** An answer as compared: headers sorted by name, `date` and a generated request id's value out. */
function comparable(a: Answer, givenId: boolean): Answer {
  const headers = a.headers
    .filter(([k]) => k !== 'date')
    .map(([k, v]): [string, string] => (k === 'x-request-id' && !givenId ? [k, '<id>'] : [k, v]))
    .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  return { status: a.status, headers, body: a.body };
}

const listening = (server: Server) =>
  new Promise<number>((resolve) => {
    if (server.listening) resolve((server.address() as AddressInfo).port);
    else server.once('listening', () => resolve((server.address() as AddressInfo).port));
  });

for (const dialect of DIALECTS) {
  describe(`the listener's resolve fast path answers as the app does (${dialect})`, () => {
    let s: DialectTestServer;
    let fast: ReturnType<typeof serveApp>;
    let plain: Server;
    let fastPort: number;
    let plainPort: number;
    let reader: string;
    let publicReader: string;
    let source: string;
    let publicId: number;
    const lines: string[] = [];
    const logger = createLogger({ write: (text) => lines.push(...text.split('\n').filter(Boolean)) });

    before(async () => {
      source = join(tempDir(), 'registry');
      cpSync(FIXTURES, source, { recursive: true });
      s = await testServerOn(dialect, { logger, accessLog: true });
      s.service.catalog.defaultRegistry = PUBLIC;
      const pub = await s.service.add({ source, name: PUBLIC });
      const priv = await s.service.add({ source: FIXTURES, name: PRIVATE, visibility: 'private' });
      for (const row of [pub, priv])
        assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
      publicId = pub.id;
      reader = await s.service.createToken({ admin: false, registry: PRIVATE });
      publicReader = await s.service.createToken({ admin: false, registry: PUBLIC });
      fast = serveApp(s, { port: 0, hostname: '127.0.0.1' });
      plain = serve({ fetch: s.app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
      [fastPort, plainPort] = await Promise.all([listening(fast), listening(plain)]);
      logger.flush();
    });
    after(async () => {
      fast?.close();
      plain?.close();
      await s?.close();
    });

    /** Logged lines since `from`, each without its time, generated request id and duration. */
    const logged = async (from: number, givenId: boolean) => {
      logger.flush();
      return lines.slice(from).flatMap((line) => {
        const o = JSON.parse(line) as Record<string, unknown>;
        if (o.msg !== 'request') return [];
        o.time = '<time>';
        o.ms = '<ms>';
        if (!givenId) o.requestId = '<id>';
        return [JSON.stringify(o)];
      });
    };

    /**
     * Asks the app through @hono/node-server, then the listener; both answers and log lines equal.
     * `fast`: whether the listener answered it itself.
     */
    const both = async (
      method: string,
      path: string,
      headers: Record<string, string | string[]> = {},
    ): Promise<Answer & { fast: boolean }> => {
      const givenId =
        typeof headers['x-request-id'] === 'string' && /^[\w.-]{1,64}$/.test(headers['x-request-id']);
      const from = lines.length;
      const viaApp = await send(plainPort, method, path, headers);
      const fastBefore = fast.listener.fastAnswers;
      const viaListener = await send(fastPort, method, path, headers);
      const taken = fast.listener.fastAnswers - fastBefore;
      const what = `${method} ${path} ${JSON.stringify(headers)}`;
      assert.deepEqual(comparable(viaListener, givenId), comparable(viaApp, givenId), what);
      const log = await logged(from, givenId);
      assert.equal(log.length, 2, `${what}: one access line each: ${log.join('\n')}`);
      assert.equal(log[1], log[0], what);
      return { ...viaListener, fast: taken === 1 };
    };

    const resolvePath = (ref: string) => `/api/v1/resolve?ref=${encodeURIComponent(ref)}`;
    const callersNow = (): Record<string, Record<string, string | string[]>> => ({
      anonymous: {},
      admin: { authorization: `Bearer ${ADMIN_TOKEN}` },
      reader: { authorization: `Bearer ${reader}` },
      'public reader': { authorization: `token ${publicReader}` },
      'unknown token': { authorization: 'Bearer a-token-nobody-issued' },
      malformed: { authorization: 'Basic dXNlcjpwYXNz' },
      repeated: { authorization: [`Bearer ${reader}`, `Bearer ${ADMIN_TOKEN}`] },
    });
    const refs = [
      'redis:v1.0',
      'redis:v1',
      'redis',
      `${PUBLIC}/postgres:v1`,
      `${PRIVATE}/redis:v1.1`,
      `${PRIVATE}/redis:v9`,
      'redis:v9',
      'no-such-template:v1',
      'github.com/nobody/nothing/redis:v1',
      'not a reference!',
      'https://example.com/x.jinja',
    ];

    it('equal answers and log lines over the corpus; cached answers take the fast path', async () => {
      /** Callers whose token the listener decides itself; the others' requests go to the app. */
      const decided = new Set(['anonymous', 'admin', 'reader', 'public reader']);
      let fastHits = 0;
      // Twice over: the first round fills the catalog's cache (through the app), the second hits it.
      for (let round = 0; round < 2; round++) {
        for (const [caller, auth] of Object.entries(callersNow())) {
          for (const ref of refs) {
            const full = await both('GET', resolvePath(ref), auth);
            if (round === 0) continue;
            // Cached: a resolution, or a not-found inside a registry the caller may read.
            const cached =
              full.status === 200 ||
              (full.status === 404 && /VERSION_NOT_FOUND|TEMPLATE_NOT_FOUND/.test(full.body));
            assert.equal(
              full.fast,
              decided.has(caller) && cached,
              `${caller} ${ref}: ${full.status} ${full.body.slice(0, 80)}`,
            );
            if (full.fast) fastHits++;
            if (full.status !== 200) continue;
            const etag = full.headers.find(([k]) => k === 'etag')?.[1];
            assert.ok(etag, `${caller} ${ref}: a resolution carries an ETag`);
            const hit = await both('GET', resolvePath(ref), { ...auth, 'if-none-match': etag! });
            assert.equal(hit.status, 304);
            assert.equal(hit.body, '');
            assert.equal(hit.fast, full.fast);
            for (const inm of [`W/${etag}`, `"other", ${etag}`, '*', '"other"']) {
              assert.equal(
                (await both('GET', resolvePath(ref), { ...auth, 'if-none-match': inm })).fast,
                full.fast,
              );
            }
            await both('HEAD', resolvePath(ref), auth);
            for (const id of ['given-id.1', 'not safe!']) {
              assert.equal(
                (await both('GET', resolvePath(ref), { ...auth, 'x-request-id': id })).fast,
                full.fast,
              );
            }
            // A target and a Host header the adapter rewrites: answered by the app, alike.
            assert.equal((await both('GET', `${resolvePath(ref)}&x='quoted'`, auth)).fast, false);
            assert.equal(
              (await both('GET', resolvePath(ref), { ...auth, host: 'LocalHost:80' })).fast,
              false,
            );
          }
        }
      }
      assert.ok(fastHits >= 20, `${fastHits} fast answers`);
      for (const path of [
        '/api/v1/resolve',
        '/api/v1/resolve?ref=',
        `/api/v1/resolve?ref=${encodeURIComponent('redis:v1.0')}&ref=x`,
        '/api/v1/resolve?ref=redis%3Av1.0+',
        '/api/v1/resolve?x=1&ref=redis:v1.0',
        '/api/v1/resolve/?ref=redis:v1.0',
        '/api//v1/resolve?ref=redis:v1.0',
      ]) {
        await both('GET', path, {});
      }
      await both('POST', resolvePath('redis:v1.0'), {});
    });

    it('random request targets: the listener reads the query as the app does (property)', async () => {
      // Pieces of references, of their encodings and of odd queries, in any order.
      const piece = fc.constantFrom(
        ...`redis postgres : %3A %3a v1 .0 .1 = %3D + %2B %20 & &ref= &x=1 ref= % %2 %ZZ ' # / /.. ~`.split(
          ' ',
        ),
        `${PUBLIC}/`,
        `${PRIVATE}/`,
        'github.com%2Facme%2Ftemplates%2F',
        '%E2%9C%93',
      );
      const callers = callersNow();
      const fastBefore = fast.listener.fastAnswers;
      await fc.assert(
        fc.asyncProperty(
          fc.array(piece, { minLength: 0, maxLength: 8 }),
          fc.constantFrom('anonymous', 'reader', 'admin'),
          async (pieces, caller) => {
            const target = `/api/v1/resolve?ref=${pieces.join('')}`;
            // Twice: the first may fill the cache (through the app), the second then hit it.
            await both('GET', target, callers[caller]!);
            await both('GET', target, callers[caller]!);
          },
        ),
        { numRuns: 150 },
      );
      // Some of those targets were cached answers the listener wrote itself.
      assert.ok(fast.listener.fastAnswers > fastBefore, 'the property took the fast path');
    });

    it("a token never gets another caller's cached answer: private to readers only, either order", async () => {
      const ref = `${PRIVATE}/redis:v1.0`;
      const callers = callersNow();
      // Cached by the reader's request, then asked anonymously and with the public registry's reader.
      assert.equal((await both('GET', resolvePath(ref), callers.reader!)).status, 200);
      assert.equal((await both('GET', resolvePath(ref), {})).status, 404);
      assert.equal((await both('GET', resolvePath(ref), callers['public reader']!)).status, 404);
      assert.equal((await both('GET', resolvePath(ref), callers.admin!)).status, 200);
    });

    it('serves the new answer at once after a sync changes the source', async () => {
      const ref = 'redis:v1.0';
      const old = await both('GET', resolvePath(ref), {});
      assert.equal(JSON.parse(old.body).version, 'v1.0.3');
      const fastBefore = fast.listener.fastAnswers;
      await both('GET', resolvePath(ref), {});
      assert.equal(fast.listener.fastAnswers, fastBefore + 1, 'the cached answer came from the listener');
      // A new patch version in the public registry's source, synced.
      const next = join(source, 'redis', 'v1.0.4');
      mkdirSync(next, { recursive: true });
      cpSync(join(source, 'redis', 'v1.0.3'), next, { recursive: true });
      writeFileSync(join(next, 'NOTES.md'), 'a new patch\n');
      assert.equal((await s.service.sync(publicId, 'manual')).status, 'succeeded');
      // The listener first, so that nothing but the sync has touched the catalog since.
      const after = await send(fastPort, 'GET', resolvePath(ref), {});
      assert.equal(after.status, 200);
      assert.equal(JSON.parse(after.body).version, 'v1.0.4');
      const again = await both('GET', resolvePath(ref), {});
      assert.equal(JSON.parse(again.body).version, 'v1.0.4');
      assert.notEqual(
        again.headers.find(([k]) => k === 'etag')?.[1],
        old.headers.find(([k]) => k === 'etag')?.[1],
      );
    });
  });
}

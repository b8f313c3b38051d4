/**
 * The per-request bookkeeping's cheap paths keep their output: the request counter and the latency
 * histogram read as prom-client's own would from the same requests, and the access-log line is the
 * JSON object it always was (docs/server.md "Running it": one JSON line per request).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { FIXTURES, testServer } from '../../../test/server/helpers.js';
import { createLogger } from '../log.js';
import { observeDuration, ServerMetrics } from './metrics.js';

const REG = 'github.com/acme/templates';

describe('request metrics', () => {
  it('RequestDurations exposes what a prom-client Histogram exposes for the same observations', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            route: fc.constantFrom('/a', '/api/v1/resolve', '/x/:id{.+}', 'q"uo\\te'),
            seconds: fc.oneof(
              fc.double({ min: 0, max: 10, noNaN: true }),
              fc.constantFrom(0, 0.0005, 0.001, 0.005, 1, 5, 5.000001),
            ),
          }),
          { maxLength: 200 },
        ),
        async (observations) => {
          const ours = new ServerMetrics();
          const theirs = new Registry();
          const reference = new Histogram({
            name: ours.duration.name,
            help: ours.duration.help,
            labelNames: ['route'] as const,
            buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5],
            registers: [theirs],
          });
          for (const { route, seconds } of observations) {
            observeDuration(ours.duration.route(route), seconds);
            reference.observe({ route }, seconds);
          }
          const section = (text: string) =>
            text
              .split('\n\n')
              .find((s) => s.includes('# TYPE dm_registry_http_request_duration_seconds histogram'));
          assert.equal(section(await ours.registry.metrics()), section(await theirs.metrics()));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('counts every request once by method, route and status, in /metrics and through get()', async () => {
    const s = testServer({ defaultRegistry: REG });
    try {
      const row = await s.service.add({ source: FIXTURES, name: REG });
      await s.service.sync(row.id, 'manual');
      const ask = async (path: string) => (await s.app.request(path)).arrayBuffer();
      for (let i = 0; i < 7; i++) await ask('/api/v1/resolve?ref=redis:v1.0');
      for (let i = 0; i < 3; i++) await ask('/api/v1/resolve?ref=nothing-here:v1');
      await ask('/healthz');
      const text = await (await s.app.request('/metrics')).text();
      const value = (series: string) => {
        const line = text.split('\n').find((l) => l.startsWith(`${series} `));
        assert.ok(line, `no ${series} in /metrics`);
        return Number(line.slice(series.length + 1));
      };
      const total = 'dm_registry_http_requests_total';
      assert.equal(value(`${total}{method="GET",route="/api/v1/resolve",status="200"}`), 7);
      assert.equal(value(`${total}{method="GET",route="/api/v1/resolve",status="404"}`), 3);
      assert.equal(value(`${total}{method="GET",route="/healthz",status="200"}`), 1);
      const duration = 'dm_registry_http_request_duration_seconds';
      assert.equal(value(`${duration}_count{route="/api/v1/resolve"}`), 10);
      assert.equal(value(`${duration}_bucket{le="+Inf",route="/api/v1/resolve"}`), 10);
      assert.ok(value(`${duration}_sum{route="/api/v1/resolve"}`) > 0);
      // Counts gathered after a read are added at the next read, never twice.
      await ask('/api/v1/resolve?ref=redis:v1.0');
      const again = await s.metrics.requests.get();
      const resolved = again.values.find(
        (v) => v.labels.route === '/api/v1/resolve' && v.labels.status === '200',
      );
      assert.equal(resolved?.value, 8);
      const scrape = await (await s.app.request('/metrics')).text();
      assert.match(
        scrape,
        /dm_registry_http_requests_total\{method="GET",route="\/metrics",status="200"\} 1\n/,
      );
      assert.match(
        scrape,
        /dm_registry_http_requests_total\{method="GET",route="\/api\/v1\/resolve",status="200"\} 8\n/,
      );
    } finally {
      await s.close();
    }
  });
});

describe('the access log line', () => {
  it('is the JSON object of the request, whatever the path, id and time', () => {
    fc.assert(
      fc.property(
        // Paths and methods from small sets as well: a line's method and path are kept while they
        // repeat (log.ts), so repeats and changes both come up.
        fc.array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.constantFrom('/a', 'q"\\')), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.string({ maxLength: 40 }),
        fc.integer({ min: 100, max: 599 }),
        fc.integer({ min: 0, max: 1_000_000 }).map((n) => n / 10),
        fc.array(
          fc.record({
            time: fc.integer({ min: 0, max: 4_102_444_800_000 }),
            method: fc.constantFrom('GET', 'POST', 'DELETE'),
            path: fc.nat(2),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        (paths, requestId, status, ms, requests) => {
          const lines: string[] = [];
          let now = 0;
          const logger = createLogger({ write: (t) => lines.push(t), clock: () => now });
          const expected: string[] = [];
          for (const r of requests.sort((a, b) => a.time - b.time)) {
            now = r.time;
            const path = paths[r.path % paths.length]!;
            logger.request(requestId, r.method, path, status, ms);
            expected.push(
              `${JSON.stringify({ time: new Date(r.time).toISOString(), level: 'info', msg: 'request', requestId, method: r.method, path, status, ms })}\n`,
            );
          }
          logger.flush();
          assert.equal(lines.join(''), expected.join(''));
        },
      ),
      { numRuns: 300 },
    );
  });
});

/**
 * Issue 25 item 3: a large expansion through the manager API does not hold the server. A real
 * `dm-registry start` with a cluster gets a 7 MB configuration of 24,000 resources (and one registry
 * template, resolved from the server's own registries) on `POST /api/v1/expand`: while it is being
 * expanded (from when the bound's counter says it runs until its answer), unrelated resolves one
 * after the other keep being answered, none waiting for a noticeable share of the expansion; the
 * expansion still answers every resource, and a template's error is still the request's. Bodies
 * are read a few at a time: uploads that stall hold 4 reading slots, 16 wait, the rest are refused.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { startKubeStandin } from '../kube-standin/server.js';
import { DIALECTS, FIXTURES, tempDir } from '../server/helpers.js';
import { ADMIN, boundedWork, startRegistry } from '../server/hostile/process.js';

const REG = 'github.com/dm-samples/templates';
const RESOURCES = 24_000;

/** About 7 MB: `RESOURCES` ConfigMaps with 250 bytes of data each, and one redis from the registry. */
function bigConfiguration(): string {
  const value = 'v'.repeat(250);
  const lines = ['resources:', `- name: cache\n  type: ${REG}/redis:v1.0\n  properties: {maxMemory: 64mb}`];
  for (let i = 0; i < RESOURCES; i++) {
    lines.push(`- name: r${i}\n  type: ConfigMap\n  properties:\n    data: {k: "${value}"}`);
  }
  return `${lines.join('\n')}\n`;
}

for (const dialect of DIALECTS) {
  describe(`manager: a large expansion runs off the request thread (${dialect})`, () => {
    it('7 MB, 24,000 resources: unrelated resolves are answered while it expands', async () => {
      const standin = await startKubeStandin();
      const dir = tempDir('dm-expand-off-thread-');
      const kubeconfig = standin.writeKubeconfig(dir, { namespace: 'default' });
      const server = await startRegistry(['--index', FIXTURES, '--cluster', `prod=${kubeconfig}`], {
        dialect,
      });
      try {
        const content = bigConfiguration();
        assert.ok(content.length > 7_000_000, String(content.length));
        const order: string[] = [];
        const expansion = fetch(`${server.url}/api/v1/expand`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ configuration: { content, imports: [] } }),
        }).then((res) => {
          order.push('expansion');
          return res;
        });
        const limit = Date.now() + 300_000;
        while ((await boundedWork(server.url, 'expand')).running !== 1) {
          assert.ok(Date.now() < limit && order.length === 0, `no expansion was seen running: ${order}`);
        }
        // Resolves one after the other for as long as the expansion runs. Expanded on the request
        // thread, parsing the configuration and expanding it held some resolves for 40% of the
        // whole expansion; in a worker no resolve waits for a noticeable share of it (a ratio
        // within this run, so the machine's load does not decide).
        const started = performance.now();
        let longest = 0;
        while (!order.includes('expansion')) {
          const t = performance.now();
          const res = await fetch(`${server.url}/api/v1/resolve?ref=${REG}/redis:v1.0`);
          assert.equal(res.status, 200);
          assert.equal(((await res.json()) as { version: string }).version, 'v1.0.3');
          longest = Math.max(longest, performance.now() - t);
          order.push('resolve');
        }
        const whole = performance.now() - started;
        const resolves = order.length - 1;
        assert.ok(resolves >= 2, `${resolves} resolves answered during the expansion`);
        assert.ok(
          longest * 8 < whole,
          `a resolve waited ${longest.toFixed(0)} ms of the expansion's ${whole.toFixed(0)} ms`,
        );
        const res = await expansion;
        const text = await res.text();
        assert.equal(res.status, 200, text.slice(0, 2000));
        const answer = JSON.parse(text) as {
          config: { resources: { name: string }[] };
          references: { reference: string; resolved: string }[];
        };
        const mine = answer.config.resources.filter((r) => /^r\d+$/.test(r.name));
        assert.equal(mine.length, RESOURCES);
        assert.ok(answer.config.resources.length > RESOURCES, 'the registry template expanded too');
        assert.deepEqual(
          answer.references.map((r) => r.resolved),
          [`${REG}/redis:=v1.0.3`],
        );
        // A template's error is still the request's (422), with no server path in it.
        const bad = await fetch(`${server.url}/api/v1/expand`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            configuration: {
              content: 'imports:\n- path: bad.jinja\nresources:\n- name: b\n  type: bad.jinja\n',
              imports: [{ name: 'bad.jinja', content: '{{ nope( }}\n' }],
            },
          }),
        });
        const badText = await bad.text();
        assert.equal(bad.status, 422, `${bad.status} ${badText}`);
        assert.match(badText, /JINJA_ERROR/);
        assert.doesNotMatch(badText, /dm-manager-/);

        // Configurations are read a few at a time: 30 uploads that stall after their first bytes
        // hold 4 reading slots, 16 wait unread, and the others are refused at once with 503.
        const stalled = Array.from({ length: 30 }, () => {
          const req = request(`${server.url}/api/v1/expand`, {
            method: 'POST',
            agent: false,
            headers: {
              authorization: `Bearer ${ADMIN}`,
              'content-type': 'application/json',
              'content-length': String(8_000_000),
            },
          });
          const answered = new Promise<number>((resolve) => {
            req.on('response', (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            });
            req.on('error', () => resolve(0));
          });
          req.write('{"configuration": {"content": "');
          return { req, answered };
        });
        const reads = () => boundedWork(server.url, 'configuration-read');
        let held = await reads();
        // Until every upload has been taken in: reading, waiting or refused.
        while ((held.running ?? 0) + (held.waiting ?? 0) + (held.refused ?? 0) < 30) {
          assert.ok(Date.now() < limit, JSON.stringify(held));
          held = await reads();
        }
        assert.equal(held.waiting, 16, JSON.stringify(held));
        assert.equal(held.running, 4, JSON.stringify(held));
        assert.equal(held.refused, 10, JSON.stringify(held));
        // The refused ones are answered 503 with Retry-After before their bodies are read.
        const answers: number[] = [];
        for (const s of stalled) void s.answered.then((status) => answers.push(status));
        while (answers.length < 10) {
          assert.ok(Date.now() < limit, answers.join(' '));
          await new Promise((r) => setTimeout(r, 20));
        }
        assert.deepEqual(answers.slice(0, 10), Array(10).fill(503));
        for (const s of stalled) s.req.destroy();
        while ((await reads()).running !== 0 || (await reads()).waiting !== 0) {
          assert.ok(Date.now() < limit, JSON.stringify(await reads()));
        }
        assert.equal(server.exited(), undefined, server.log().slice(-2000));
        assert.equal(await server.stop(), 0);
      } finally {
        server.dispose();
        await standin.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

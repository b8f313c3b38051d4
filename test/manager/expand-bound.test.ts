/**
 * Issue 25 item 3: expansions through the manager API are bounded. 30 expansions sent at once are
 * read 4 at a time (16 more wait) and run two at a time (8 more wait); the rest are refused at once
 * with 503 SERVER_BUSY and Retry-After; the ones admitted answer the same expansion as alone, and the bound's counters are in
 * /metrics.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { managerPaths } from '../../server/src/manager/manager-tokens.js';
import { startKubeStandin } from '../kube-standin/server.js';
import { ADMIN_TOKEN, DIALECTS, tempDir, testServerOn } from '../server/helpers.js';

const configuration = {
  content: `imports:\n- path: cm.jinja\nresources:\n${Array.from(
    { length: 40 },
    (_, i) => `- name: r${i}\n  type: cm.jinja\n  properties: {v: ${i}}\n`,
  ).join('')}`,
  imports: [
    {
      name: 'cm.jinja',
      content:
        'resources:\n- name: {{ env["name"] }}-cm\n  type: ConfigMap\n  properties:\n    data: {v: "{{ properties["v"] }}"}\n',
    },
  ],
};

for (const dialect of DIALECTS) {
  describe(`manager: expansions bounded (${dialect})`, () => {
    it('30 expansions at once: 2 run, 8 wait, the rest get 503 with Retry-After', async () => {
      const standin = await startKubeStandin();
      const dir = tempDir('dm-manager-bound-');
      const s = await testServerOn(dialect, {
        manager: {
          clusters: { prod: standin.writeKubeconfig(dir, { namespace: 'default' }) },
          ...managerPaths(join(dir, 'registry.db')),
        },
      });
      try {
        await s.manager!.ready;
        const expand = async () => {
          const res = await s.app.request('/api/v1/expand', {
            method: 'POST',
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify({ configuration }),
          });
          return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
        };
        const answers = await Promise.all(Array.from({ length: 30 }, expand));
        const ok = answers.filter((a) => a.status === 200);
        const busy = answers.filter((a) => a.status === 503);
        assert.equal(ok.length + busy.length, 30, answers.map((a) => `${a.status} ${a.body}`).join('\n'));
        assert.equal(ok.length, 10);
        for (const b of busy) {
          assert.equal(b.retryAfter, '1');
          assert.match(b.body, /SERVER_BUSY/);
        }
        for (const a of ok) {
          const resources = (JSON.parse(a.body) as { config: { resources: unknown[] } }).config.resources;
          assert.equal(resources.length, 40);
        }
        // Refused while waiting to be read (4 read at a time, 16 wait) or to be expanded.
        const counters = s.manager!.expansions.counters;
        const reads = s.manager!.configurationReads.counters;
        assert.equal(counters.peakRunning, 2);
        assert.ok(reads.peakRunning <= 4, JSON.stringify(reads));
        assert.equal(counters.refused + reads.refused, 20, JSON.stringify({ counters, reads }));
        const metrics = await (await s.app.request('/metrics')).text();
        assert.match(
          metrics,
          new RegExp(
            `^dm_registry_bounded_work\\{work="expand",state="refused"\\} ${counters.refused}$`,
            'm',
          ),
        );
        assert.match(
          metrics,
          new RegExp(
            `^dm_registry_bounded_work\\{work="configuration-read",state="refused"\\} ${reads.refused}$`,
            'm',
          ),
        );
        // Once they are answered, an expansion is admitted again.
        assert.equal((await expand()).status, 200);
      } finally {
        await s.manager?.idle();
        await s.manager?.close();
        await s.close();
        await standin.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

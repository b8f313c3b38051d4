/**
 * Issue 25 item 12 (docs/server.md, "Webhooks"): a captured push replays nothing, whatever its
 * headers say. Delivery ids are not signed, so a duplicate is known by its id or by its body's
 * digest: the same signed body again without `X-GitHub-Delivery`, or with a new id, syncs
 * nothing; another push (another body) does.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { startGitHubStandin } from '../../github-standin/standin.js';
import { DIALECTS, testServerOn } from '../helpers.js';

for (const dialect of DIALECTS) {
  describe(`hostile: webhook replays without a delivery id (${dialect})`, () => {
    it('the same signed body is a duplicate with no id, or with a new one', async () => {
      const standin = await startGitHubStandin({ repos: {} });
      const s = await testServerOn(dialect, { githubApiUrl: standin.url });
      try {
        const row = await s.service.add({ source: 'github.com/acme/hooked', webhookSecret: 'hook-secret' });
        const sign = (body: string) =>
          `sha256=${createHmac('sha256', 'hook-secret').update(body).digest('hex')}`;
        const send = (body: string, delivery?: string) =>
          s.app.request('/api/v1/webhooks/github', {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-github-event': 'push',
              'x-hub-signature-256': sign(body),
              ...(delivery ? { 'x-github-delivery': delivery } : {}),
            },
            body,
          });
        const syncCount = async () => (await s.service.data.reads.syncs(row.id)).length;
        const push = (after: string) =>
          JSON.stringify({
            ref: 'refs/heads/main',
            after,
            repository: { full_name: 'acme/hooked', default_branch: 'main' },
          });
        const first = await send(push('a'.repeat(40)));
        assert.equal(first.status, 202);
        await s.service.queue.idle();
        assert.equal(await syncCount(), 1);
        for (const delivery of [undefined, 'a-new-id', undefined]) {
          const again = await send(push('a'.repeat(40)), delivery);
          assert.equal(again.status, 200, `delivery ${delivery}`);
          assert.match(
            ((await again.json()) as { duplicate?: string }).duplicate ?? '',
            /^sha256:[0-9a-f]{64}$/,
          );
        }
        await s.service.queue.idle();
        assert.equal(await syncCount(), 1, 'no replay synced');
        const next = await send(push('b'.repeat(40)));
        assert.equal(next.status, 202, `another push syncs: ${await next.clone().text()}`);
        await s.service.queue.idle();
        assert.equal(await syncCount(), 2);
      } finally {
        await s.close();
        await standin.close();
      }
    });
  });
}

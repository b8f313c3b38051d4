/**
 * A plain directory registry has no commit (docs/server.md, "HTTP API"): every answer shows `''`
 * where a git registry shows its commit — resolve, the registry, its version list, template info,
 * a sync — and the pages say "local directory"; the `dir-…` fingerprint the store keeps to detect
 * an unchanged directory is never shown.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, FIXTURES, type TestServer, testServer } from './helpers.js';

const REG = 'github.com/acme/templates';

describe("a directory registry's commit", () => {
  let s: TestServer;
  let id: number;
  before(async () => {
    s = testServer({ defaultRegistry: REG });
    id = (await s.service.add({ source: FIXTURES, name: REG })).id;
    await s.service.sync(id, 'manual');
  });
  after(() => s.close());

  const json = async (path: string, init?: RequestInit) => {
    const res = await s.app.request(path, init);
    assert.ok(res.status < 300, `${path}: ${res.status}`);
    return (await res.json()) as { commit: unknown };
  };

  it("is '' in every API answer, and the fingerprint appears nowhere", async () => {
    const answers = [
      await json('/api/v1/resolve?ref=redis:v1.0'),
      await json(`/api/v1/registries/${id}`),
      await json(`/api/v1/registries/${id}/versions`),
      await json(`/api/v1/templates/${REG}/redis`),
      await json(`/api/v1/registries/${id}/sync`, { method: 'POST', headers: admin }),
    ];
    for (const answer of answers) assert.equal(answer.commit, '', JSON.stringify(answer).slice(0, 200));
    const registries = (await json('/api/v1/registries')) as unknown as { registries: { commit: unknown }[] };
    assert.deepEqual(
      registries.registries.map((r) => r.commit),
      [''],
    );
    for (const answer of [...answers, registries])
      assert.doesNotMatch(JSON.stringify(answer), /"dir-[0-9a-f]/);
    // The store keeps the fingerprint: it is what the next sync compares.
    assert.match((await s.service.data.registries.byId(id))?.commit ?? '', /^dir-[0-9a-f]{40}$/);
  });

  it('is "local directory" on the pages', async () => {
    const page = await (await s.app.request(`/registries/${id}`)).text();
    assert.match(page, /none: a local directory/);
    const list = await (await s.app.request('/registries')).text();
    assert.match(list, /local directory/);
    for (const text of [page, list]) assert.doesNotMatch(text, /dir-[0-9a-f]{6}/);
  });
});

/**
 * The read path's seams (docs/server.md, "Read path"): one template-path parser for the API and
 * the pages, one set of read queries and one search per store, and `dm-registry start --index`
 * going through the service. Each test would have caught the disagreement it is named after.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { isDmError } from '../../client/src/error.js';
import { formatTemplateName } from '../../client/src/reference/reference.js';
import { parseTemplatePath } from '../../server/src/api/template-path.js';
import { serviceStoreOf } from '../../server/src/store/open-store.js';
import { DIALECTS, type DialectTestServer, FIXTURES, tempDir, testServerOn } from './helpers.js';

const REG = 'github.com/acme/templates';

const segment = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,11}$/).filter((s) => s !== 'versions');

describe('template paths', () => {
  it('parse back what was formatted, for the API and the pages alike (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          host: segment.map((s) => s.toLowerCase()),
          owner: segment,
          repo: segment,
          collection: fc.option(segment, { nil: undefined }),
          template: segment,
          version: fc.option(fc.tuple(fc.boolean(), fc.stringMatching(/^v[0-9]{1,3}(\.[0-9]{1,3}){0,2}$/)), {
            nil: undefined,
          }),
          rest: fc.array(segment, { maxLength: 3 }),
        }),
        (p) => {
          const parts = [p.host, p.owner, p.repo, ...(p.collection ? [p.collection] : []), p.template];
          const tail = p.version ? ['versions', `${p.version[0] ? '=' : ''}${p.version[1]}`, ...p.rest] : [];
          const parsed = parseTemplatePath([...parts, ...tail].map(encodeURIComponent).join('/'));
          assert.deepEqual(parsed, {
            host: p.host,
            owner: p.owner,
            repo: p.repo,
            collection: p.collection ?? '',
            template: p.template,
            ...(p.version ? { version: p.version[1] } : {}),
            rest: p.version ? p.rest : [],
          });
        },
      ),
    );
  });

  it('never throws anything but NOT_FOUND on arbitrary text (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (raw) => {
        try {
          parseTemplatePath(raw);
        } catch (error) {
          assert.ok(isDmError(error) && error.code === 'NOT_FOUND', String(error));
        }
      }),
    );
  });

  for (const dialect of DIALECTS) {
    describe(`the API and the pages agree on which paths name a template (${dialect})`, () => {
      let s: DialectTestServer;
      before(async () => {
        s = await testServerOn(dialect, { defaultRegistry: REG });
        const row = await s.service.add({ source: FIXTURES, name: REG });
        assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
      });
      after(() => s.close());

      // `…/redis/versions` (no version after the marker) was a template in the API and not found on
      // the pages; `…/versions/=v1.0.3` is the exact-version form on both. A version page's API
      // counterpart is its archive (the API serves a version's content, not the version itself).
      const cases = [
        `${REG}/redis`,
        `${REG}/redis/`,
        `${REG}/redis/versions`,
        `${REG}/redis/versions/v1.0.3`,
        `${REG}/redis/versions/=v1.0.3`,
        `${REG}/redis/versions/v9.9`,
        `${REG}/security/pod-security`,
        `${REG}/security/pod-security/versions`,
        `${REG}/nothing`,
        'github.com/acme',
        `${REG}/a/b/c`,
        'GITHUB.COM/acme/templates/redis',
      ];
      for (const path of cases) {
        it(path, async () => {
          const versioned = /\/versions\/[^/]+$/.test(path);
          const api = await s.app.request(`/api/v1/templates/${path}${versioned ? '/archive.tar.gz' : ''}`);
          const page = await s.app.request(`/templates/${path}`);
          assert.equal(api.status, page.status, `API ${api.status}, page ${page.status}`);
          assert.ok([200, 404].includes(api.status), String(api.status));
        });
      }
    });
  }
});

for (const dialect of DIALECTS) {
  describe(`read queries (${dialect})`, () => {
    it('are one instance per store, shared by the API and the pages', async () => {
      const s = await testServerOn(dialect);
      try {
        assert.equal(serviceStoreOf(s.store).reads, s.service.data.reads);
      } finally {
        await s.close();
      }
    });

    it('search returns store matches; the API adds each reference', async () => {
      const s = await testServerOn(dialect, { defaultRegistry: REG });
      try {
        const row = await s.service.add({ source: FIXTURES, name: REG });
        assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
        const page = await s.service.data.reads.search({
          q: 'redis',
          page: 1,
          limit: 5,
          reader: { all: false, ids: [row.id], organisations: [] },
        });
        assert.equal(page.matches[0]?.name, 'redis');
        assert.ok(!('reference' in (page.matches[0] ?? {})));
        const api = (await (await s.app.request('/api/v1/search?q=redis&limit=5')).json()) as {
          hits: { name: string; reference: string; registry: string; collection: string }[];
          total: number;
        };
        assert.equal(api.total, page.total);
        assert.deepEqual(
          api.hits.map((h) => h.name),
          page.matches.map((m) => m.name),
        );
        for (const h of api.hits) {
          const [host = '', owner = '', repo = ''] = h.registry.split('/');
          assert.equal(
            h.reference,
            formatTemplateName({ host, owner, repo, collection: h.collection, template: h.name }),
          );
        }
      } finally {
        await s.close();
      }
    });
  });

  describe(`start --index goes through the service (${dialect})`, () => {
    it('re-pointing a registry at a new source drops the cached answers and serves the new index', async () => {
      const s = await testServerOn(dialect, { defaultRegistry: 'local.dm/acme/moved' });
      const one = tempDir('dm-seam-one-');
      const two = tempDir('dm-seam-two-');
      try {
        cpSync(join(FIXTURES, 'redis'), join(one, 'redis'), { recursive: true });
        mkdirSync(join(two, 'zebra', 'v1.0'), { recursive: true });
        writeFileSync(join(two, 'zebra', 'v1.0', 'zebra.jinja'), 'resources: []\n');
        writeFileSync(join(two, 'zebra', 'v1.0', 'example.yaml'), 'resources: []\n');
        const first = await s.service.addOrUpdate({ source: one, name: 'local.dm/acme/moved' });
        assert.equal((await s.service.sync(first.id, 'start')).status, 'succeeded');
        assert.equal((await s.service.catalog.resolveAnswer('redis', { canRead: () => true })).status, 200);
        const second = await s.service.addOrUpdate({ source: two, name: 'local.dm/acme/moved' });
        assert.equal(second.id, first.id);
        assert.equal(second.source, two);
        assert.equal((await s.service.sync(second.id, 'start')).status, 'succeeded');
        assert.equal((await s.service.catalog.resolveAnswer('redis', { canRead: () => true })).status, 404);
        assert.equal((await s.service.catalog.resolveAnswer('zebra', { canRead: () => true })).status, 200);
      } finally {
        await s.close();
      }
    });

    it('is validated as add is: a bad name is refused before anything is written', async () => {
      const s = await testServerOn(dialect);
      try {
        await assert.rejects(
          () => s.service.addOrUpdate({ source: FIXTURES, name: 'not a name' }),
          (e: unknown) => isDmError(e) && e.code === 'INVALID_REGISTRY',
        );
        assert.equal((await s.service.all()).length, 0);
      } finally {
        await s.close();
      }
    });
  });
}

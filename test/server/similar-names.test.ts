/**
 * Typo tolerance on SQLite (store/similar-names.ts): pg_trgm's trigrams and similarity on known
 * cases, the inverted index answering exactly what comparing every name would (property), and the
 * search's did-you-mean through the real store and API, on each database of DIALECTS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type NamedRow,
  SIMILARITY_THRESHOLD,
  SimilarNames,
  similarity,
  trigrams,
} from '../../server/src/store/similar-names.js';
import { pagesServer, SAMPLES } from '../pages/fixture.js';
import { DIALECTS, type DialectTestServer } from './helpers.js';

describe('similar names (pg_trgm rule)', () => {
  it('makes the trigrams and similarity pg_trgm makes', () => {
    // SELECT show_trgm('Redis'), show_trgm('cron-job'), similarity('redis', 'rediss') …
    assert.deepEqual([...trigrams('Redis')].sort(), ['  r', ' re', 'dis', 'edi', 'is ', 'red']);
    assert.deepEqual([...trigrams('cron-job')].sort(), [
      '  c',
      '  j',
      ' cr',
      ' jo',
      'cro',
      'job',
      'ob ',
      'on ',
      'ron',
    ]);
    assert.deepEqual([...trigrams('a')].sort(), ['  a', ' a ']);
    assert.equal(trigrams('--').size, 0);
    assert.equal(similarity('redis', 'rediss'), 5 / 8);
    assert.equal(similarity('redsi', 'redis'), 3 / 9);
    assert.equal(similarity('', 'redis'), 0);
  });

  it('finds exactly the names a full comparison finds, in order (property)', () => {
    // Mostly a few ASCII letters (names share trigrams), and what the index keys differently:
    // capitals, digits, `_`/`.`, non-ASCII letters (one that lower-cases to ASCII, one astral).
    const name = fc.oneof(
      fc.stringMatching(/^[a-e][a-e-]{0,7}$/),
      fc
        .array(fc.constantFrom('a', 'b', 'c', 'A', 'B', '1', '_', '.', '-', 'é', 'É', '\u212a', '𝒜'), {
          minLength: 1,
          maxLength: 8,
        })
        .map((cs) => cs.join('')),
    );
    fc.assert(
      fc.property(fc.array(name, { maxLength: 40 }), name, (names, query) => {
        const rows: NamedRow[] = names.map((n, i) => ({
          id: i,
          name: n,
          collection: i % 2 ? 'c' : '',
          registryId: i % 3,
        }));
        const index = new SimilarNames(
          () => 'v',
          () => rows,
        );
        const keep = (r: NamedRow) => r.registryId !== 2;
        const found = index.similar(query, keep, 1000).map((r) => r.id);
        const expected = rows
          .filter((r) => keep(r) && similarity(r.name, query) >= SIMILARITY_THRESHOLD)
          .sort(
            (a, b) =>
              similarity(b.name, query) - similarity(a.name, query) ||
              (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
              (a.collection < b.collection ? -1 : a.collection > b.collection ? 1 : 0),
          )
          .map((r) => r.id);
        assert.deepEqual(found, expected);
      }),
      { numRuns: 300 },
    );
  });

  it('reads the names again only when the fingerprint changes', () => {
    let version = 'a';
    let loads = 0;
    let rows: NamedRow[] = [{ id: 1, name: 'redis', collection: '', registryId: 1 }];
    const index = new SimilarNames(
      () => version,
      () => {
        loads++;
        return rows;
      },
    );
    assert.equal(index.similar('rediss', () => true, 10)[0]?.name, 'redis');
    assert.equal(index.similar('redis', () => true, 10).length, 1);
    assert.equal(loads, 1);
    rows = [{ id: 2, name: 'postgres', collection: '', registryId: 1 }];
    version = 'b';
    assert.equal(index.similar('rediss', () => true, 10).length, 0);
    assert.equal(index.similar('postgress', () => true, 10)[0]?.name, 'postgres');
    assert.equal(loads, 2);
  });
});

for (const dialect of DIALECTS)
  describe(`search with typos (API, ${dialect})`, () => {
    let s: DialectTestServer;
    before(async () => {
      s = await pagesServer(dialect);
    });
    after(() => s.close());

    it('answers a misspelt query with similar names and didYouMean, never from hidden registries', async () => {
      const res = await s.app.request('/api/v1/search?q=redsi');
      assert.equal(res.status, 200);
      const body = (await res.json()) as {
        hits: { reference: string }[];
        didYouMean: string | null;
        total: number;
      };
      assert.equal(body.didYouMean, 'redis');
      assert.equal(body.hits[0]?.reference, `${SAMPLES}/redis`);
      assert.equal(body.total, body.hits.length);
      const exact = (await (await s.app.request('/api/v1/search?q=redis')).json()) as {
        didYouMean: string | null;
      };
      assert.equal(exact.didYouMean, null);
      // hidden-redis is in a private registry: similar to "hiden-redis", but not for anonymous callers.
      const hidden = (await (await s.app.request('/api/v1/search?q=hiden-rediss')).json()) as {
        hits: { reference: string }[];
      };
      assert.ok(
        hidden.hits.every((h) => !h.reference.includes('hidden-redis')),
        JSON.stringify(hidden.hits),
      );
      const short = (await (await s.app.request('/api/v1/search?q=rd')).json()) as {
        didYouMean: string | null;
        total: number;
      };
      assert.equal(short.didYouMean, null, 'queries under 3 characters are not corrected');
    });

    it('sees a template added by a sync (the names are read again after an index swap)', async () => {
      const before = (await (await s.app.request('/api/v1/search?q=redsi')).json()) as { total: number };
      const { mkdirSync, writeFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { tempDir } = await import('./helpers.js');
      const root = tempDir('dm-similar-');
      mkdirSync(join(root, 'redsis/v1'), { recursive: true });
      writeFileSync(join(root, 'registry.yaml'), 'name: github.com/acme/typos\n');
      writeFileSync(join(root, 'redsis/v1/redsis.jinja'), 'resources: []\n');
      writeFileSync(join(root, 'redsis/v1/example.yaml'), 'resources: []\n');
      const row = await s.service.add({ source: root, name: 'github.com/acme/typos' });
      assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
      const after = (await (await s.app.request('/api/v1/search?q=redsix')).json()) as {
        hits: { reference: string }[];
      };
      assert.ok(
        after.hits.some((h) => h.reference === 'github.com/acme/typos/redsis'),
        JSON.stringify(after.hits),
      );
      assert.ok(before.total > 0);
    });
  });

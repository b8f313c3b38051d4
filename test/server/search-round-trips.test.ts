/**
 * On PostgreSQL a search answered from the held rows costs one round trip to the database
 * (docs/server.md, "Search"): the registries the last search read rank the held rows, and are read
 * again with the page's rows in the same statement; when they changed (an index swap, a registry
 * made private), the search is answered again as they now are. Counted with the pool's `acquire`
 * event (one per statement the pool runs).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generatedIndex } from '../../bench/generated-index.js';
import { openPostgresStore, type PostgresStore } from '../../server/src/store/postgres/open.js';
import { PostgresReads } from '../../server/src/store/postgres/reads.js';
import { swapIndexPg } from '../../server/src/store/postgres/swap-index.js';
import { PUBLIC_READER } from '../../server/src/store/visibility.js';
import { DIALECTS, postgresDatabase } from './helpers.js';

if (DIALECTS.includes('postgres'))
  describe('PostgreSQL search round trips', () => {
    let store: PostgresStore;
    let registryId: number;
    before(async () => {
      store = await openPostgresStore(await postgresDatabase(), { max: 4 });
      const { rows } = await store.pool.query<{ id: number }>(
        "INSERT INTO registries (name, source_type, source, created_at) VALUES ('github.com/acme/trips', 'directory', '/x', 0) RETURNING id",
      );
      registryId = rows[0]!.id;
      await swapIndexPg(store, generatedIndex(500), { registryId, commit: 'c', etag: null, now: 0 });
    });
    after(async () => {
      await store?.close();
    });

    it('answers from the held rows in one statement, and again when the registries changed', async () => {
      const reads = new PostgresReads(store);
      await reads.warm((await store.pool.query('SELECT id, generation FROM registries')).rows);
      let statements = 0;
      const count = () => statements++;
      store.pool.on('acquire', count);
      try {
        const search = (q: string) => reads.search({ q, page: 1, limit: 5, reader: PUBLIC_READER });
        // A template's name with its first two letters swapped: its words match nothing, the name is similar.
        const { rows } = await store.pool.query<{ name: string }>(
          'SELECT name FROM templates ORDER BY id LIMIT 1',
        );
        const typo = rows[0]!.name.replace(/^(.)(.)/, '$2$1');
        const first = await search('redis');
        assert.ok(first.total > 0);
        statements = 0;
        const answers = [];
        for (const q of ['redis', 'redis cache', '', typo, 'zookeeper gateway'])
          answers.push(await search(q));
        assert.equal(statements, 5, 'one statement per search');
        assert.deepEqual(answers[0], first);
        assert.ok(answers[0]!.matches.every((m) => m.latestVersion === 'v1' && m.description !== null));
        assert.equal(answers[3]!.didYouMean, rows[0]!.name);

        // The registry made private: the next search reads it so, and answers nothing to the public.
        await store.pool.query("UPDATE registries SET visibility = 'private' WHERE id = $1", [registryId]);
        const hidden = await search('redis');
        assert.equal(hidden.total, 0);
        await store.pool.query("UPDATE registries SET visibility = 'public' WHERE id = $1", [registryId]);
        assert.deepEqual(await search('redis'), first);
      } finally {
        store.pool.off('acquire', count);
      }
    });
  });

/**
 * A query written over the index's terms (`expandedFtsQuery`) finds exactly what the prefix query
 * finds, on a real FTS5 table with the store's tokeniser and prefix index; and the search over the
 * held rows answers as before once the terms are held, after a swap changed them as well.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { generatedIndex } from '../../../../bench/generated-index.js';
import { queryWords } from '../search.js';
import { PUBLIC_READER } from '../visibility.js';
import { openStore } from './open.js';
import { expandedFtsQuery, ftsQuery, TemplateSearch } from './search.js';
import { swapIndex } from './swap-index.js';

describe('FTS5 queries over the index’s terms', () => {
  it('match what the prefix queries match, whatever the words and texts', () => {
    const db = new Database(':memory:');
    db.exec(
      "CREATE VIRTUAL TABLE f USING fts5(name, title, tokenize = 'unicode61', prefix = '2 3'); CREATE VIRTUAL TABLE v USING fts5vocab(f, 'row')",
    );
    // Few letters, so words share prefixes and terms extend each other.
    const word = fc.stringMatching(/^[abcé1]{1,7}$/);
    const text = fc.array(word, { maxLength: 6 }).map((ws) => ws.join(' '));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, text), { minLength: 1, maxLength: 30 }),
        fc.array(word, { minLength: 1, maxLength: 3 }),
        (rows, asked) => {
          db.exec('DELETE FROM f');
          const insert = db.prepare('INSERT INTO f (name, title) VALUES (?, ?)');
          for (const [name, title] of rows) insert.run(name, title);
          const terms = (db.prepare('SELECT term FROM v').pluck().all() as string[]).sort();
          const words = queryWords(asked.join(' '));
          const find = (q: string) => db.prepare('SELECT rowid FROM f WHERE f MATCH ?').pluck().all(q);
          const expected = find(ftsQuery(words)!);
          const expanded = expandedFtsQuery(words, terms);
          assert.deepEqual(expanded === false ? [] : find(expanded!), expected, `${words} over ${terms}`);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('the held search finds what the prefix query finds, with the terms read again after a swap', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dm-search-terms-'));
    try {
      const store = openStore(join(dir, 'registry.db'));
      store.sqlite
        .prepare(
          "INSERT INTO registries (name, source_type, source, created_at) VALUES ('github.com/acme/big', 'directory', '/x', 0)",
        )
        .run();
      const search = new TemplateSearch(store);
      // `2999` and `2500` are terms of the second index only: terms of the first would find nothing.
      const queries = ['redis', 'zookeeper gateway', 'autoscaler', 'post back', '2999', 'redis 2500', 'zzzz'];
      for (const [round, count] of [
        [0, 2000],
        [1, 3000],
      ] as const) {
        swapIndex(store, generatedIndex(count), { registryId: 1, commit: `c${round}`, etag: null, now: 0 });
        await search.warm(
          store.sqlite.prepare('SELECT id, generation FROM registries').all() as {
            id: number;
            generation: number;
          }[],
        );
        const heldBefore = search.counters().held;
        for (const q of queries) {
          const page = search.search({ q, page: 1, limit: 2000, reader: PUBLIC_READER });
          const expected = store.sqlite
            .prepare('SELECT count(*) FROM templates_fts WHERE templates_fts MATCH ?')
            .pluck()
            .get(ftsQuery(queryWords(q))) as number;
          if (expected === 0) {
            assert.equal(page.didYouMean === null ? page.total : 0, 0, `${q} (round ${round})`);
            continue;
          }
          assert.equal(page.total, Math.min(expected, 1000), `${q} (round ${round})`);
          assert.equal(page.totalIsLowerBound, expected > 1000, `${q} (round ${round})`);
        }
        assert.equal(search.counters().held, heldBefore + queries.length, 'answered from the held rows');
      }
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

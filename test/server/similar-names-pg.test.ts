/**
 * The misspelt query on PostgreSQL is answered from the held names (store/similar-names.ts through
 * postgres/search.ts), not by the trigram index: differential against pg_trgm itself on the same
 * database. For random queries — names with letters dropped, doubled, swapped or replaced, and
 * random strings — the held rows give exactly the rows, in exactly the order, that
 * `name % q ORDER BY similarity(name, q) DESC, name, collection` gives; and a search whose words
 * match nothing answers them with the first as didYouMean, counted as answered from the held rows.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { generatedIndex } from '../../bench/generated-index.js';
import type { BuiltIndex } from '../../server/src/indexer/build-index.js';
import { openPostgresStore, type PostgresStore } from '../../server/src/store/postgres/open.js';
import { PostgresReads } from '../../server/src/store/postgres/reads.js';
import { type PgRegistryRow, PgTemplateWords } from '../../server/src/store/postgres/search.js';
import { swapIndexPg } from '../../server/src/store/postgres/swap-index.js';
import { PUBLIC_READER } from '../../server/src/store/visibility.js';
import { DIALECTS, postgresDatabase } from './helpers.js';

const PARTS = [
  'redis',
  'Redis',
  'postgres',
  'grafana',
  'alert',
  'node',
  'exporter',
  'kafka',
  'zk',
  'a',
  'x9',
];
const SEPARATORS = ['-', '_', '.', ''];

/** Template names from PARTS (the reference grammar: ASCII letters, digits, `.`, `_`, `-`). */
function names(): string[] {
  const out = new Set<string>();
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  while (out.size < 400) {
    const words = 1 + next(3);
    let name = PARTS[next(PARTS.length)]!;
    for (let i = 1; i < words; i++) name += SEPARATORS[next(SEPARATORS.length)]! + PARTS[next(PARTS.length)]!;
    if (next(3) === 0) name += `-${next(200)}`;
    out.add(name);
  }
  return [...out];
}

/** The bench's generated templates (one version each), named `all`. */
function index(all: readonly string[]): BuiltIndex {
  const built = generatedIndex(all.length);
  built.templates.forEach((t, i) => {
    t.name = all[i]!;
    t.collection = `team${i % 3}`;
  });
  return built;
}

/** A name with one edit, or a random string: what a person mistypes. */
function queries(all: readonly string[]): fc.Arbitrary<string> {
  const letter = fc.constantFrom(...'abcdefgiklnoprstxz9-. '.split(''));
  const edited = fc
    .tuple(fc.constantFrom(...all), fc.nat(), letter, fc.constantFrom('drop', 'double', 'swap', 'replace'))
    .map(([name, at, c, how]) => {
      const i = at % name.length;
      if (how === 'drop') return name.slice(0, i) + name.slice(i + 1);
      if (how === 'double') return name.slice(0, i + 1) + name.slice(i);
      if (how === 'swap' && i + 1 < name.length)
        return name.slice(0, i) + name[i + 1] + name[i] + name.slice(i + 2);
      return name.slice(0, i) + c + name.slice(i + 1);
    });
  const random = fc.array(letter, { minLength: 3, maxLength: 12 }).map((cs) => cs.join(''));
  return fc.oneof(edited, random).filter((q) => q.trim().length >= 3);
}

describe('similar names on PostgreSQL: the held names against pg_trgm', {
  skip: !DIALECTS.includes('postgres'),
}, () => {
  let store: PostgresStore;
  let words: PgTemplateWords;
  let registries: PgRegistryRow[];
  const all = names();

  before(async () => {
    store = await openPostgresStore(await postgresDatabase(), { max: 4 });
    const { rows } = await store.pool.query<{ id: number }>(
      "INSERT INTO registries (name, source_type, source, created_at) VALUES ('github.com/acme/typos', 'directory', '/x', 0) RETURNING id",
    );
    await swapIndexPg(store, index(all), { registryId: rows[0]!.id, commit: 'c', etag: null, now: 0 });
    registries = (
      await store.pool.query<PgRegistryRow>(
        'SELECT id, name, visibility, organisation, generation FROM registries',
      )
    ).rows;
    words = new PgTemplateWords(store);
    await words.loadNew(registries);
    assert.ok(words.ready(registries), 'the rows are held');
  });

  after(async () => {
    await store?.close();
  });

  it('answers exactly what name % q answers, in the same order (property)', async () => {
    let nonEmpty = 0;
    await fc.assert(
      fc.asyncProperty(queries(all), async (raw) => {
        const q = raw.trim().toLowerCase();
        const { rows } = await store.pool.query<{ name: string; collection: string }>(
          `SELECT name, collection FROM templates WHERE name % $1
           ORDER BY similarity(name, $1) DESC, name COLLATE "C", collection COLLATE "C" LIMIT 1001`,
          [q],
        );
        const held = words.similar(registries, { reader: PUBLIC_READER }, q, 1001);
        if (rows.length > 0) nonEmpty++;
        assert.deepEqual(
          held.map((r) => `${r.collection}/${r.name}`),
          rows.map((r) => `${r.collection}/${r.name}`),
          `query ${JSON.stringify(q)}`,
        );
      }),
      { numRuns: 300 },
    );
    assert.ok(nonEmpty > 50, `only ${nonEmpty} queries found similar names: the property tested little`);
  });

  it('answers a search whose words match nothing from the held names, with didYouMean', async () => {
    const reads = new PostgresReads(store);
    const first = await reads.search({ q: 'redis', page: 1, limit: 20, reader: PUBLIC_READER });
    assert.ok(first.total > 0);
    const before = reads.searchCounters();
    const page = await reads.search({ q: 'grafanna', page: 1, limit: 5, reader: PUBLIC_READER });
    const { rows } = await store.pool.query<{ name: string }>(
      `SELECT name FROM templates WHERE name % 'grafanna'
       ORDER BY similarity(name, 'grafanna') DESC, name COLLATE "C", collection COLLATE "C"`,
    );
    assert.ok(rows.length > 5, `pg_trgm finds ${rows.length} names similar to grafanna`);
    assert.equal(page.total, rows.length);
    assert.deepEqual(
      page.matches.map((m) => m.name),
      rows.slice(0, 5).map((r) => r.name),
    );
    assert.equal(page.didYouMean, rows[0]!.name);
    const counters = reads.searchCounters();
    assert.equal(counters.held, before.held + 1, 'answered from the held rows');
    assert.equal(counters.database, before.database);
  });
});

/**
 * Properties of search's rules (store/search.ts; docs/server.md "Search"), the same for both
 * dialects, against oracles written the plain way: the tokeniser (`queryWords`), the by-field score
 * (`rank`: a query word starting a word of the field, twice when it is the whole word), the order
 * (`rankCandidates`: exact name, name prefix, score, then name, collection and id), the packed-key
 * order of held rows (`rankHeld`) being exactly that order, and the page, totals and facets
 * (`searchPage`, `countFacets`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { HeldRow } from './held-rows.js';
import { countFacets, queryWords, rank, rankCandidates, rankHeld, searchPage } from './search.js';
import { PUBLIC_READER } from './visibility.js';

/** Text from few characters, so words repeat and extend each other: ASCII, `_`, punctuation, accents, an astral letter. */
const CHARS = ['a', 'b', 'ab', 'R', 'e', 'é', 'É', '1', '_', '-', '.', ' ', '𝒜', 'ß'];
const text = fc.array(fc.constantFrom(...CHARS), { maxLength: 12 }).map((parts) => parts.join(''));
const query = fc.array(fc.constantFrom(...CHARS), { maxLength: 8 }).map((parts) => parts.join(''));

/** The oracle's words of a lower-cased text: maximal runs of letters, digits and `_`. */
function textWords(lower: string): string[] {
  return lower.match(/[\p{L}\p{N}_]+/gu) ?? [];
}

/** The by-field score written the plain way: per query word, the first text word it starts. */
function oracleScore(
  r: { lowerName: string; lowerTitle: string; lowerCollection: string },
  words: readonly string[],
): number {
  let score = 0;
  for (const [field, weight] of [
    [r.lowerName, 20],
    [r.lowerTitle, 8],
    [r.lowerCollection, 6],
  ] as const) {
    const fieldWords = textWords(field);
    for (const w of words) {
      const first = fieldWords.find((t) => t.startsWith(w));
      if (first !== undefined) score += first === w ? weight * 2 : weight;
    }
  }
  return score;
}

const NAMES = [
  'redis',
  'Redis',
  'redis-cache',
  'redis_cache',
  'cache',
  'cache-redis',
  'node-exporter',
  'a',
  'ab',
];
const rowSpec = fc.record({
  name: fc.oneof(
    fc.constantFrom(...NAMES),
    text.filter((t) => t.length > 0),
  ),
  collection: fc.constantFrom('team', 'Team', 'ops', 'cache'),
  title: fc.option(text, { nil: null }),
  registryId: fc.integer({ min: 1, max: 3 }),
});
/** Rows with distinct ids, their lower-cased fields, and `order`: their place by name, collection, id. */
const rows = fc.array(rowSpec, { maxLength: 30 }).map((specs) => {
  const made: HeldRow[] = specs.map((s, i) => ({
    id: i * 7 + 3,
    ...s,
    lowerName: s.name.toLowerCase(),
    lowerTitle: (s.title ?? '').toLowerCase(),
    lowerCollection: s.collection.toLowerCase(),
    order: 0,
  }));
  const ordered = [...made].sort(
    (a, b) =>
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
      (a.collection < b.collection ? -1 : a.collection > b.collection ? 1 : 0) ||
      a.id - b.id,
  );
  ordered.forEach((r, i) => {
    r.order = i;
  });
  return { rows: made, ordered };
});
/** A query, sometimes a name of the rows (the exact-name and prefix tiers), lower-cased and trimmed as the stores do. */
const searchQuery = fc.oneof(
  query,
  fc.constantFrom(...NAMES),
  fc.constantFrom('red', 'REDIS', ' redis ', 'cache'),
);

describe('search rules (store/search.ts)', () => {
  it('queryWords: lower-cased runs of letters and digits, at most 16, separators never matter', () => {
    fc.assert(
      fc.property(
        fc.array(query, { maxLength: 20 }),
        fc.constantFrom(' ', '_', '.', '-', '/', ' _ '),
        (parts, sep) => {
          const q = parts.join(sep);
          const words = queryWords(q);
          assert.ok(words.length <= 16);
          for (const w of words) assert.match(w, /^[\p{L}\p{N}]+$/u);
          for (const w of words) assert.equal(w, w.toLowerCase());
          // The same words whatever separates them, and the words are their own words.
          assert.deepEqual(queryWords(parts.join(' ')), words);
          assert.deepEqual(queryWords(words.join(' ')), words);
          const all = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
          assert.deepEqual(words, all.slice(0, 16));
        },
      ),
      { numRuns: 500 },
    );
    assert.deepEqual(queryWords('exporter_node'), ['exporter', 'node']);
    assert.deepEqual(queryWords('Exporter.NODE'), ['exporter', 'node']);
  });

  it('rank: each query word that starts a word of a field scores the field, twice as a whole word', () => {
    fc.assert(
      fc.property(text, text, text, query, (name, title, collection, q) => {
        const r = {
          lowerName: name.toLowerCase(),
          lowerTitle: title.toLowerCase(),
          lowerCollection: collection.toLowerCase(),
        };
        const words = queryWords(q);
        assert.equal(rank(r, words), oracleScore(r, words));
      }),
      { numRuns: 2000 },
    );
    const r = { lowerName: 'redis-cache', lowerTitle: 'a redis_cache', lowerCollection: 'cache' };
    // name: redis whole (40) + cache whole (40); title: `redis_cache` is one word that redis starts (8); collection: cache whole (12).
    assert.equal(rank(r, ['redis', 'cache']), 100);
  });

  it('rankCandidates: exact name, then name prefix, then score, then name, collection and id', () => {
    fc.assert(
      fc.property(rows, searchQuery, ({ rows }, raw) => {
        const q = raw.trim().toLowerCase();
        const words = queryWords(raw);
        const ranked = rankCandidates(rows, q, words);
        assert.deepEqual(
          ranked.map((r) => r.id).sort((a, b) => a - b),
          rows.map((r) => r.id).sort((a, b) => a - b),
          'a permutation of the candidates',
        );
        const key = (r: HeldRow) => [
          r.lowerName === q ? 0 : r.lowerName.startsWith(q) ? 1 : 2,
          -oracleScore(r, words),
        ];
        for (let i = 1; i < ranked.length; i++) {
          const a = ranked[i - 1]!;
          const b = ranked[i]!;
          const [ta, sa] = key(a);
          const [tb, sb] = key(b);
          assert.ok(
            ta! < tb! || (ta === tb && sa! < sb!) || (ta === tb && sa === sb && a.order < b.order),
            'in order',
          );
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('rankHeld: exactly the order of rankCandidates, for rows knowing their place', () => {
    fc.assert(
      fc.property(rows, searchQuery, fc.nat(), ({ rows, ordered }, raw, cut) => {
        const q = raw.trim().toLowerCase();
        const words = queryWords(raw);
        // The candidates: any subset of the held rows.
        const candidates = rows.filter((_, i) => (cut >> (i % 30)) & 1 || i % 3 === 0);
        assert.deepEqual(
          rankHeld(candidates, ordered, q, words).map((r) => r.id),
          rankCandidates(candidates, q, words).map((r) => r.id),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it('searchPage and countFacets: the page is its slice, totals and facets count every candidate', () => {
    fc.assert(
      fc.property(
        rows,
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 10 }),
        fc.boolean(),
        ({ rows }, page, limit, lower) => {
          const names = new Map([
            [1, 'github.com/a/one'],
            [2, 'github.com/a/two'],
            [3, 'github.com/a/one'],
          ]);
          const result = searchPage({ q: 'x', page, limit, reader: PUBLIC_READER }, rows, {
            totalIsLowerBound: lower,
            registryNames: names,
            extra: (id) => ({ latestVersion: `v${id}`, description: id % 2 ? `d${id}` : '' }),
            didYouMean: null,
          });
          assert.equal(result.total, rows.length);
          assert.equal(result.totalIsLowerBound, lower);
          const shown = rows.slice((page - 1) * limit, page * limit);
          assert.deepEqual(
            result.matches.map((m) => [
              m.name,
              m.collection,
              m.registry,
              m.latestVersion,
              m.title,
              m.description,
            ]),
            shown.map((r) => [
              r.name,
              r.collection,
              names.get(r.registryId),
              `v${r.id}`,
              r.title || null,
              r.id % 2 ? `d${r.id}` : null,
            ]),
          );
          assert.deepEqual(result.facets, countFacets(rows, names));
          const collections: Record<string, number> = {};
          const registries: Record<string, number> = {};
          for (const r of rows) {
            collections[r.collection] = (collections[r.collection] ?? 0) + 1;
            const name = names.get(r.registryId)!;
            registries[name] = (registries[name] ?? 0) + 1;
          }
          assert.deepEqual(result.facets, { collection: collections, registry: registries });
        },
      ),
      { numRuns: 500 },
    );
  });
});

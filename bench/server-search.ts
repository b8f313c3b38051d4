/**
 * Search latency over a generated index of 100,000 templates (docs/server.md "Tests and measurements"; target p99 ≤ 10 ms):
 * the server's query (FTS5 with the `prefix='2 3'` index, bounded candidate set, then bm25 ranking
 * and facets) against, in the same run, the naive query that ranks the whole match set.
 * Usage: node dist/bench/server-search.js [templates, default 100000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../server/src/store/db.js';
import { ftsQuery, queryWords, TemplateSearch } from '../server/src/store/search.js';
import { swapIndex } from '../server/src/store/swap-index.js';
import { PUBLIC_READER } from '../server/src/store/visibility.js';
import { generatedIndex, measure, SEARCH_QUERIES } from './generated-index.js';

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 100_000);
  const dir = mkdtempSync(join(tmpdir(), 'bench-search-'));
  try {
    const store = openStore(join(dir, 'registry.db'));
    store.sqlite
      .prepare(
        "INSERT INTO registries (name, source_type, source, created_at) VALUES ('github.com/acme/big', 'directory', '/x', 0)",
      )
      .run();
    const started = performance.now();
    swapIndex(store, generatedIndex(count), { registryId: 1, commit: 'c', etag: null, now: 0 });
    const indexSeconds = (performance.now() - started) / 1000;
    const search = new TemplateSearch(store);
    const naive = store.sqlite.prepare(
      `SELECT t.id, t.collection, t.name, bm25(templates_fts, 10.0, 4.0, 5.0, 1.0, 2.0) AS rank
       FROM templates_fts f JOIN templates t ON t.id = f.rowid WHERE templates_fts MATCH ? ORDER BY rank LIMIT 20`,
    );
    const queries = SEARCH_QUERIES;
    console.log(
      `search bench: ${count} templates (indexed in ${indexSeconds.toFixed(1)} s), 300 queries each, ms`,
    );
    console.log(
      `${'query'.padEnd(32)} ${'dm-registry p50/p99'.padStart(20)}   ${'naive ranked p50/p99'.padStart(22)}   hits`,
    );
    let worst = 0;
    for (const [label, q] of queries) {
      let total = 0;
      const ours = await measure(() => {
        total = search.search({ q, page: 1, limit: 20, reader: PUBLIC_READER }).total;
      }, 300);
      const match = ftsQuery(queryWords(q))!;
      const base = await measure(() => naive.all(match), 60);
      worst = Math.max(worst, ours.p99);
      console.log(
        `${label.padEnd(32)} ${`${ours.p50.toFixed(2)} / ${ours.p99.toFixed(2)}`.padStart(20)}   ${`${base.p50.toFixed(2)} / ${base.p99.toFixed(2)}`.padStart(22)}   ${total}`,
      );
    }
    console.log(`worst p99: ${worst.toFixed(2)} ms (target ≤ 10 ms)`);
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

// SQLite only: the ReadStore's search (FTS5, sqlite/search.ts) added to the reads written once (../read-queries.ts), one instance per store.
/**
 * The read queries of the API and the pages on SQLite (docs/server.md, "Read path"): everything but
 * the search is ../read-queries.ts over sqlite/runner.ts (statements prepared once per text); the
 * search is sqlite/search.ts. `readsOf(store)` hands every route module the same instance (one
 * search with its caches).
 */
import type {
  ReadStore,
  RegistryGeneration,
  SearchCounters,
  SearchOptions,
  SearchPage,
} from '../contract.js';
import { SqlReads } from '../read-queries.js';
import type { Store } from './open.js';
import { sqliteRunner } from './runner.js';
import { TemplateSearch } from './search.js';
import { swapsSettled } from './swap-index-thread.js';

export class ReadQueries extends SqlReads {
  private readonly searcher: TemplateSearch;

  constructor(store: Store) {
    super(sqliteRunner(store, () => swapsSettled(store)));
    this.searcher = new TemplateSearch(store);
  }

  async search(options: SearchOptions): Promise<SearchPage> {
    return this.searcher.search(options);
  }

  warm(generations: readonly RegistryGeneration[]): Promise<void> {
    return this.searcher.warm(generations);
  }

  searchCounters(): SearchCounters {
    return this.searcher.counters();
  }
}

const instances = new WeakMap<Store, ReadQueries>();

/** The one ReadStore of a store, shared by the API and the pages. */
export function readsOf(store: Store): ReadStore {
  let reads = instances.get(store);
  if (!reads) {
    reads = new ReadQueries(store);
    instances.set(store, reads);
  }
  return reads;
}

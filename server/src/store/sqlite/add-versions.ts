// SQLite only: the search rows of added versions' templates live in the FTS5 table templates_fts; the flow and its rules are ../add-versions.ts.
/**
 * Adding versions on SQLite (docs/mirroring.md): ../add-versions.ts's flow, the same as on
 * PostgreSQL, with the full-text search rows kept the SQLite way (index-writes.ts), over
 * sqlite/runner.ts. `addVersions` runs it synchronously on a store, for tools that fill one.
 */
import { addVersionsFlow } from '../add-versions.js';
import type { AddedRegistry, AddedVersion, AddVersionsResult, MirrorQueries } from '../contract.js';
import { mirrorQueriesOf } from '../mirror-queries.js';
import type { SqlRunner } from '../sql.js';
import { sqliteSearchRows } from './index-writes.js';
import type { Store } from './open.js';
import { runFlow, sqliteDialect } from './runner.js';

/**
 * Adds `versions` to the registry named `registry.name` (created if absent) in one transaction.
 * `content` supplies bytes for content the store does not hold yet. Throws `VERSION_CONFLICT`
 * (nothing written) when any version exists with another digest.
 */
export function addVersions(
  store: Store,
  registry: AddedRegistry,
  versions: readonly AddedVersion[],
  content: (sha256: string) => Buffer | undefined,
  options: { now?: number } = {},
): AddVersionsResult {
  const db = store.sqlite;
  const now = options.now ?? Date.now();
  const { generations: _, ...total } = db
    .transaction(() =>
      runFlow(db, addVersionsFlow(sqliteDialect, sqliteSearchRows, [{ registry, versions }], content, now)),
    )
    .immediate();
  return total;
}

/** The mirror queries of the SQLite store (contract.ts `mirror`). */
export function sqliteMirrorQueries(runner: SqlRunner): MirrorQueries {
  return mirrorQueriesOf(runner, { search: sqliteSearchRows, announce: () => [] });
}

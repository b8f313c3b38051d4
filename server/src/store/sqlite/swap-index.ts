// SQLite only: the swap's mechanics, one synchronous better-sqlite3 transaction with statements prepared once (WAL readers keep the old index).
/**
 * Swapping a registry's index in one transaction (docs/server.md "Indexing"): readers (WAL) see the old
 * index or the new one, never a mix; a failure or a killed process before COMMIT leaves the old
 * one. Content is stored once by sha256; content no index references any more is removed in the
 * same transaction, and the sync's outcome is written last in it. The server runs this in a worker
 * thread on its own connection (sqlite/swap-index-thread.ts), so requests keep being answered meanwhile.
 *
 * What every swap does (the first-seen step, the old rows' removal, findings, the registry row,
 * pruning, the outcome) is ../swap.ts's, run here synchronously (runFlow). This file writes the new
 * template, version and content rows, with statements prepared once per swap on better-sqlite3
 * directly rather than built per row: a 10,000-version registry is ~50,000 rows, and drizzle's
 * per-call query building and re-preparing tripled the swap time. The tables are drizzle's (schema.ts).
 */
import type { BuiltIndex } from '../../indexer/build-index.js';
import type { SwapMeta, SwapResult } from '../contract.js';
import { swapEndFlow, swapStartFlow } from '../swap.js';
import { prepareIndexWrites } from './index-writes.js';
import type { Store } from './open.js';
import { runFlow, sqliteDialect } from './runner.js';

export function swapIndex(store: Store, built: BuiltIndex, meta: SwapMeta): SwapResult {
  const db = store.sqlite;
  const { insertFile, insertTemplate, insertFts, insertVersion, insertVersionFile } = prepareIndexWrites(db);
  const { midSwap, ...shared } = meta;

  const swap = db.transaction((): SwapResult => {
    // The first-seen step and the old index's removal: ../swap.ts, as on PostgreSQL.
    const firstSeen = runFlow(db, swapStartFlow(sqliteDialect, built, shared));
    const stored = new Set<string>();
    const addFile = (f: { sha256: string; gitSha: string; size: number; content?: Buffer }) => {
      if (f.content && !stored.has(f.sha256)) {
        stored.add(f.sha256);
        insertFile.run(f.sha256, f.gitSha, f.size, f.content);
      }
    };
    for (const t of built.templates) for (const v of t.versions) for (const f of v.files) addFile(f);
    if (built.registryYaml) addFile(built.registryYaml);

    let versionCount = 0;
    const half = Math.floor(built.templates.length / 2);
    for (const [i, t] of built.templates.entries()) {
      if (i === half) midSwap?.();
      const templateId = Number(
        insertTemplate.run(meta.registryId, t.collection, t.name, t.latestVersion, t.title, t.description)
          .lastInsertRowid,
      );
      insertFts.run(
        templateId,
        t.name,
        t.collection,
        t.title ?? '',
        t.description ?? '',
        t.properties.join(' '),
        meta.registryId,
      );
      for (const v of t.versions) {
        const versionId = Number(
          insertVersion.run(
            templateId,
            meta.registryId,
            v.version,
            v.kind,
            v.dir,
            v.templateFile,
            v.schemaFile,
            v.hasExample ? 1 : 0,
            v.digest,
            v.schema === null || v.schema === undefined ? null : JSON.stringify(v.schema),
            v.treeSha ?? null,
          ).lastInsertRowid,
        );
        versionCount++;
        for (const f of v.files) insertVersionFile.run(versionId, f.path, f.sha256, f.size);
      }
    }
    // Findings, the registry row, pruning and the sync's outcome: ../swap.ts.
    return runFlow(db, swapEndFlow(sqliteDialect, built, shared, versionCount, firstSeen));
  });
  // IMMEDIATE: the write lock is taken (waiting the busy timeout) before the first read, so a write
  // on another connection in between cannot void the transaction's snapshot.
  return swap.immediate();
}

// SQLite only: the swap's mechanics, one synchronous better-sqlite3 transaction with statements prepared once (WAL readers keep the old index).
/**
 * Swapping a registry's index in one transaction (docs/server.md "Indexing"): readers (WAL) see the old
 * index or the new one, never a mix; a failure or a killed process before COMMIT leaves the old
 * one. Content is stored once by sha256; content no index references any more is removed in the
 * same transaction, and the sync's outcome is written last in it. The server runs this in a worker
 * thread on its own connection (sqlite/swap-index-thread.ts), so requests keep being answered meanwhile.
 *
 * The statements are prepared once per swap on better-sqlite3 directly rather than built by
 * drizzle per row: a 10,000-version registry is ~50,000 rows, and drizzle's per-call query
 * building and re-preparing tripled the swap time. The tables are drizzle's (schema.ts).
 */
import type { Finding } from '../../../../client/src/registry/index.js';
import type { BuiltIndex } from '../../indexer/build-index.js';
import type { SwapMeta, SwapResult } from '../contract.js';
import { PRUNE_FILES_SQL, syncOutcomeSteps } from '../crud.js';
import { firstSeenFlow } from '../first-seen.js';
import { prepareIndexWrites } from './index-writes.js';
import type { Store } from './open.js';
import { runFlow, runSteps, sqliteDialect } from './runner.js';

export function swapIndex(store: Store, built: BuiltIndex, meta: SwapMeta): SwapResult {
  const db = store.sqlite;
  const { insertFile, insertTemplate, insertFts, insertVersion, insertVersionFile } = prepareIndexWrites(db);
  const insertFinding = db.prepare(
    'INSERT INTO findings (registry_id, code, severity, path, message) VALUES (?, ?, ?, ?, ?)',
  );

  const swap = db.transaction((): SwapResult => {
    // The first-seen record first, while the served rows are still there (docs/integrity-store.md §2).
    const registry = db.prepare('SELECT name FROM registries WHERE id = ?').pluck().get(meta.registryId) as
      | string
      | undefined;
    const firstSeen = runFlow(
      db,
      firstSeenFlow(
        sqliteDialect,
        built,
        { registryId: meta.registryId, registry: registry ?? '', syncId: meta.syncId ?? null, now: meta.now },
        meta.signer,
      ),
    );
    const stored = new Set<string>();
    const addFile = (f: { sha256: string; gitSha: string; size: number; content?: Buffer }) => {
      if (f.content && !stored.has(f.sha256)) {
        stored.add(f.sha256);
        insertFile.run(f.sha256, f.gitSha, f.size, f.content);
      }
    };
    for (const t of built.templates) for (const v of t.versions) for (const f of v.files) addFile(f);
    if (built.registryYaml) addFile(built.registryYaml);

    db.prepare('DELETE FROM templates WHERE registry_id = ?').run(meta.registryId);
    db.prepare('DELETE FROM findings WHERE registry_id = ?').run(meta.registryId);

    let versionCount = 0;
    const half = Math.floor(built.templates.length / 2);
    for (const [i, t] of built.templates.entries()) {
      if (i === half) meta.midSwap?.();
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
    for (const f of built.findings as Finding[]) {
      insertFinding.run(meta.registryId, f.code, f.severity, f.path, f.message);
    }

    const row = db
      .prepare(
        `UPDATE registries SET "commit" = ?, etag = ?, generation = generation + 1, registry_yaml_sha256 = ?,
           template_count = ?, version_count = ?, finding_count = ?
         WHERE id = ? RETURNING generation`,
      )
      .get(
        meta.commit,
        meta.etag,
        built.registryYaml?.sha256 ?? null,
        built.templates.length,
        versionCount,
        built.findings.length,
        meta.registryId,
      ) as { generation: number } | undefined;

    // Content nothing references any more.
    db.prepare(PRUNE_FILES_SQL).run();

    const result: SwapResult = {
      templateCount: built.templates.length,
      versionCount,
      findingCount: built.findings.length,
      generation: row?.generation ?? 0,
      recorded: firstSeen.records.length,
      quarantined: firstSeen.quarantined,
    };
    if (meta.record) runSteps(db, syncOutcomeSteps(meta.record));
    return result;
  });
  // IMMEDIATE: the write lock is taken (waiting the busy timeout) before the first read, so a write
  // on another connection in between cannot void the transaction's snapshot.
  return swap.immediate();
}

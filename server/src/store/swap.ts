/**
 * What every index swap does, written once for both dialects (docs/server.md "Indexing"): inside
 * the swap's one transaction, the first-seen step first (while the served rows are still there,
 * docs/integrity-store.md §2), the old index's rows removed, and after the dialect has written the
 * new rows: the findings, the registry's counts and generation, the content nothing references
 * any more, and the sync's outcome last. sqlite/swap-index.ts and postgres/swap-index.ts write the
 * template, version and content rows between the two, each its own way (their first lines say why).
 */
import type { BuiltIndex } from '../indexer/build-index.js';
import type { SwapMeta, SwapResult } from './contract.js';
import { PRUNE_FILES_SQL, syncOutcomeSteps } from './crud.js';
import { type FirstSeenPlan, firstSeenFlow } from './first-seen.js';
import { type Flow, insertRowsFlow, rowsOf, type SqlDialect } from './sql.js';

type Meta = Omit<SwapMeta, 'midSwap'>;

/** The first-seen step, then the old index's templates (their versions and files cascade) and findings. */
export function* swapStartFlow(d: SqlDialect, built: BuiltIndex, meta: Meta): Flow<FirstSeenPlan> {
  const [registry] = yield* rowsOf<{ name: string }>('SELECT name FROM registries WHERE id = $1', [
    meta.registryId,
  ]);
  const firstSeen = yield* firstSeenFlow(
    d,
    built,
    {
      registryId: meta.registryId,
      registry: registry?.name ?? '',
      syncId: meta.syncId ?? null,
      now: meta.now,
    },
    meta.signer,
  );
  yield ['DELETE FROM templates WHERE registry_id = $1', [meta.registryId]];
  yield ['DELETE FROM findings WHERE registry_id = $1', [meta.registryId]];
  return firstSeen;
}

/**
 * After the new rows (`versionCount` versions): the findings, the registry row, the pruning and
 * the sync's outcome. Answers the swap's result.
 */
export function* swapEndFlow(
  d: SqlDialect,
  built: BuiltIndex,
  meta: Meta,
  versionCount: number,
  firstSeen: FirstSeenPlan,
): Flow<SwapResult> {
  yield* insertRowsFlow(
    d,
    'findings',
    [
      ['registry_id', 'int'],
      ['code', 'text'],
      ['severity', 'text'],
      ['path', 'text'],
      ['message', 'text'],
    ],
    built.findings.map((f) => [meta.registryId, f.code, f.severity, f.path, f.message]),
  );
  const [row] = yield* rowsOf<{ generation: number | string }>(
    `UPDATE registries SET "commit" = $1, etag = $2, generation = generation + 1, registry_yaml_sha256 = $3,
       template_count = $4, version_count = $5, finding_count = $6
     WHERE id = $7 RETURNING generation`,
    [
      meta.commit,
      meta.etag,
      built.registryYaml?.sha256 ?? null,
      built.templates.length,
      versionCount,
      built.findings.length,
      meta.registryId,
    ],
  );
  // Content nothing references any more.
  yield [PRUNE_FILES_SQL, []];
  if (meta.record) for (const step of syncOutcomeSteps(meta.record)) yield step;
  return {
    templateCount: built.templates.length,
    versionCount,
    findingCount: built.findings.length,
    generation: Number(row?.generation ?? 0),
    recorded: firstSeen.records.length,
    quarantined: firstSeen.quarantined,
  };
}

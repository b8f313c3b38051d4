/**
 * The contract's `mirror` queries (docs/mirroring.md), written once for both dialects over their
 * runners (sql.ts): adding versions (add-versions.ts's flow), the removed-upstream marks, the
 * mirror's quarantines and what a bundle export reads. A dialect gives only what is its own: how
 * its search keeps its rows (`search`) and what a transaction that changed generations announces
 * (`announce`: pg_notify on PostgreSQL, nothing on SQLite, whose replicas are the one process).
 */
import {
  type AddedGeneration,
  addVersionsFlow,
  type SearchRowSteps,
  storedContent,
  versionKey,
} from './add-versions.js';
import type { AddVersionsResult, ExportedTemplate, MirrorQueries, VersionKey } from './contract.js';
import { CLOSE_REVERTED_SQL, canonicalTemplate, openQuarantineFlow, REVERTED_REASON } from './first-seen.js';
import { batchesOf, type Flow, listParam, rowsOf, type SqlRunner, type Step } from './sql.js';

export interface MirrorDialect {
  search: SearchRowSteps;
  /** Statements run last in the transaction that bumped these generations. */
  announce(generations: readonly AddedGeneration[]): Step[];
}

const VERSION_OF_SQL = `SELECT v.digest, v.dir, v.has_example AS "hasExample", v.schema_json AS "schemaJson" FROM versions v
  JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
  WHERE r.name = $1 AND t.collection = $2 AND t.name = $3 AND v.version = $4`;
const keyParams = (key: VersionKey) => [key.registry, key.collection, key.template, key.version];

/** Marks stored versions missing from `listed` as removed upstream, unmarks listed ones. */
function* flagRemovedFlow(
  sql: SqlRunner,
  registryId: number,
  listed: ReadonlySet<string>,
  now: number,
): Flow<{ removed: number; changed: boolean }> {
  const found = yield* rowsOf<{
    id: number;
    collection: string;
    template: string;
    version: string;
    removedAt: number | string | null;
  }>(
    `SELECT v.id, t.collection, t.name AS template, v.version, v.removed_upstream_at AS "removedAt"
     FROM versions v JOIN templates t ON t.id = v.template_id WHERE t.registry_id = $1${sql.forUpdate('v')}`,
    [registryId],
  );
  const mark: number[] = [];
  const unmark: number[] = [];
  let removed = 0;
  for (const row of found) {
    const gone = !listed.has(versionKey(row));
    if (gone) removed++;
    if (gone === (row.removedAt !== null)) continue;
    (gone ? mark : unmark).push(row.id);
  }
  const ids = sql.list('$2', 'm', [['id', 'int']]);
  for (const [at, list] of [
    [now, mark],
    [null, unmark],
  ] as const) {
    for (const batch of batchesOf(list)) {
      yield [
        `UPDATE versions SET removed_upstream_at = $1 WHERE id IN (SELECT m.id FROM ${ids})`,
        [at, listParam(batch.map((id) => [id]))],
      ];
    }
  }
  return { removed, changed: mark.length + unmark.length > 0 };
}

export function mirrorQueriesOf(sql: SqlRunner, dialect: MirrorDialect): MirrorQueries {
  return {
    async ownRegistries() {
      const rows = await sql.all<{ name: string }>(
        "SELECT name FROM registries WHERE source_type NOT IN ('upstream', 'bundle')",
      );
      return rows.map((r) => r.name);
    },
    async storedDigest(key) {
      const [row] = await sql.all<{ digest: string }>(VERSION_OF_SQL, keyParams(key));
      return row?.digest;
    },
    async missingContent(wanted) {
      if (wanted.length === 0) return [];
      const found = await sql.read(storedContent(sql, wanted));
      return wanted.filter((sha) => !found.has(sha));
    },
    addVersions(groups, content, options = {}) {
      const now = options.now ?? Date.now();
      return sql.transaction(
        (function* (): Flow<AddVersionsResult> {
          const { generations, ...total } = yield* addVersionsFlow(sql, dialect.search, groups, content, now);
          // Delivered at COMMIT only: no replica hears of a generation it cannot read yet.
          for (const step of dialect.announce(generations)) yield step;
          return total;
        })(),
      );
    },
    flagRemovedUpstream(registryId, listed, now) {
      return sql.transaction(flagRemovedFlow(sql, registryId, listed, now));
    },
    async markRemovedUpstream(key, now) {
      const [result] = await sql.write([
        [
          `UPDATE versions SET removed_upstream_at = $1 WHERE removed_upstream_at IS NULL AND id IN (
             SELECT v.id FROM versions v JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
             WHERE r.name = $2 AND t.collection = $3 AND t.name = $4 AND v.version = $5)`,
          [now, ...keyParams(key)],
        ],
      ]);
      return result!.changes > 0;
    },
    async openQuarantine(q) {
      const [reg] = await sql.all<{ id: number }>('SELECT id FROM registries WHERE name = $1', [q.registry]);
      if (!reg) return undefined;
      return sql.transaction(
        (function* () {
          // One open quarantine per version across replicas.
          if (sql.keyLock) yield [sql.keyLock, [`dm-add-versions:${q.registry}`]] as Step;
          return yield* openQuarantineFlow({ ...q, registryId: reg.id });
        })(),
      );
    },
    async closeReverted(id, versions, now) {
      // One transaction, as every write of the store.
      if (versions.length === 0) return 0;
      const results = await sql.write(
        versions.map((v) => [
          CLOSE_REVERTED_SQL,
          [now, REVERTED_REASON, id, v.template, v.version, v.digest],
        ]),
      );
      return results.reduce((n, r) => n + r.changes, 0);
    },
    async makePrivate(id) {
      await sql.write([["UPDATE registries SET visibility = 'private' WHERE id = $1", [id]]]);
    },
    async counts(id) {
      const [row] = await sql.all<{ templateCount: number | string; versionCount: number | string }>(
        'SELECT template_count AS "templateCount", version_count AS "versionCount" FROM registries WHERE id = $1',
        [id],
      );
      return row && { templateCount: Number(row.templateCount), versionCount: Number(row.versionCount) };
    },
    async versionsOf(registry) {
      return sql.all<VersionKey>(
        `SELECT r.name AS registry, t.collection, t.name AS template, v.version FROM versions v
         JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
         WHERE lower(r.name) = lower($1)`,
        [registry],
      );
    },
    async bundleVersion(key, digest) {
      const [row] = await sql.all<{ dir: string; hasExample: boolean | number; schemaJson: string | null }>(
        VERSION_OF_SQL,
        keyParams(key),
      );
      if (!row) return undefined;
      const [seen] = await sql.all<{ seenAt: number | string | null }>(
        'SELECT min(seen_at) AS "seenAt" FROM first_seen WHERE template = $1 AND version = $2 AND digest = $3',
        [canonicalTemplate(key.registry, key.collection, key.template), key.version, digest],
      );
      return {
        dir: row.dir,
        hasExample: Boolean(row.hasExample),
        schemaJson: row.schemaJson,
        firstSeen: seen?.seenAt == null ? null : Number(seen.seenAt),
      };
    },
    async templates() {
      return sql.all<ExportedTemplate>(
        `SELECT r.name AS registry, t.collection, t.name, t.latest_version AS "latestVersion", t.title, t.description
         FROM templates t JOIN registries r ON r.id = t.registry_id
         ORDER BY ${['r.name', 't.collection', 't.name'].map((c) => sql.byteOrder(c)).join(', ')}`,
      );
    },
  };
}

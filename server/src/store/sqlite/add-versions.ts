// SQLite only: one better-sqlite3 transaction that runs synchronously, row by row with prepared statements (no round trips); the rules are ../add-versions.ts.
/**
 * Adding versions to a registry without re-indexing it (docs/mirroring.md): what a mirror pulls
 * through and what a bundle import brings. One transaction: the registry row (created when the
 * server has not seen the registry), template rows with their search rows, versions, content
 * (stored once by sha256) and counts; readers see all of it or none of it. A version that exists
 * with another digest is never overwritten: the whole call is refused with the conflicts named.
 */
import { gitBlobSha } from '../../../../client/src/source/index.js';
import { contentMissing, schemaInfoOf, sortAdded, takesLatest, versionKey } from '../add-versions.js';
import type {
  AddedRegistry,
  AddedVersion,
  AddVersionsResult,
  ExportedTemplate,
  MirrorQueries,
  VersionKey,
} from '../contract.js';
import {
  addedFirstSeenFlow,
  CLOSE_REVERTED_SQL,
  canonicalTemplate,
  openQuarantineFlow,
  REVERTED_REASON,
} from '../first-seen.js';
import { sqlite } from '../sql.js';
import { prepareIndexWrites } from './index-writes.js';
import type { Store } from './open.js';
import { runFlow, sqliteDialect } from './runner.js';

/** The stored digest of one exact version, or undefined. */
export function storedVersionDigest(
  store: Store,
  key: { registry: string; collection: string; template: string; version: string },
): string | undefined {
  const row = store.sqlite
    .prepare(
      `SELECT v.digest FROM versions v JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
       WHERE r.name = ? AND t.collection = ? AND t.name = ? AND v.version = ?`,
    )
    .get(key.registry, key.collection, key.template, key.version) as { digest: string } | undefined;
  return row?.digest;
}

/** The content hashes (of `wanted`) the store does not hold. */
export function missingContent(store: Store, wanted: readonly string[]): string[] {
  const has = store.sqlite.prepare('SELECT 1 FROM files WHERE sha256 = ?').pluck();
  return wanted.filter((sha) => has.get(sha) === undefined);
}

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
  const run = db.transaction((): AddVersionsResult => {
    let reg = db
      .prepare('SELECT id, source_type AS sourceType FROM registries WHERE name = ?')
      .get(registry.name) as { id: number; sourceType: string } | undefined;
    if (!reg) {
      const id = Number(
        db
          .prepare(
            `INSERT INTO registries (name, source_type, source, path, visibility, "commit", last_sync_status, created_at)
             VALUES (?, ?, ?, '', ?, ?, 'succeeded', ?)`,
          )
          .run(registry.name, registry.sourceType, registry.source, registry.visibility, registry.commit, now)
          .lastInsertRowid,
      );
      reg = { id, sourceType: registry.sourceType };
    }
    const registryId = reg.id;
    const findTemplate = db.prepare(
      'SELECT id, latest_version AS latestVersion FROM templates WHERE registry_id = ? AND collection = ? AND name = ?',
    );
    const findVersion = db.prepare('SELECT digest FROM versions WHERE template_id = ? AND version = ?');
    const { todo, unchanged } = sortAdded(registry.name, versions, (v) => {
      const t = findTemplate.get(registryId, v.collection, v.template) as { id: number } | undefined;
      return t ? (findVersion.get(t.id, v.version) as { digest: string } | undefined)?.digest : undefined;
    });
    // The mirror's own first-seen record (docs/integrity-store.md §6): a version whose digest
    // differs from the one first seen here is quarantined, not added.
    const plan = runFlow(
      db,
      addedFirstSeenFlow(sqliteDialect, { registryId, registry: registry.name, syncId: null, now }, todo),
    );
    todo.splice(0, todo.length, ...plan.kept);
    const { insertFile, insertTemplate, insertFts, insertVersion, insertVersionFile } =
      prepareIndexWrites(db);
    const hasFile = db.prepare('SELECT 1 FROM files WHERE sha256 = ?').pluck();
    const updateTemplate = db.prepare(
      'UPDATE templates SET latest_version = ?, title = ?, description = ? WHERE id = ?',
    );
    const deleteFts = db.prepare('DELETE FROM templates_fts WHERE rowid = ?');
    const dropVersion = db.prepare('DELETE FROM versions WHERE template_id = ? AND version = ?');
    // A template's search row is written once, from the last version that became its latest
    // (a 10,000-version import rewrote it for every version before).
    const searchRows = new Map<
      number,
      { v: (typeof todo)[number]; info: ReturnType<typeof schemaInfoOf>; fresh: boolean }
    >();
    for (const v of todo) {
      for (const f of v.files) {
        if (hasFile.get(f.sha256) !== undefined) continue;
        const bytes = content(f.sha256);
        if (!bytes) throw contentMissing(v, f);
        insertFile.run(f.sha256, gitBlobSha(bytes), f.size, bytes);
      }
      const info = schemaInfoOf(v.schemaJson);
      let t = findTemplate.get(registryId, v.collection, v.template) as
        | { id: number; latestVersion: string | null }
        | undefined;
      if (!t) {
        const id = Number(
          insertTemplate.run(registryId, v.collection, v.template, v.version, info.title, info.description)
            .lastInsertRowid,
        );
        searchRows.set(id, { v, info, fresh: true });
        t = { id, latestVersion: v.version };
      } else if (takesLatest(v, t.latestVersion)) {
        updateTemplate.run(v.version, info.title, info.description, t.id);
        searchRows.set(t.id, { v, info, fresh: searchRows.get(t.id)?.fresh ?? false });
      }
      // Accepted upstream: the superseded rows go (their files cascade), the new ones come in.
      if (v.supersedes !== undefined) dropVersion.run(t.id, v.version);
      const versionId = Number(
        insertVersion.run(
          t.id,
          registryId,
          v.version,
          v.kind,
          v.dir,
          v.templateFile,
          v.schemaFile,
          v.hasExample ? 1 : 0,
          v.digest,
          v.schemaJson,
          null,
        ).lastInsertRowid,
      );
      for (const f of v.files) insertVersionFile.run(versionId, f.path, f.sha256, f.size);
    }
    for (const [id, { v, info, fresh }] of searchRows) {
      if (!fresh) deleteFts.run(id);
      insertFts.run(
        id,
        v.template,
        v.collection,
        info.title ?? '',
        info.description ?? '',
        info.properties.join(' '),
        registryId,
      );
    }
    if (todo.length > 0) {
      db.prepare(
        `UPDATE registries SET generation = generation + 1, last_sync_at = ?,
           "commit" = coalesce(?, "commit"),
           template_count = (SELECT count(*) FROM templates WHERE registry_id = ?),
           version_count = (SELECT count(*) FROM versions WHERE registry_id = ?)
         WHERE id = ?`,
      ).run(now, registry.commit, registryId, registryId, registryId);
    }
    return { registryId, added: todo.length, unchanged, quarantined: plan.quarantined };
  });
  return run();
}

/**
 * Records which of a mirrored registry's versions its upstream still lists (docs/mirroring.md):
 * a stored version missing from `listed` gets `removed_upstream_at = now` (kept if already set),
 * a listed one loses the mark. One transaction; returns how many versions are marked afterwards
 * and whether any mark changed.
 */
export function flagRemovedUpstream(
  store: Store,
  registryId: number,
  listed: ReadonlySet<string>,
  now: number,
): { removed: number; changed: boolean } {
  const db = store.sqlite;
  return db.transaction(() => {
    const rows = db
      .prepare(
        `SELECT v.id, t.collection, t.name AS template, v.version, v.removed_upstream_at AS removedAt
         FROM versions v JOIN templates t ON t.id = v.template_id WHERE t.registry_id = ?`,
      )
      .all(registryId) as {
      id: number;
      collection: string;
      template: string;
      version: string;
      removedAt: number | null;
    }[];
    const set = db.prepare('UPDATE versions SET removed_upstream_at = ? WHERE id = ?');
    let removed = 0;
    let changed = false;
    for (const row of rows) {
      const gone = !listed.has(versionKey(row));
      if (gone) removed++;
      if (gone === (row.removedAt !== null)) continue;
      set.run(gone ? now : null, row.id);
      changed = true;
    }
    return { removed, changed };
  })();
}

/** Marks one stored version as no longer served by its upstream; whether the mark is new. */
export function markRemovedUpstream(
  store: Store,
  key: { registry: string; collection: string; template: string; version: string },
  now: number,
): boolean {
  const result = store.sqlite
    .prepare(
      `UPDATE versions SET removed_upstream_at = ? WHERE removed_upstream_at IS NULL AND id IN (
         SELECT v.id FROM versions v JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
         WHERE r.name = ? AND t.collection = ? AND t.name = ? AND v.version = ?)`,
    )
    .run(now, key.registry, key.collection, key.template, key.version);
  return result.changes > 0;
}

/** The first-seen time of a version with this digest (epoch ms), or null. */
const FIRST_SEEN_AT_SQL = `SELECT min(seen_at) AS seenAt FROM first_seen WHERE template = ? AND version = ? AND digest = ?`;

/** The mirror queries of the SQLite store (contract.ts `mirror`). */
export function sqliteMirrorQueries(store: Store): MirrorQueries {
  const db = store.sqlite;
  const own = db
    .prepare("SELECT name FROM registries WHERE source_type NOT IN ('upstream', 'bundle')")
    .pluck();
  const registryId = db.prepare('SELECT id FROM registries WHERE name = ?').pluck();
  const bundleRow = db.prepare(
    `SELECT v.dir, v.has_example AS hasExample, v.schema_json AS schemaJson FROM versions v
     JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
     WHERE r.name = ? AND t.collection = ? AND t.name = ? AND v.version = ?`,
  );
  const seenAt = db.prepare(FIRST_SEEN_AT_SQL).pluck();
  return {
    async ownRegistries() {
      return own.all() as string[];
    },
    async storedDigest(key) {
      return storedVersionDigest(store, key);
    },
    async missingContent(wanted) {
      return missingContent(store, wanted);
    },
    async addVersions(groups, content, options = {}) {
      const total: AddVersionsResult = { registryId: 0, added: 0, unchanged: 0, quarantined: [] };
      db.transaction(() => {
        for (const g of groups) {
          const r = addVersions(store, g.registry, g.versions, content, options);
          total.registryId = r.registryId;
          total.added += r.added;
          total.unchanged += r.unchanged;
          total.quarantined.push(...r.quarantined);
        }
      })();
      return total;
    },
    async flagRemovedUpstream(id, listed, now) {
      return flagRemovedUpstream(store, id, listed, now);
    },
    async markRemovedUpstream(key, now) {
      return markRemovedUpstream(store, key, now);
    },
    async openQuarantine(q) {
      const id = registryId.get(q.registry) as number | undefined;
      if (id === undefined) return undefined;
      return db.transaction(() => runFlow(db, openQuarantineFlow({ ...q, registryId: id })))();
    },
    async closeReverted(id, versions, now) {
      const close = db.prepare(sqlite(CLOSE_REVERTED_SQL));
      return db.transaction(() =>
        versions.reduce(
          (n, v) => n + close.run(now, REVERTED_REASON, id, v.template, v.version, v.digest).changes,
          0,
        ),
      )();
    },
    async makePrivate(id) {
      db.prepare("UPDATE registries SET visibility = 'private' WHERE id = ?").run(id);
    },
    async counts(id) {
      return db
        .prepare(
          'SELECT template_count AS templateCount, version_count AS versionCount FROM registries WHERE id = ?',
        )
        .get(id) as { templateCount: number; versionCount: number } | undefined;
    },
    async versionsOf(registry) {
      return db
        .prepare(
          `SELECT r.name AS registry, t.collection, t.name AS template, v.version FROM versions v
           JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
           WHERE lower(r.name) = lower(?)`,
        )
        .all(registry) as VersionKey[];
    },
    async bundleVersion(key, digest) {
      const row = bundleRow.get(key.registry, key.collection, key.template, key.version) as
        | { dir: string; hasExample: number; schemaJson: string | null }
        | undefined;
      if (!row) return undefined;
      const template = canonicalTemplate(key.registry, key.collection, key.template);
      const at = seenAt.get(template, key.version, digest) as number | null | undefined;
      return { ...row, hasExample: row.hasExample === 1, firstSeen: at ?? null };
    },
    async templates() {
      return db
        .prepare(
          `SELECT r.name AS registry, t.collection, t.name, t.latest_version AS latestVersion, t.title, t.description
           FROM templates t JOIN registries r ON r.id = t.registry_id ORDER BY r.name, t.collection, t.name`,
        )
        .all() as ExportedTemplate[];
    },
  };
}

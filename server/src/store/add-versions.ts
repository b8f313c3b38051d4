/**
 * Adding versions to a registry without re-indexing it (docs/mirroring.md): what a mirror pulls
 * through and what a bundle import brings. One transaction: the registry row (created when the
 * server has not seen the registry), template rows with their search rows, versions, content
 * (stored once by sha256) and counts; readers see all of it or none of it. A version that exists
 * with another digest is never overwritten: the whole call is refused with the conflicts named.
 */
import { DmError } from '../../../client/src/error.js';
import { compareVersions, tryParseVersion } from '../../../client/src/reference/version.js';
import { gitBlobSha } from '../../../client/src/source/source.js';
import { schemaInfo } from '../indexer/build-index.js';
import type { Store } from './db.js';
import { firstSeenOfAdded } from './first-seen.js';
import { prepareIndexWrites } from './index-writes.js';

export interface AddedFile {
  path: string;
  sha256: string;
  size: number;
}

export interface AddedVersion {
  collection: string;
  template: string;
  version: string;
  kind: string;
  dir: string;
  templateFile: string;
  schemaFile: string | null;
  hasExample: boolean;
  digest: string;
  schemaJson: string | null;
  files: AddedFile[];
}

export interface AddedRegistry {
  name: string;
  /** 'upstream' (pulled through a mirror) or 'bundle' (imported). */
  sourceType: 'upstream' | 'bundle';
  source: string;
  visibility: 'public' | 'private';
  commit: string | null;
}

export interface AddVersionsResult {
  registryId: number;
  added: number;
  /** Versions already stored with the same digest. */
  unchanged: number;
}

export interface VersionConflict {
  reference: string;
  stored: string;
  incoming: string;
}

function newer(a: string, b: string | null): boolean {
  if (b === null) return true;
  const va = tryParseVersion(a);
  const vb = tryParseVersion(b);
  if (!va || !vb) return a > b;
  return compareVersions(va, vb) > 0;
}

function schemaInfoOf(schemaJson: string | null): ReturnType<typeof schemaInfo> {
  if (!schemaJson) return schemaInfo(null);
  try {
    return schemaInfo(JSON.parse(schemaJson));
  } catch {
    return schemaInfo(null);
  }
}

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
    const conflicts: VersionConflict[] = [];
    let unchanged = 0;
    const todo: AddedVersion[] = [];
    for (const v of versions) {
      const t = findTemplate.get(registryId, v.collection, v.template) as { id: number } | undefined;
      const existing = t ? (findVersion.get(t.id, v.version) as { digest: string } | undefined) : undefined;
      if (existing && existing.digest !== v.digest) {
        const name = [registry.name, v.collection, v.template].filter(Boolean).join('/');
        conflicts.push({ reference: `${name}:=${v.version}`, stored: existing.digest, incoming: v.digest });
      } else if (existing) unchanged++;
      else todo.push(v);
    }
    if (conflicts.length > 0) {
      const first = conflicts[0]!;
      throw new DmError(
        'VERSION_CONFLICT',
        `${first.reference} is stored with digest ${first.stored} and would become ${first.incoming}; published versions never change, so nothing was written${conflicts.length > 1 ? ` (${conflicts.length} versions conflict)` : ''}`,
        { category: 'conflict', details: { conflicts } },
      );
    }
    // The mirror's own first-seen record (docs/integrity-store.md §6): a version whose digest
    // differs from the one first seen here is quarantined, not added.
    const accepted = firstSeenOfAdded(db, { registryId, registry: registry.name, syncId: null, now }, todo);
    todo.splice(0, todo.length, ...accepted);
    const { insertFile, insertTemplate, insertFts, insertVersion, insertVersionFile } =
      prepareIndexWrites(db);
    const hasFile = db.prepare('SELECT 1 FROM files WHERE sha256 = ?').pluck();
    const updateTemplate = db.prepare(
      'UPDATE templates SET latest_version = ?, title = ?, description = ? WHERE id = ?',
    );
    const deleteFts = db.prepare('DELETE FROM templates_fts WHERE rowid = ?');
    for (const v of todo) {
      for (const f of v.files) {
        if (hasFile.get(f.sha256) !== undefined) continue;
        const bytes = content(f.sha256);
        if (!bytes) {
          throw new DmError(
            'CONTENT_MISSING',
            `the content of ${v.template}:${v.version} file ${f.path} (${f.sha256}) is not available`,
            {
              category: 'invalid-input',
            },
          );
        }
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
        insertFts.run(
          id,
          v.template,
          v.collection,
          info.title ?? '',
          info.description ?? '',
          info.properties.join(' '),
          registryId,
        );
        t = { id, latestVersion: v.version };
      } else if (newer(v.version, t.latestVersion)) {
        updateTemplate.run(v.version, info.title, info.description, t.id);
        deleteFts.run(t.id);
        insertFts.run(
          t.id,
          v.template,
          v.collection,
          info.title ?? '',
          info.description ?? '',
          info.properties.join(' '),
          registryId,
        );
      }
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
    if (todo.length > 0) {
      db.prepare(
        `UPDATE registries SET generation = generation + 1, last_sync_at = ?,
           "commit" = coalesce(?, "commit"),
           template_count = (SELECT count(*) FROM templates WHERE registry_id = ?),
           version_count = (SELECT count(*) FROM versions WHERE registry_id = ?)
         WHERE id = ?`,
      ).run(now, registry.commit, registryId, registryId, registryId);
    }
    return { registryId, added: todo.length, unchanged };
  });
  return run();
}

/** The key of a version within its registry, as `flagRemovedUpstream` takes it. */
export function versionKey(v: { collection: string; template: string; version: string }): string {
  return `${v.collection}\0${v.template}\0${v.version}`;
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

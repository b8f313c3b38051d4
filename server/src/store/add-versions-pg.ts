/**
 * Adding versions without a swap on PostgreSQL (add-versions.ts's twin; docs/mirroring.md): the
 * same rows and the same decisions (conflicts refused whole, the first-seen record, content stored
 * once), in one transaction over the `pg` pool. Adds to one registry are serialised across
 * replicas by a transaction-scoped advisory lock on its name (never a session-level one), and the
 * registry's new generation is announced with `pg_notify` like an index swap, so every replica
 * drops its cached answers for it.
 */
import { gitBlobSha } from '../../../client/src/source/source.js';
import {
  type AddVersionsResult,
  contentMissing,
  type ExportedTemplate,
  schemaInfoOf,
  sortAdded,
  takesLatest,
  type VersionKey,
  versionKey,
} from './add-versions.js';
import {
  CLOSE_REVERTED_SQL,
  canonicalTemplate,
  firstSeenOfAddedPg,
  openQuarantinePg,
  REVERTED_REASON,
} from './first-seen.js';
import { type PostgresStore, pgTransaction } from './postgres.js';
import type { MirrorQueries } from './service-store.js';
import { INDEX_CHANNEL } from './swap-index-pg.js';

const VERSION_SQL = `SELECT v.id, v.digest FROM versions v JOIN templates t ON t.id = v.template_id
  JOIN registries r ON r.id = t.registry_id
  WHERE r.name = $1 AND t.collection = $2 AND t.name = $3 AND v.version = $4`;

export function postgresMirrorQueries(store: PostgresStore): MirrorQueries {
  const { pool } = store;
  const rows = async <T>(text: string, values: unknown[] = []): Promise<T[]> =>
    (await pool.query({ text, values })).rows as T[];
  return {
    async ownRegistries() {
      return (
        await rows<{ name: string }>(
          "SELECT name FROM registries WHERE source_type NOT IN ('upstream', 'bundle')",
        )
      ).map((r) => r.name);
    },
    async storedDigest(key) {
      const [row] = await rows<{ digest: string }>(VERSION_SQL, [
        key.registry,
        key.collection,
        key.template,
        key.version,
      ]);
      return row?.digest;
    },
    async missingContent(wanted) {
      if (wanted.length === 0) return [];
      const found = new Set(
        (
          await rows<{ sha256: string }>('SELECT sha256 FROM files WHERE sha256 = ANY($1::text[])', [wanted])
        ).map((r) => r.sha256),
      );
      return wanted.filter((sha) => !found.has(sha));
    },
    async addVersions(groups, content, options = {}) {
      const now = options.now ?? Date.now();
      return pgTransaction(store.pool, async (client) => {
        const total: AddVersionsResult = { registryId: 0, added: 0, unchanged: 0, quarantined: [] };
        const announce: { id: number; generation: number }[] = [];
        for (const { registry, versions } of groups) {
          // One writer per registry across replicas, until COMMIT.
          await client.query("SELECT pg_advisory_xact_lock(hashtext('dm-add-versions:' || $1))", [
            registry.name,
          ]);
          await client.query(
            `INSERT INTO registries (name, source_type, source, path, visibility, "commit", last_sync_status, created_at)
             VALUES ($1, $2, $3, '', $4, $5, 'succeeded', $6) ON CONFLICT (name) DO NOTHING`,
            [registry.name, registry.sourceType, registry.source, registry.visibility, registry.commit, now],
          );
          const reg = await client.query<{ id: number }>('SELECT id FROM registries WHERE name = $1', [
            registry.name,
          ]);
          const registryId = reg.rows[0]!.id;
          const stored = new Map<string, string>();
          for (const v of versions) {
            const row = (
              await client.query<{ digest: string }>(VERSION_SQL, [
                registry.name,
                v.collection,
                v.template,
                v.version,
              ])
            ).rows[0];
            if (row) stored.set(versionKey(v), row.digest);
          }
          const { todo, unchanged } = sortAdded(registry.name, versions, (v) => stored.get(versionKey(v)));
          const plan = await firstSeenOfAddedPg(
            client,
            { registryId, registry: registry.name, syncId: null, now },
            todo,
          );
          for (const v of plan.kept) {
            const shas = [...new Set(v.files.map((f) => f.sha256))];
            const stored = new Set(
              (
                await client.query<{ sha256: string }>(
                  'SELECT sha256 FROM files WHERE sha256 = ANY($1::text[])',
                  [shas],
                )
              ).rows.map((r) => r.sha256),
            );
            for (const f of v.files) {
              if (stored.has(f.sha256)) continue;
              const bytes = content(f.sha256);
              if (!bytes) throw contentMissing(v, f);
              await client.query(
                'INSERT INTO files (sha256, git_sha, size, content) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
                [f.sha256, gitBlobSha(bytes), f.size, bytes],
              );
              stored.add(f.sha256);
            }
            const info = schemaInfoOf(v.schemaJson);
            const properties = info.properties.join(' ');
            const found = (
              await client.query<{ id: number; latestVersion: string | null }>(
                `SELECT id, latest_version AS "latestVersion" FROM templates
                 WHERE registry_id = $1 AND collection = $2 AND name = $3`,
                [registryId, v.collection, v.template],
              )
            ).rows[0];
            let templateId: number;
            if (!found) {
              const inserted = await client.query<{ id: number }>(
                `INSERT INTO templates (registry_id, collection, name, latest_version, title, description, properties)
                 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
                [registryId, v.collection, v.template, v.version, info.title, info.description, properties],
              );
              templateId = inserted.rows[0]!.id;
            } else {
              templateId = found.id;
              if (takesLatest(v, found.latestVersion)) {
                await client.query(
                  'UPDATE templates SET latest_version = $1, title = $2, description = $3, properties = $4 WHERE id = $5',
                  [v.version, info.title, info.description, properties, templateId],
                );
              }
            }
            // Accepted upstream: the superseded rows go (their files cascade), the new ones come in.
            if (v.supersedes !== undefined) {
              await client.query('DELETE FROM versions WHERE template_id = $1 AND version = $2', [
                templateId,
                v.version,
              ]);
            }
            const version = await client.query<{ id: number }>(
              `INSERT INTO versions (template_id, registry_id, version, kind, dir, template_file, schema_file, has_example, digest, schema_json, tree_sha)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL) RETURNING id`,
              [
                templateId,
                registryId,
                v.version,
                v.kind,
                v.dir,
                v.templateFile,
                v.schemaFile,
                v.hasExample,
                v.digest,
                v.schemaJson,
              ],
            );
            await client.query(
              `INSERT INTO version_files (version_id, path, sha256, size)
               SELECT $1, * FROM unnest($2::text[], $3::text[], $4::int[])`,
              [
                version.rows[0]!.id,
                v.files.map((f) => f.path),
                v.files.map((f) => f.sha256),
                v.files.map((f) => f.size),
              ],
            );
          }
          if (plan.kept.length > 0) {
            const bumped = await client.query<{ generation: number }>(
              `UPDATE registries SET generation = generation + 1, last_sync_at = $1,
                 "commit" = coalesce($2, "commit"),
                 template_count = (SELECT count(*) FROM templates WHERE registry_id = $3),
                 version_count = (SELECT count(*) FROM versions WHERE registry_id = $3)
               WHERE id = $3 RETURNING generation`,
              [now, registry.commit, registryId],
            );
            announce.push({ id: registryId, generation: bumped.rows[0]!.generation });
          }
          total.registryId = registryId;
          total.added += plan.kept.length;
          total.unchanged += unchanged;
          total.quarantined.push(...plan.quarantined);
        }
        // Delivered at COMMIT only: no replica hears of a generation it cannot read yet.
        for (const a of announce) {
          await client.query('SELECT pg_notify($1, $2)', [INDEX_CHANNEL, `${a.id}:${a.generation}`]);
        }
        return total;
      });
    },
    async flagRemovedUpstream(registryId, listed, now) {
      return pgTransaction(store.pool, async (client) => {
        const found = await client.query<{
          id: number;
          collection: string;
          template: string;
          version: string;
          removedAt: string | null;
        }>(
          `SELECT v.id, t.collection, t.name AS template, v.version, v.removed_upstream_at AS "removedAt"
           FROM versions v JOIN templates t ON t.id = v.template_id WHERE t.registry_id = $1 FOR UPDATE OF v`,
          [registryId],
        );
        const mark: number[] = [];
        const unmark: number[] = [];
        let removed = 0;
        for (const row of found.rows) {
          const gone = !listed.has(versionKey(row));
          if (gone) removed++;
          if (gone === (row.removedAt !== null)) continue;
          (gone ? mark : unmark).push(row.id);
        }
        if (mark.length > 0) {
          await client.query('UPDATE versions SET removed_upstream_at = $1 WHERE id = ANY($2::int[])', [
            now,
            mark,
          ]);
        }
        if (unmark.length > 0) {
          await client.query('UPDATE versions SET removed_upstream_at = NULL WHERE id = ANY($1::int[])', [
            unmark,
          ]);
        }
        return { removed, changed: mark.length + unmark.length > 0 };
      });
    },
    async markRemovedUpstream(key, now) {
      const result = await pool.query(
        `UPDATE versions SET removed_upstream_at = $1 WHERE removed_upstream_at IS NULL AND id IN (
           SELECT v.id FROM versions v JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
           WHERE r.name = $2 AND t.collection = $3 AND t.name = $4 AND v.version = $5)`,
        [now, key.registry, key.collection, key.template, key.version],
      );
      return (result.rowCount ?? 0) > 0;
    },
    async openQuarantine(q) {
      const [reg] = await rows<{ id: number }>('SELECT id FROM registries WHERE name = $1', [q.registry]);
      if (!reg) return undefined;
      return pgTransaction(store.pool, async (client) => {
        // One open quarantine per version across replicas.
        await client.query("SELECT pg_advisory_xact_lock(hashtext('dm-add-versions:' || $1))", [q.registry]);
        return openQuarantinePg(client, { ...q, registryId: reg.id });
      });
    },
    async closeReverted(id, versions, now) {
      let n = 0;
      const text = CLOSE_REVERTED_SQL.replace(/\?/g, () => `$${++n}`);
      let closed = 0;
      for (const v of versions) {
        const res = await pool.query(text, [now, REVERTED_REASON, id, v.template, v.version, v.digest]);
        closed += res.rowCount ?? 0;
      }
      return closed;
    },
    async makePrivate(id) {
      await pool.query("UPDATE registries SET visibility = 'private' WHERE id = $1", [id]);
    },
    async counts(id) {
      const [row] = await rows<{ templateCount: number; versionCount: number }>(
        'SELECT template_count AS "templateCount", version_count AS "versionCount" FROM registries WHERE id = $1',
        [id],
      );
      return row;
    },
    async versionsOf(registry) {
      return rows<VersionKey>(
        `SELECT r.name AS registry, t.collection, t.name AS template, v.version FROM versions v
         JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
         WHERE lower(r.name) = lower($1)`,
        [registry],
      );
    },
    async bundleVersion(key, digest) {
      const [row] = await rows<{ dir: string; hasExample: boolean; schemaJson: string | null }>(
        `SELECT v.dir, v.has_example AS "hasExample", v.schema_json AS "schemaJson" FROM versions v
         JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
         WHERE r.name = $1 AND t.collection = $2 AND t.name = $3 AND v.version = $4`,
        [key.registry, key.collection, key.template, key.version],
      );
      if (!row) return undefined;
      const [seen] = await rows<{ seenAt: string | null }>(
        'SELECT min(seen_at) AS "seenAt" FROM first_seen WHERE template = $1 AND version = $2 AND digest = $3',
        [canonicalTemplate(key.registry, key.collection, key.template), key.version, digest],
      );
      return { ...row, firstSeen: seen?.seenAt == null ? null : Number(seen.seenAt) };
    },
    async templates() {
      return rows<ExportedTemplate>(
        `SELECT r.name AS registry, t.collection, t.name, t.latest_version AS "latestVersion", t.title, t.description
         FROM templates t JOIN registries r ON r.id = t.registry_id
         ORDER BY r.name COLLATE "C", t.collection COLLATE "C", t.name COLLATE "C"`,
      );
    },
  };
}

// PostgreSQL only: statements over arrays (round trips per batch, not per version), an advisory lock per registry and pg_notify; the rules are ../add-versions.ts.
/**
 * Adding versions without a swap on PostgreSQL (add-versions.ts's twin; docs/mirroring.md): the
 * same rows and the same decisions (conflicts refused whole, the first-seen record, content stored
 * once), in one transaction over the `pg` pool, written with statements over arrays (a bundle
 * brings thousands of versions: round trips per batch, not per version). Adds to one registry are
 * serialised across replicas by a transaction-scoped advisory lock on its name (never a
 * session-level one), and the registry's new generation is announced with `pg_notify` like an
 * index swap, so every replica drops its cached answers for it.
 */
import type { PoolClient } from 'pg';
import { gitBlobSha } from '../../../../client/src/source/index.js';
import { contentMissing, schemaInfoOf, sortAdded, takesLatest, versionKey } from '../add-versions.js';
import type {
  AddedFile,
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
import { type ContentRow, insertContentRows } from './content.js';
import { type PostgresStore, pgTransaction } from './open.js';
import { postgresDialect, runFlowOn } from './runner.js';
import { INDEX_CHANNEL } from './swap-index.js';

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
          // Round trips per call, not per version (a bundle brings thousands): each step is one
          // statement over arrays (unnest), in batches that bound a statement's size.
          const stored = await storedDigests(client, registryId, versions);
          const { todo, unchanged } = sortAdded(registry.name, versions, (v) => stored.get(versionKey(v)));
          const plan = await runFlowOn(
            client,
            addedFirstSeenFlow(
              postgresDialect,
              { registryId, registry: registry.name, syncId: null, now },
              todo,
            ),
          );
          await insertContent(client, plan.kept, content);
          const templateIds = await writeTemplates(client, registryId, plan.kept);
          const superseded = plan.kept.filter((v) => v.supersedes !== undefined);
          // Accepted upstream: the superseded rows go (their files cascade), the new ones come in.
          for (const v of superseded) {
            await client.query('DELETE FROM versions WHERE template_id = $1 AND version = $2', [
              templateIds.get(templateKey(v)),
              v.version,
            ]);
          }
          await insertVersions(client, registryId, plan.kept, templateIds);
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
        return runFlowOn(client, openQuarantineFlow({ ...q, registryId: reg.id }));
      });
    },
    async closeReverted(id, versions, now) {
      // One transaction, as every write of the store (SQLite's closes them in one too).
      return pgTransaction(pool, async (client) => {
        let closed = 0;
        for (const v of versions) {
          const res = await client.query(CLOSE_REVERTED_SQL, [
            now,
            REVERTED_REASON,
            id,
            v.template,
            v.version,
            v.digest,
          ]);
          closed += res.rowCount ?? 0;
        }
        return closed;
      });
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

const templateKey = (v: { collection: string; template: string }) => `${v.collection}\0${v.template}`;

/** Rows per statement when writing arrays; content rows (4 parameters each) and bytes per statement. */
const BATCH_ROWS = 1000;

function* batches<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** The stored digest of each of `versions` that exists in the registry, by versionKey. */
async function storedDigests(
  client: PoolClient,
  registryId: number,
  versions: readonly AddedVersion[],
): Promise<Map<string, string>> {
  const stored = new Map<string, string>();
  for (const batch of batches(versions, BATCH_ROWS)) {
    const found = await client.query<{
      collection: string;
      template: string;
      version: string;
      digest: string;
    }>(
      `SELECT k.collection, k.template, k.version, v.digest
       FROM unnest($2::text[], $3::text[], $4::text[]) AS k(collection, template, version)
       JOIN templates t ON t.registry_id = $1 AND t.collection = k.collection AND t.name = k.template
       JOIN versions v ON v.template_id = t.id AND v.version = k.version`,
      [registryId, batch.map((v) => v.collection), batch.map((v) => v.template), batch.map((v) => v.version)],
    );
    for (const r of found.rows) stored.set(versionKey(r), r.digest);
  }
  return stored;
}

/** Stores the content of `versions` the database lacks, once each. */
async function insertContent(
  client: PoolClient,
  versions: readonly AddedVersion[],
  content: (sha256: string) => Buffer | undefined,
): Promise<void> {
  const wanted = new Map<string, { v: AddedVersion; f: AddedFile }>();
  for (const v of versions)
    for (const f of v.files) if (!wanted.has(f.sha256)) wanted.set(f.sha256, { v, f });
  const shas = [...wanted.keys()];
  const stored = new Set<string>();
  for (const batch of batches(shas, BATCH_ROWS * 10)) {
    const found = await client.query<{ sha256: string }>(
      'SELECT sha256 FROM files WHERE sha256 = ANY($1::text[])',
      [batch],
    );
    for (const r of found.rows) stored.add(r.sha256);
  }
  const rows: ContentRow[] = [];
  for (const [sha, { v, f }] of wanted) {
    if (stored.has(sha)) continue;
    const data = content(sha);
    if (!data) throw contentMissing(v, f);
    rows.push({ sha256: sha, gitSha: gitBlobSha(data), size: f.size, content: data });
  }
  await insertContentRows(client, rows);
}

/**
 * The template row of each of `versions` (by templateKey), inserted when new; a template's latest
 * version, title, description and properties end as the last of its versions that took latest
 * left them, as when the versions are added one by one.
 */
async function writeTemplates(
  client: PoolClient,
  registryId: number,
  versions: readonly AddedVersion[],
): Promise<Map<string, number>> {
  const keys = [...new Map(versions.map((v) => [templateKey(v), v])).values()];
  const rows = new Map<
    string,
    { id: number | undefined; latestVersion: string | null; takes?: AddedVersion }
  >();
  for (const batch of batches(keys, BATCH_ROWS)) {
    const found = await client.query<{
      id: number;
      collection: string;
      name: string;
      latestVersion: string | null;
    }>(
      `SELECT t.id, t.collection, t.name, t.latest_version AS "latestVersion"
       FROM unnest($2::text[], $3::text[]) AS k(collection, name)
       JOIN templates t ON t.registry_id = $1 AND t.collection = k.collection AND t.name = k.name`,
      [registryId, batch.map((v) => v.collection), batch.map((v) => v.template)],
    );
    for (const r of found.rows) rows.set(templateKey({ collection: r.collection, template: r.name }), r);
  }
  const created: AddedVersion[] = [];
  for (const v of versions) {
    const row = rows.get(templateKey(v));
    if (!row) {
      rows.set(templateKey(v), { id: undefined, latestVersion: v.version, takes: v });
      created.push(v);
    } else if (takesLatest(v, row.latestVersion)) {
      row.latestVersion = v.version;
      row.takes = v;
    }
  }
  const ids = new Map<string, number>();
  for (const [key, row] of rows) if (row.id !== undefined) ids.set(key, row.id);
  for (const batch of batches(created, BATCH_ROWS)) {
    const latest = batch.map((v) => rows.get(templateKey(v))!.takes!);
    const infos = latest.map((v) => schemaInfoOf(v.schemaJson));
    const inserted = await client.query<{ id: number; collection: string; name: string }>(
      `INSERT INTO templates (registry_id, collection, name, latest_version, title, description, properties)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
       RETURNING id, collection, name`,
      [
        registryId,
        batch.map((v) => v.collection),
        batch.map((v) => v.template),
        latest.map((v) => v.version),
        infos.map((i) => i.title),
        infos.map((i) => i.description),
        infos.map((i) => i.properties.join(' ')),
      ],
    );
    for (const r of inserted.rows) ids.set(templateKey({ collection: r.collection, template: r.name }), r.id);
  }
  const updated = [...rows.values()].filter((r) => r.id !== undefined && r.takes !== undefined);
  for (const batch of batches(updated, BATCH_ROWS)) {
    const infos = batch.map((r) => schemaInfoOf(r.takes!.schemaJson));
    await client.query(
      `UPDATE templates t SET latest_version = u.version, title = u.title, description = u.description,
         properties = u.properties
       FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, version, title, description, properties)
       WHERE t.id = u.id`,
      [
        batch.map((r) => r.id),
        batch.map((r) => r.takes!.version),
        infos.map((i) => i.title),
        infos.map((i) => i.description),
        infos.map((i) => i.properties.join(' ')),
      ],
    );
  }
  return ids;
}

/** The version rows of `versions` and their file lists. */
async function insertVersions(
  client: PoolClient,
  registryId: number,
  versions: readonly AddedVersion[],
  templateIds: ReadonlyMap<string, number>,
): Promise<void> {
  for (const batch of batches(versions, BATCH_ROWS)) {
    const inserted = await client.query<{ id: number; templateId: number; version: string }>(
      `INSERT INTO versions (template_id, registry_id, version, kind, dir, template_file, schema_file, has_example, digest, schema_json, tree_sha)
       SELECT u.template_id, $1, u.version, u.kind, u.dir, u.template_file, u.schema_file, u.has_example, u.digest, u.schema_json, NULL
       FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::text[], $10::text[])
         AS u(template_id, version, kind, dir, template_file, schema_file, has_example, digest, schema_json)
       RETURNING id, template_id AS "templateId", version`,
      [
        registryId,
        batch.map((v) => templateIds.get(templateKey(v))),
        batch.map((v) => v.version),
        batch.map((v) => v.kind),
        batch.map((v) => v.dir),
        batch.map((v) => v.templateFile),
        batch.map((v) => v.schemaFile),
        batch.map((v) => v.hasExample),
        batch.map((v) => v.digest),
        batch.map((v) => v.schemaJson),
      ],
    );
    const versionIds = new Map(inserted.rows.map((r) => [`${r.templateId}\0${r.version}`, r.id]));
    const files = batch.flatMap((v) => {
      const id = versionIds.get(`${templateIds.get(templateKey(v))}\0${v.version}`);
      return v.files.map((f) => ({ id, f }));
    });
    await client.query(
      `INSERT INTO version_files (version_id, path, sha256, size)
       SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::int[])`,
      [
        files.map((x) => x.id),
        files.map((x) => x.f.path),
        files.map((x) => x.f.sha256),
        files.map((x) => x.f.size),
      ],
    );
  }
}

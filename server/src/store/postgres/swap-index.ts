// PostgreSQL only: the swap's mechanics, rows as arrays (unnest), ids drawn from sequences, pg_notify at COMMIT.
/**
 * Swapping a registry's index in on PostgreSQL (docs/server.md, "Store"): the same rows as the
 * SQLite swap (sqlite/swap-index.ts), written in one transaction, so readers on every replica see the old
 * index or the new one, never a mix, and a failure or a killed process before COMMIT leaves the old
 * one. Rows go in as arrays (`unnest`), a few statements per table whatever the registry's size
 * (content too: measured faster here than one binary parameter per file, as the runner's insertRows sends a blob column); ids are drawn from the tables' sequences first so versions can name their template. The
 * registry's new generation is announced with `pg_notify('dm_registry_index', …)`, which
 * PostgreSQL delivers to listeners at COMMIT only. What every swap does (the first-seen step, the
 * old rows' removal, findings, the registry row, pruning, and the sync's outcome written last, so a
 * process killed right after COMMIT never leaves the new index with its sync still `running`) is
 * ../swap.ts's, the same flows as on SQLite.
 */
import type { BuiltIndex } from '../../indexer/build-index.js';
import type { SwapMeta, SwapResult } from '../contract.js';
import { swapEndFlow, swapStartFlow } from '../swap.js';
import { type PostgresStore, pgTransaction } from './open.js';
import { postgresDialect, runFlowOn } from './runner.js';

/** The channel replicas listen on; the payload is `<registry id>:<generation>`. */
export const INDEX_CHANNEL = 'dm_registry_index';

async function ids(
  client: { query: PostgresStore['pool']['query'] },
  table: string,
  n: number,
): Promise<number[]> {
  if (n === 0) return [];
  const res = await client.query<{ id: string }>(
    `SELECT nextval(pg_get_serial_sequence('${table}', 'id')) AS id FROM generate_series(1, $1)`,
    [n],
  );
  return res.rows.map((r) => Number(r.id));
}

export async function swapIndexPg(
  store: PostgresStore,
  built: BuiltIndex,
  meta: Omit<SwapMeta, 'midSwap'> & { midSwap?: () => Promise<void> | void },
): Promise<SwapResult> {
  const swapped = await pgTransaction(store.pool, async (client) => {
    // The first-seen step and the old index's removal: ../swap.ts, as on SQLite.
    const firstSeen = await runFlowOn(client, swapStartFlow(postgresDialect, built, meta));
    const files = new Map<string, { gitSha: string; size: number; content: Buffer }>();
    const addFile = (f: { sha256: string; gitSha: string; size: number; content?: Buffer }) => {
      if (f.content && !files.has(f.sha256)) files.set(f.sha256, { ...f, content: f.content });
    };
    for (const t of built.templates) for (const v of t.versions) for (const f of v.files) addFile(f);
    if (built.registryYaml) addFile(built.registryYaml);
    // Content as one bytea[] (hex text on the wire), not one binary parameter per file as the
    // runner's insertRows for a blob column (postgres/runner.ts): measured on the 10,000-version swap (bench/server-postgres.ts,
    // two alternating pairs on a loaded machine) the per-file form took 10.5 and 11.6 s replacing
    // against 7.5 and 6.9 s (many small files: statements, not bytes, are the swap's cost).
    if (files.size > 0) {
      const rows = [...files.entries()];
      await client.query(
        `INSERT INTO files (sha256, git_sha, size, content)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::bytea[]) ON CONFLICT DO NOTHING`,
        [
          rows.map(([s]) => s),
          rows.map(([, f]) => f.gitSha),
          rows.map(([, f]) => f.size),
          rows.map(([, f]) => f.content),
        ],
      );
    }

    const templateIds = await ids(client, 'templates', built.templates.length);
    const half = Math.floor(built.templates.length / 2);
    const insertTemplates = (from: number, to: number) => {
      const part = built.templates.slice(from, to);
      return client.query(
        `INSERT INTO templates (id, registry_id, collection, name, latest_version, title, description, properties)
         SELECT u.id, $1, u.collection, u.name, u.latest, u.title, u.description, u.properties
         FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
           AS u(id, collection, name, latest, title, description, properties)`,
        [
          meta.registryId,
          templateIds.slice(from, to),
          part.map((t) => t.collection),
          part.map((t) => t.name),
          part.map((t) => t.latestVersion),
          part.map((t) => t.title),
          part.map((t) => t.description),
          part.map((t) => t.properties.join(' ')),
        ],
      );
    };
    await insertTemplates(0, half);
    await meta.midSwap?.();
    await insertTemplates(half, built.templates.length);

    const versions = built.templates.flatMap((t, i) =>
      t.versions.map((v) => ({ templateId: templateIds[i]!, v })),
    );
    const versionIds = await ids(client, 'versions', versions.length);
    if (versions.length > 0) {
      await client.query(
        `INSERT INTO versions (id, template_id, registry_id, version, kind, dir, template_file, schema_file, has_example, digest, schema_json, tree_sha)
         SELECT u.id, u.template_id, $1, u.version, u.kind, u.dir, u.template_file, u.schema_file, u.has_example, u.digest, u.schema_json, u.tree_sha
         FROM unnest($2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bool[], $10::text[], $11::text[], $12::text[])
           AS u(id, template_id, version, kind, dir, template_file, schema_file, has_example, digest, schema_json, tree_sha)`,
        [
          meta.registryId,
          versionIds,
          versions.map((x) => x.templateId),
          versions.map((x) => x.v.version),
          versions.map((x) => x.v.kind),
          versions.map((x) => x.v.dir),
          versions.map((x) => x.v.templateFile),
          versions.map((x) => x.v.schemaFile),
          versions.map((x) => x.v.hasExample),
          versions.map((x) => x.v.digest),
          versions.map((x) =>
            x.v.schema === null || x.v.schema === undefined ? null : JSON.stringify(x.v.schema),
          ),
          versions.map((x) => x.v.treeSha ?? null),
        ],
      );
      const vf = versions.flatMap((x, i) => x.v.files.map((f) => ({ id: versionIds[i]!, f })));
      await client.query(
        `INSERT INTO version_files (version_id, path, sha256, size)
         SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::int[])`,
        [vf.map((x) => x.id), vf.map((x) => x.f.path), vf.map((x) => x.f.sha256), vf.map((x) => x.f.size)],
      );
    }
    // Findings, the registry row, pruning and the sync's outcome: ../swap.ts.
    const result = await runFlowOn(
      client,
      swapEndFlow(postgresDialect, built, meta, versions.length, firstSeen),
    );
    // Delivered at COMMIT only: no replica hears of a generation it cannot read yet.
    await client.query('SELECT pg_notify($1, $2)', [
      INDEX_CHANNEL,
      `${meta.registryId}:${result.generation}`,
    ]);
    return result;
  });
  await analyzeTemplates(store);
  return swapped;
}

/**
 * The planner's figures for `templates` brought up to the swap (row count, `registry_id` and `id`:
 * two columns, about 60 ms at 100,000 templates), as after any bulk load: with the figures of the
 * table before it, the search's stepped load (postgres/search.ts), `registry_id = $1 AND id > $2
 * ORDER BY id LIMIT n`, was planned as a scan and sort of every row after $2 — each step of the warm
 * that follows the swap 50–250 ms of the database's time at 100,000 templates, not 1.5
 * (docs/server.md, "Search after an index swap"). After COMMIT, so no swap holds its lock; a
 * failure is the autovacuum's to make up and fails nothing (the swap is in).
 */
async function analyzeTemplates(store: PostgresStore): Promise<void> {
  try {
    await store.pool.query('ANALYZE templates (registry_id, id)');
  } catch {
    // The database away or busy: the autovacuum analyzes the table later.
  }
}

// PostgreSQL only: assembles the store over postgres/runner.ts, with a catalog version read in one statement (json_agg) and content found by git blob id in batches.
/**
 * The service store on PostgreSQL (contract.ts; docs/server.md "The store" and "Several
 * replicas"): the shared modules (crud.ts, quarantine.ts) over postgres/runner.ts, every statement
 * its own short transaction or one list in one (nothing session-level, so it works behind PgBouncer
 * in transaction mode). Replicas share the database, so recovering interrupted syncs spares the ones
 * another replica still holds the lease of (postgres/sync-lease.ts `unleased`), and the swap's
 * outcome is recorded inside its transaction.
 */
import type { KnownContent } from '../../indexer/build-index.js';
import type { CatalogQueries, CatalogVersionDetail, OpenQuarantineOf, ServiceStore } from '../contract.js';
import { crudQueries } from '../crud.js';
import { checksumQueriesOf, OPEN_QUARANTINE_OF_SQL } from '../quarantine.js';
import { postgresMirrorQueries } from './add-versions.js';
import { type PostgresStore, postgresMigrationsApplied } from './open.js';
import { PostgresReads } from './reads.js';
import { postgresRunner } from './runner.js';
import { swapIndexPg } from './swap-index.js';
import { unleased } from './sync-lease.js';

export function postgresServiceStore(store: PostgresStore): ServiceStore {
  const { pool } = store;
  const rows = async <T>(text: string, values: unknown[] = []): Promise<T[]> =>
    (await pool.query({ text, values })).rows as T[];

  const runner = postgresRunner(store);
  const crud = crudQueries(runner, { unleased });

  const catalogQueries: CatalogQueries = {
    async registries() {
      return rows('SELECT id, name, visibility, organisation, "commit" FROM registries');
    },
    async versions(registryId) {
      return rows(
        `SELECT t.collection AS collection, t.name AS name, v.version AS version, v.id AS id
         FROM templates t JOIN versions v ON v.template_id = t.id WHERE t.registry_id = $1`,
        [registryId],
      );
    },
    async version(versionId) {
      const [row] = await rows<CatalogVersionDetail & { removedUpstreamAt: string | null }>(
        `SELECT v.id, v.version, v.kind, v.template_file AS "templateFile", v.schema_file AS "schemaFile",
                v.digest, v.schema_json AS "schemaJson", v.removed_upstream_at AS "removedUpstreamAt",
                t.collection, t.name AS template, r.name AS registry, r."commit" AS "commit",
                (SELECT coalesce(json_agg(json_build_object('path', f.path, 'size', f.size, 'sha256', f.sha256)
                                          ORDER BY f.path COLLATE "C"), '[]'::json)
                 FROM version_files f WHERE f.version_id = v.id) AS files
         FROM versions v JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
         WHERE v.id = $1`,
        [versionId],
      );
      return row
        ? { ...row, removedUpstreamAt: row.removedUpstreamAt === null ? null : Number(row.removedUpstreamAt) }
        : undefined;
    },
    async content(sha256) {
      const [row] = await rows<{ content: Buffer }>('SELECT content FROM files WHERE sha256 = $1', [sha256]);
      return row?.content;
    },
    async quarantine(template, version) {
      const [row] = await rows<OpenQuarantineOf & { since: string }>(OPEN_QUARANTINE_OF_SQL, [
        template,
        version,
      ]);
      return row ? { ...row, since: Number(row.since) } : undefined;
    },
  };

  const checksumQueries = checksumQueriesOf(runner);

  return {
    dialect: 'postgres',
    handle: store,
    ...crud,
    catalog: catalogQueries,
    checksums: checksumQueries,
    mirror: postgresMirrorQueries(runner),
    reads: new PostgresReads(store),
    knownContent(): KnownContent {
      return {
        async sha256ForGitShas(gitShas) {
          const found = await rows<{ git_sha: string; sha256: string }>(
            'SELECT git_sha, sha256 FROM files WHERE git_sha = ANY($1::text[])',
            [gitShas],
          );
          return new Map(found.map((r) => [r.git_sha, r.sha256]));
        },
        async contents(sha256s) {
          const found = await rows<{ sha256: string; content: Buffer }>(
            'SELECT sha256, content FROM files WHERE sha256 = ANY($1::text[])',
            [sha256s],
          );
          return new Map(found.map((r) => [r.sha256, r.content]));
        },
      };
    },
    swap: (built, meta) => swapIndexPg(store, built, meta),
    async ready() {
      try {
        await pool.query('SELECT 1');
      } catch {
        return 'unreachable';
      }
      return (await postgresMigrationsApplied(store)) ? 'ready' : 'migrations-pending';
    },
  };
}

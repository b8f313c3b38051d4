// SQLite only: assembles the store over sqlite/runner.ts, with the catalog's statements prepared once and the index swap in its worker thread.
/**
 * The service store on SQLite (contract.ts; docs/server.md "The store"): the shared modules
 * (crud.ts, quarantine.ts, mirror-queries.ts) over sqlite/runner.ts, whose writes wait out an
 * index swap in progress, and what is SQLite's own: the catalog's statements prepared once, and
 * the swap itself, which runs in a worker thread on its own connection
 * (sqlite/swap-index-thread.ts) and records the sync's outcome inside its transaction.
 */
import { type KnownContent, knownContentOf } from '../../indexer/build-index.js';
import type {
  CatalogQueries,
  CatalogRegistryRow,
  CatalogVersionDetail,
  CatalogVersionRow,
  OpenQuarantineOf,
  ServiceStore,
} from '../contract.js';
import { crudQueries } from '../crud.js';
import { checksumQueriesOf, OPEN_QUARANTINE_OF_SQL } from '../quarantine.js';
import { sqlite as sqlite_ } from '../sql.js';
import { sqliteMirrorQueries } from './add-versions.js';
import { migrationsApplied, type Store } from './open.js';
import { readsOf } from './reads.js';
import { sqliteRunner } from './runner.js';
import { swapIndexOffThread, swapsSettled } from './swap-index-thread.js';

export function sqliteServiceStore(store: Store): ServiceStore {
  const { sqlite } = store;
  /** Every write of this thread waits out an index swap in progress (sqlite/swap-index-thread.ts). */
  const settled = () => swapsSettled(store);

  const runner = sqliteRunner(store, settled);
  const crud = crudQueries(runner);

  const c = {
    registries: sqlite.prepare('SELECT id, name, visibility, organisation, "commit" FROM registries'),
    versions: sqlite.prepare(
      `SELECT t.collection AS collection, t.name AS name, v.version AS version, v.id AS id
       FROM templates t JOIN versions v ON v.template_id = t.id WHERE t.registry_id = ?`,
    ),
    version: sqlite.prepare(
      `SELECT v.id, v.version, v.kind, v.template_file AS templateFile, v.schema_file AS schemaFile,
              v.digest, v.schema_json AS schemaJson, v.removed_upstream_at AS removedUpstreamAt, t.collection, t.name AS template, r.name AS registry,
              r."commit" AS "commit"
       FROM versions v JOIN templates t ON t.id = v.template_id JOIN registries r ON r.id = t.registry_id
       WHERE v.id = ?`,
    ),
    files: sqlite.prepare('SELECT path, size, sha256 FROM version_files WHERE version_id = ? ORDER BY path'),
    quarantine: sqlite.prepare(sqlite_(OPEN_QUARANTINE_OF_SQL)),
    content: sqlite.prepare('SELECT content FROM files WHERE sha256 = ?').pluck(),
    byGit: sqlite.prepare('SELECT sha256 FROM files WHERE git_sha = ?').pluck(),
  };
  const catalogQueries: CatalogQueries = {
    async registries() {
      return c.registries.all() as CatalogRegistryRow[];
    },
    async versions(registryId) {
      return c.versions.all(registryId) as CatalogVersionRow[];
    },
    async version(versionId) {
      const row = c.version.get(versionId) as Omit<CatalogVersionDetail, 'files'> | undefined;
      return row && { ...row, files: c.files.all(versionId) as CatalogVersionDetail['files'] };
    },
    async content(sha256) {
      return (c.content.get(sha256) as Buffer | undefined) ?? undefined;
    },
    async quarantine(template, version) {
      return c.quarantine.get(template, version) as OpenQuarantineOf | undefined;
    },
  };

  const checksumQueries = checksumQueriesOf(runner);

  return {
    dialect: 'sqlite',
    handle: store,
    ...crud,
    catalog: catalogQueries,
    checksums: checksumQueries,
    mirror: sqliteMirrorQueries(runner),
    reads: readsOf(store),
    knownContent(): KnownContent {
      return knownContentOf({
        sha256ForGitSha: (gitSha) => (c.byGit.get(gitSha) as string | undefined) ?? undefined,
        content: (sha) => (c.content.get(sha) as Buffer | undefined) ?? undefined,
      });
    },
    swap: (built, meta) => swapIndexOffThread(store, built, meta),
    async ready() {
      try {
        sqlite.prepare('SELECT 1').get();
        return migrationsApplied(store) ? 'ready' : 'migrations-pending';
      } catch {
        return 'unreachable';
      }
    },
  };
}

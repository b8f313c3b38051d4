// SQLite only: the contract's queries over better-sqlite3, answered synchronously as settled promises (PostgreSQL's go through a pool).
/**
 * The service store on SQLite (contract.ts; docs/server.md, "Store"): better-sqlite3 answers
 * at once, so every method does its work synchronously (prepared once per store, as before) and
 * hands back a settled promise — except the index swap, which runs in a worker thread on its own
 * connection (sqlite/swap-index-thread.ts) and records the sync's outcome inside its transaction.
 */
import { and, desc, eq, isNotNull, sql } from 'drizzle-orm';
import { type KnownContent, knownContentOf, type PreviousVersion } from '../../indexer/build-index.js';
import type {
  CatalogQueries,
  CatalogRegistryRow,
  CatalogVersionDetail,
  CatalogVersionRow,
  ChecksumQueries,
  CredentialQueries,
  MirrorQueries,
  OpenQuarantineOf,
  RegistryGeneration,
  RegistryQueries,
  RegistrySyncState,
  ServiceStore,
  SyncQueries,
  SyncValues,
  TokenQueries,
} from '../contract.js';
import { OPEN_QUARANTINE_OF_SQL } from '../quarantine.js';
import { sqlite as sqlite_ } from '../sql.js';
import { sqliteMirrorQueries } from './add-versions.js';
import { migrationsApplied, type Store } from './open.js';
import {
  acceptances,
  acceptQuarantine,
  currentCheckpoint,
  markNotified,
  openQuarantineCounts,
  undelivered,
} from './quarantine.js';
import { readsOf } from './reads.js';
import { credentials, files, findings, registries, syncs, versions } from './schema.js';
import { finishSyncSqlite, setSyncStateSqlite } from './swap-index.js';
import { swapIndexOffThread, swapsSettled } from './swap-index-thread.js';
import { allTokens, deleteToken, insertToken, recordTokensUsed, tokensFingerprint } from './tokens.js';

const PRUNE_FILES = `DELETE FROM files WHERE NOT EXISTS (SELECT 1 FROM version_files vf WHERE vf.sha256 = files.sha256)
  AND NOT EXISTS (SELECT 1 FROM registries r WHERE r.registry_yaml_sha256 = files.sha256)`;

export function sqliteServiceStore(store: Store): ServiceStore {
  const { db, sqlite } = store;
  /** Every write of this thread waits out an index swap in progress (sqlite/swap-index-thread.ts). */
  const settled = () => swapsSettled(store);

  const generationsOf = sqlite.prepare('SELECT id, generation FROM registries');
  const registryQueries: RegistryQueries = {
    async list() {
      return db.select().from(registries).orderBy(registries.name).all();
    },
    async byId(id) {
      return db.select().from(registries).where(eq(registries.id, id)).get();
    },
    async byName(name) {
      return db.select().from(registries).where(eq(registries.name, name)).get();
    },
    async insert(values) {
      await settled();
      return db.insert(registries).values(values).returning().get();
    },
    async updateSource(id, source) {
      await settled();
      return db
        .update(registries)
        .set({ ...source, etag: null })
        .where(eq(registries.id, id))
        .returning()
        .get();
    },
    async delete(id) {
      await settled();
      const row = db.delete(registries).where(eq(registries.id, id)).returning().get();
      if (row) sqlite.exec(PRUNE_FILES);
      return row;
    },
    async generations() {
      return generationsOf.all() as RegistryGeneration[];
    },
    async removedUpstreamCount(id) {
      return (
        db
          .select({ n: sql<number>`count(*)` })
          .from(versions)
          .where(and(eq(versions.registryId, id), isNotNull(versions.removedUpstreamAt)))
          .get()?.n ?? 0
      );
    },
    async findings(id) {
      return db
        .select({
          code: findings.code,
          severity: findings.severity,
          path: findings.path,
          message: findings.message,
        })
        .from(findings)
        .where(eq(findings.registryId, id))
        .orderBy(findings.path, findings.code)
        .all();
    },
  };

  const credentialQueries: CredentialQueries = {
    async secret(name) {
      return db.select().from(credentials).where(eq(credentials.name, name)).get()?.secret;
    },
    async upsert(name, kind, secret, now) {
      await settled();
      db.insert(credentials)
        .values({ name, kind, secret, createdAt: now, updatedAt: now })
        .onConflictDoUpdate({ target: credentials.name, set: { secret, kind, updatedAt: now } })
        .run();
    },
  };

  const tokenQueries: TokenQueries = {
    async all() {
      return allTokens(store);
    },
    async fingerprint() {
      return tokensFingerprint(store);
    },
    async insert(values) {
      await settled();
      return insertToken(store, values);
    },
    async delete(by) {
      await settled();
      return deleteToken(store, by);
    },
    async recordUsed(used) {
      await settled();
      recordTokensUsed(store, used);
    },
  };

  const finishSync = (syncId: number, registryId: number, values: SyncValues, keep: number) =>
    finishSyncSqlite(store, syncId, registryId, values, keep);
  const setState = (registryId: number, state: RegistrySyncState) =>
    setSyncStateSqlite(store, registryId, state);

  const versionTrees = sqlite.prepare(
    `SELECT dir, tree_sha AS treeSha, digest, schema_json AS schemaJson FROM versions
     WHERE registry_id = ? AND tree_sha IS NOT NULL`,
  );
  const syncQueries: SyncQueries = {
    async recoverInterrupted(now) {
      await settled();
      const result = db
        .update(syncs)
        .set({ status: 'interrupted', finishedAt: now, error: 'the server stopped during the sync' })
        .where(eq(syncs.status, 'running'))
        .run();
      db.update(registries)
        .set({ lastSyncStatus: 'interrupted' })
        .where(eq(registries.lastSyncStatus, 'running'))
        .run();
      return result.changes;
    },
    async interruptRunning(registryId, now) {
      await settled();
      return db
        .update(syncs)
        .set({ status: 'interrupted', finishedAt: now, error: 'the server stopped during the sync' })
        .where(and(eq(syncs.registryId, registryId), eq(syncs.status, 'running')))
        .run().changes;
    },
    async start(registryId, trigger, startedAt, replica) {
      await settled();
      const row = db
        .insert(syncs)
        .values({ registryId, trigger, status: 'running', startedAt, replica })
        .returning({ id: syncs.id })
        .get();
      setState(registryId, { lastSyncStatus: 'running' });
      return row.id;
    },
    async finish(syncId, registryId, values, keep) {
      await settled();
      finishSync(syncId, registryId, values, keep);
    },
    async setRegistryState(registryId, state) {
      await settled();
      setState(registryId, state);
    },
    async latest(registryId) {
      return db
        .select({ apiRequests: syncs.apiRequests, rateLimitRemaining: syncs.rateLimitRemaining })
        .from(syncs)
        .where(eq(syncs.registryId, registryId))
        .orderBy(desc(syncs.id))
        .limit(1)
        .get();
    },
    async countFiles() {
      return db.select({ n: sql<number>`count(*)` }).from(files).get()?.n ?? 0;
    },
    async versionTrees(registryId) {
      const found = versionTrees.all(registryId) as (PreviousVersion & { dir: string })[];
      return new Map(found.map(({ dir, ...v }) => [dir, v]));
    },
  };

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

  const mirror = sqliteMirrorQueries(store);
  /** The mirror's writes wait out an index swap in progress too. */
  const mirrorQueries: MirrorQueries = {
    ...mirror,
    addVersions: (...a) => settled().then(() => mirror.addVersions(...a)),
    flagRemovedUpstream: (...a) => settled().then(() => mirror.flagRemovedUpstream(...a)),
    markRemovedUpstream: (...a) => settled().then(() => mirror.markRemovedUpstream(...a)),
    openQuarantine: (...a) => settled().then(() => mirror.openQuarantine(...a)),
    closeReverted: (...a) => settled().then(() => mirror.closeReverted(...a)),
    makePrivate: (...a) => settled().then(() => mirror.makePrivate(...a)),
  };

  const checksumQueries: ChecksumQueries = {
    async accept(input) {
      await settled();
      return acceptQuarantine(store, input);
    },
    async markNotified(id, now) {
      await settled();
      markNotified(store, id, now);
    },
    async undelivered() {
      return undelivered(store);
    },
    async checkpoint(signer, now) {
      await settled();
      return currentCheckpoint(store, signer, now);
    },
    async acceptances(registryId, limit) {
      return acceptances(store, registryId, limit);
    },
    async openCounts() {
      return openQuarantineCounts(store);
    },
  };

  return {
    dialect: 'sqlite',
    handle: store,
    registries: registryQueries,
    credentials: credentialQueries,
    tokens: tokenQueries,
    syncs: syncQueries,
    catalog: catalogQueries,
    checksums: checksumQueries,
    mirror: mirrorQueries,
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

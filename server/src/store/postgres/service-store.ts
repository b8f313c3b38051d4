// PostgreSQL only: the contract's queries over the `pg` pool, each its own short transaction (works behind PgBouncer).
/**
 * The service store on PostgreSQL (contract.ts; docs/server.md, "Store" and "Several
 * replicas"): the same queries as the SQLite one, over the `pg` pool (drizzle's node-postgres
 * driver, postgres/schema.ts), every statement its own short transaction (nothing session-level, so it
 * works behind PgBouncer in transaction mode). Replicas share the database, so recovering
 * interrupted syncs spares the ones another replica still holds the lease of (postgres/sync-lease.ts), and
 * the swap's outcome is recorded inside its transaction.
 */
import { and, desc, eq, isNotNull, sql } from 'drizzle-orm';
import type pg from 'pg';
import type { KnownContent, PreviousVersion } from '../../indexer/build-index.js';
import type {
  CatalogQueries,
  CatalogVersionDetail,
  ChecksumQueries,
  CredentialQueries,
  FindingRow,
  OpenQuarantineOf,
  RegistryGeneration,
  RegistryQueries,
  RegistryRow,
  RegistrySyncState,
  ServiceStore,
  SyncQueries,
  SyncValues,
  TokenQueries,
  TokenRow,
} from '../contract.js';
import { OPEN_QUARANTINE_OF_SQL } from '../quarantine.js';
import { postgresMirrorQueries } from './add-versions.js';
import { type PgDb, type PostgresStore, postgresMigrationsApplied } from './open.js';
import {
  acceptancesPg,
  acceptQuarantinePg,
  currentCheckpointPg,
  markNotifiedPg,
  openQuarantineCountsPg,
  undeliveredPg,
} from './quarantine.js';
import { PostgresReads } from './reads.js';
import { credentials, files, registries, syncs, tokens, versions } from './schema.js';
import { swapIndexPg } from './swap-index.js';
import { finishSyncPg, setSyncStatePg } from './sync-record.js';

const NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

export function postgresServiceStore(store: PostgresStore): ServiceStore {
  const { db, pool } = store;
  const rows = async <T>(text: string, values: unknown[] = []): Promise<T[]> =>
    (await pool.query({ text, values })).rows as T[];

  const registryQueries: RegistryQueries = {
    async list() {
      return (await db
        .select()
        .from(registries)
        .orderBy(sql`${registries.name} COLLATE "C"`)) as RegistryRow[];
    },
    async byId(id) {
      const [row] = await db.select().from(registries).where(eq(registries.id, id));
      return row as RegistryRow | undefined;
    },
    async byName(name) {
      const [row] = await db.select().from(registries).where(eq(registries.name, name));
      return row as RegistryRow | undefined;
    },
    async insert(values) {
      const [row] = await db.insert(registries).values(values).returning();
      return row as RegistryRow;
    },
    async updateSource(id, source) {
      const [row] = await db
        .update(registries)
        .set({ ...source, etag: null })
        .where(eq(registries.id, id))
        .returning();
      return row as RegistryRow | undefined;
    },
    async delete(id) {
      const [row] = await db.delete(registries).where(eq(registries.id, id)).returning();
      if (row) {
        await pool.query(
          `DELETE FROM files WHERE NOT EXISTS (SELECT 1 FROM version_files vf WHERE vf.sha256 = files.sha256)
             AND NOT EXISTS (SELECT 1 FROM registries r WHERE r.registry_yaml_sha256 = files.sha256)`,
        );
      }
      return row as RegistryRow | undefined;
    },
    async generations() {
      return rows<RegistryGeneration>('SELECT id, generation FROM registries');
    },
    async removedUpstreamCount(id) {
      const [row] = await db
        .select({ n: sql<string>`count(*)` })
        .from(versions)
        .where(and(eq(versions.registryId, id), isNotNull(versions.removedUpstreamAt)));
      return Number(row?.n ?? 0);
    },
    async findings(id) {
      return rows<FindingRow>(
        `SELECT code, severity, path, message FROM findings WHERE registry_id = $1
         ORDER BY path COLLATE "C", code COLLATE "C"`,
        [id],
      );
    },
  };

  const credentialQueries: CredentialQueries = {
    async secret(name) {
      const [row] = await db.select().from(credentials).where(eq(credentials.name, name));
      return row?.secret;
    },
    async upsert(name, kind, secret, now) {
      await db
        .insert(credentials)
        .values({ name, kind, secret, createdAt: now, updatedAt: now })
        .onConflictDoUpdate({ target: credentials.name, set: { secret, kind, updatedAt: now } });
    },
  };

  const tokenQueries: TokenQueries = {
    async all() {
      const list = await db.select().from(tokens).orderBy(tokens.id);
      return list.map((t) => ({
        id: t.id,
        hash: t.hash,
        role: t.role as TokenRow['role'],
        registryId: t.registryId,
        organisations: t.organisations,
        createdAt: t.createdAt,
        expiresAt: t.expiresAt,
        lastUsedAt: t.lastUsedAt,
      }));
    },
    async fingerprint() {
      const [row] = await rows<{ n: string; m: string; s: string }>(
        'SELECT count(*) AS n, coalesce(max(id), 0) AS m, coalesce(sum(id), 0) AS s FROM tokens',
      );
      return `${row!.n}:${row!.m}:${row!.s}`;
    },
    async insert(values) {
      const [row] = await db.insert(tokens).values(values).returning({ id: tokens.id });
      return row!.id;
    },
    async delete(by) {
      const deleted = await db
        .delete(tokens)
        .where('id' in by ? eq(tokens.id, by.id) : eq(tokens.hash, by.hash))
        .returning({ id: tokens.id });
      return deleted.length > 0;
    },
    async recordUsed(used) {
      if (used.size === 0) return;
      await pool.query(
        `UPDATE tokens SET last_used_at = u.at FROM unnest($1::int[], $2::bigint[]) AS u(id, at)
         WHERE tokens.id = u.id AND (tokens.last_used_at IS NULL OR tokens.last_used_at < u.at)`,
        [[...used.keys()], [...used.values()]],
      );
    },
  };

  // `on`: a transaction's connection (the swap records its outcome inside it), else the pool.
  const finishSync = (
    syncId: number,
    registryId: number,
    values: SyncValues,
    keep: number,
    on: { db: PgDb; client: pg.PoolClient | pg.Pool } = { db, client: pool },
  ) => finishSyncPg(on, syncId, registryId, values, keep);
  const setState = (registryId: number, state: RegistrySyncState, on: PgDb = db) =>
    setSyncStatePg(on, registryId, state);

  const syncQueries: SyncQueries = {
    async recoverInterrupted(now) {
      // Only syncs no live replica holds the lease of: another replica may be running one now.
      const free = `NOT EXISTS (SELECT 1 FROM sync_leases l WHERE l.registry_id = $REG AND l.expires_at >= ${NOW})`;
      const res = await pool.query(
        `UPDATE syncs SET status = 'interrupted', finished_at = $1, error = 'the server stopped during the sync'
         WHERE status = 'running' AND ${free.replace('$REG', 'syncs.registry_id')}`,
        [now],
      );
      await pool.query(
        `UPDATE registries SET last_sync_status = 'interrupted'
         WHERE last_sync_status = 'running' AND ${free.replace('$REG', 'registries.id')}`,
      );
      return res.rowCount ?? 0;
    },
    async interruptRunning(registryId, now) {
      const res = await pool.query(
        `UPDATE syncs SET status = 'interrupted', finished_at = $2, error = 'the server stopped during the sync'
         WHERE registry_id = $1 AND status = 'running'`,
        [registryId, now],
      );
      return res.rowCount ?? 0;
    },
    async start(registryId, trigger, startedAt, replica) {
      const [row] = await db
        .insert(syncs)
        .values({ registryId, trigger, status: 'running', startedAt, replica })
        .returning({ id: syncs.id });
      await setState(registryId, { lastSyncStatus: 'running' });
      return row!.id;
    },
    finish: finishSync,
    setRegistryState: setState,
    async latest(registryId) {
      const [row] = await db
        .select({ apiRequests: syncs.apiRequests, rateLimitRemaining: syncs.rateLimitRemaining })
        .from(syncs)
        .where(eq(syncs.registryId, registryId))
        .orderBy(desc(syncs.id))
        .limit(1);
      return row;
    },
    async countFiles() {
      const [row] = await db.select({ n: sql<string>`count(*)` }).from(files);
      return Number(row?.n ?? 0);
    },
    async versionTrees(registryId) {
      const found = await rows<PreviousVersion & { dir: string }>(
        `SELECT dir, tree_sha AS "treeSha", digest, schema_json AS "schemaJson" FROM versions
         WHERE registry_id = $1 AND tree_sha IS NOT NULL`,
        [registryId],
      );
      return new Map(found.map(({ dir, ...v }) => [dir, v]));
    },
  };

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

  const checksumQueries: ChecksumQueries = {
    accept: (input) => acceptQuarantinePg(pool, input),
    markNotified: (id, now) => markNotifiedPg(pool, id, now),
    undelivered: () => undeliveredPg(pool),
    checkpoint: (signer, now) => currentCheckpointPg(pool, signer, now),
    acceptances: (registryId, limit) => acceptancesPg(pool, registryId, limit),
    openCounts: () => openQuarantineCountsPg(pool),
  };

  return {
    dialect: 'postgres',
    handle: store,
    registries: registryQueries,
    credentials: credentialQueries,
    tokens: tokenQueries,
    syncs: syncQueries,
    catalog: catalogQueries,
    checksums: checksumQueries,
    mirror: postgresMirrorQueries(store),
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

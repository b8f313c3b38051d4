// PostgreSQL only: drizzle's pg-core declaration of the tables (bigint times, bytea, identity ids), from which drizzle-kit writes migrations/postgres/.
/**
 * The registry server's schema on PostgreSQL (docs/server.md, "Store"): the same tables, columns
 * and names as schema.ts (SQLite), in PostgreSQL's types — milliseconds since the epoch as
 * `bigint` (read as numbers), content as `bytea`, identity ids. drizzle-kit generates
 * migrations/postgres/ from this file (drizzle.postgres.config.ts). Search is PostgreSQL's own:
 * `templates.search` is a generated, weighted `tsvector` (the `simple` configuration; A name, B
 * title and description, C property names and collection; identifiers both as written and split
 * on `-_/.`), with a GIN index, and a trigram index on names (pg_trgm, created by the custom
 * migration 0000) for typos. Text that SQL ranges over or orders by compares as bytes, like
 * SQLite's: the custom migration 0011 makes those columns `COLLATE "C"` (templates' name and
 * collection, which feed the generated column, are ordered with an explicit `COLLATE "C"`);
 * docs/server.md, "Text is compared as bytes".
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });
const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/** Milliseconds since the epoch. */
const millis = (name: string) => bigint(name, { mode: 'number' });

const id = () => integer('id').primaryKey().generatedByDefaultAsIdentity();

export const registries = pgTable('registries', {
  id: id(),
  name: text('name').notNull().unique(),
  sourceType: text('source_type').notNull(),
  source: text('source').notNull(),
  branch: text('branch'),
  path: text('path').notNull().default(''),
  intervalSeconds: integer('interval_seconds'),
  visibility: text('visibility').notNull().default('public'),
  organisation: text('organisation'),
  credential: text('credential'),
  webhookSecret: text('webhook_secret'),
  commit: text('commit'),
  etag: text('etag'),
  registryYamlSha256: text('registry_yaml_sha256'),
  generation: integer('generation').notNull().default(0),
  lastSyncAt: millis('last_sync_at'),
  lastSyncStatus: text('last_sync_status').notNull().default('never'),
  lastSyncError: text('last_sync_error'),
  templateCount: integer('template_count').notNull().default(0),
  versionCount: integer('version_count').notNull().default(0),
  findingCount: integer('finding_count').notNull().default(0),
  createdAt: millis('created_at').notNull(),
});

export const syncs = pgTable(
  'syncs',
  {
    id: id(),
    registryId: integer('registry_id')
      .notNull()
      .references(() => registries.id, { onDelete: 'cascade' }),
    trigger: text('trigger').notNull(),
    status: text('status').notNull(),
    startedAt: millis('started_at').notNull(),
    finishedAt: millis('finished_at'),
    commit: text('commit'),
    apiRequests: integer('api_requests').notNull().default(0),
    rateLimitRemaining: integer('rate_limit_remaining'),
    error: text('error'),
    replica: text('replica'),
  },
  (t) => [index('syncs_registry_idx').on(t.registryId, t.id)],
);

/** Words of an identifier as written and split on `-_/.`: `redis-cluster` → `redis-cluster redis cluster`. */
const words = (column: string) =>
  `coalesce(${column}, '') || ' ' || regexp_replace(coalesce(${column}, ''), '[-_/.]+', ' ', 'g')`;

export const templates = pgTable(
  'templates',
  {
    id: id(),
    registryId: integer('registry_id')
      .notNull()
      .references(() => registries.id, { onDelete: 'cascade' }),
    collection: text('collection').notNull(),
    name: text('name').notNull(),
    latestVersion: text('latest_version'),
    title: text('title'),
    description: text('description'),
    /** The latest version's schema property names, space-separated (what SQLite keeps in FTS5). */
    properties: text('properties').notNull().default(''),
    search: tsvector('search').generatedAlwaysAs(
      sql.raw(
        `setweight(to_tsvector('simple'::regconfig, ${words('name')}), 'A') || ` +
          `setweight(to_tsvector('simple'::regconfig, coalesce(title, '') || ' ' || coalesce(description, '')), 'B') || ` +
          `setweight(to_tsvector('simple'::regconfig, ${words('properties')} || ' ' || ${words('collection')}), 'C')`,
      ),
    ),
  },
  (t) => [
    uniqueIndex('templates_name_idx').on(t.registryId, t.collection, t.name),
    index('templates_plain_name_idx').on(t.name),
    index('templates_search_idx').using('gin', t.search),
    index('templates_name_trgm_idx').using('gin', t.name.op('gin_trgm_ops')),
    // The search's exact-name tier (postgres/reads.ts), and its listing order for an empty query.
    index('templates_lower_name_idx').on(sql`lower(${t.name})`),
    index('templates_name_order_idx').on(sql`${t.name} COLLATE "C"`, sql`${t.collection} COLLATE "C"`),
    // The search's stepped load of a registry's rows (registry_id = $1 AND id > $2 ORDER BY id).
    index('templates_registry_id_idx').on(t.registryId, t.id),
    // A registry page's templates in byte order (store/read-queries.ts templatesPage).
    index('templates_registry_order_idx').on(
      t.registryId,
      sql`${t.collection} COLLATE "C"`,
      sql`${t.name} COLLATE "C"`,
    ),
  ],
);

export const versions = pgTable(
  'versions',
  {
    id: id(),
    templateId: integer('template_id')
      .notNull()
      .references(() => templates.id, { onDelete: 'cascade' }),
    registryId: integer('registry_id').notNull(),
    version: text('version').notNull(),
    kind: text('kind').notNull(),
    dir: text('dir').notNull(),
    templateFile: text('template_file').notNull(),
    schemaFile: text('schema_file'),
    hasExample: boolean('has_example').notNull(),
    digest: text('digest').notNull(),
    schemaJson: text('schema_json'),
    /** When a mirror saw its upstream no longer list this version (ms since the epoch; docs/mirroring.md). */
    removedUpstreamAt: millis('removed_upstream_at'),
    treeSha: text('tree_sha'),
  },
  (t) => [uniqueIndex('versions_template_idx').on(t.templateId, t.version)],
);

export const files = pgTable(
  'files',
  {
    sha256: text('sha256').primaryKey(),
    gitSha: text('git_sha').notNull(),
    size: integer('size').notNull(),
    content: bytea('content').notNull(),
  },
  (t) => [index('files_git_sha_idx').on(t.gitSha)],
);

export const versionFiles = pgTable(
  'version_files',
  {
    versionId: integer('version_id')
      .notNull()
      .references(() => versions.id, { onDelete: 'cascade' }),
    path: text('path').notNull(),
    sha256: text('sha256')
      .notNull()
      .references(() => files.sha256),
    size: integer('size').notNull(),
  },
  (t) => [primaryKey({ columns: [t.versionId, t.path] }), index('version_files_sha_idx').on(t.sha256)],
);

export const findings = pgTable(
  'findings',
  {
    id: id(),
    registryId: integer('registry_id')
      .notNull()
      .references(() => registries.id, { onDelete: 'cascade' }),
    code: text('code').notNull(),
    severity: text('severity').notNull(),
    path: text('path').notNull(),
    message: text('message').notNull(),
  },
  (t) => [index('findings_registry_idx').on(t.registryId)],
);

export const credentials = pgTable('credentials', {
  name: text('name').primaryKey(),
  kind: text('kind').notNull(),
  secret: text('secret').notNull(),
  createdAt: millis('created_at').notNull(),
  updatedAt: millis('updated_at').notNull(),
});

export const tokens = pgTable(
  'tokens',
  {
    id: id(),
    hash: text('hash').notNull().unique(),
    role: text('role').notNull(),
    registryId: integer('registry_id').references(() => registries.id, { onDelete: 'cascade' }),
    organisations: text('organisations'),
    createdAt: millis('created_at').notNull(),
    /** When the token stops being accepted (ms), or null: never. */
    expiresAt: millis('expires_at'),
    /** When the token was last accepted (ms), recorded about once a second. */
    lastUsedAt: millis('last_used_at'),
  },
  (t) => [index('tokens_registry_idx').on(t.registryId)],
);

/**
 * Who is syncing a registry across the replicas (postgres/sync-lease.ts): one row per registry while a sync
 * runs, held until `expires_at` (database clock, ms) and renewed by heartbeats; `pending` records
 * triggers that arrived meanwhile, which the holder coalesces into one more sync. PostgreSQL only:
 * on SQLite one process serves, and its sync queue serialises.
 */
export const syncLeases = pgTable('sync_leases', {
  registryId: integer('registry_id')
    .primaryKey()
    .references(() => registries.id, { onDelete: 'cascade' }),
  holder: text('holder').notNull(),
  expiresAt: millis('expires_at').notNull(),
  pending: boolean('pending').notNull().default(false),
});

/* The first-seen record, checksum log and quarantine (docs/integrity-store.md §1; append-only triggers in the custom migration 0009). */

export const firstSeen = pgTable(
  'first_seen',
  {
    id: id(),
    template: text('template').notNull(),
    version: text('version').notNull(),
    digest: text('digest').notNull(),
    supersedes: text('supersedes'),
    logIndex: bigint('log_index', { mode: 'number' }).notNull().unique(),
    registryId: integer('registry_id').notNull(),
    syncId: integer('sync_id'),
    seenAt: millis('seen_at').notNull(),
  },
  (t) => [index('first_seen_key_idx').on(t.template, t.version, t.id)],
);

export const logHashes = pgTable(
  'log_hashes',
  {
    level: integer('level').notNull(),
    idx: bigint('idx', { mode: 'number' }).notNull(),
    hash: bytea('hash').notNull(),
  },
  (t) => [primaryKey({ columns: [t.level, t.idx] })],
);

export const logState = pgTable('log_state', {
  id: integer('id').primaryKey(),
  size: bigint('size', { mode: 'number' }).notNull(),
});

export const logCheckpoints = pgTable('log_checkpoints', {
  size: bigint('size', { mode: 'number' }).primaryKey(),
  root: text('root').notNull(),
  note: text('note').notNull(),
  signedAt: millis('signed_at').notNull(),
});

export const quarantines = pgTable(
  'quarantines',
  {
    id: id(),
    registryId: integer('registry_id').notNull(),
    template: text('template').notNull(),
    version: text('version').notNull(),
    firstDigest: text('first_digest').notNull(),
    newDigest: text('new_digest').notNull(),
    changedFiles: text('changed_files').notNull(),
    treeSha: text('tree_sha'),
    since: millis('since').notNull(),
    notifiedAt: millis('notified_at'),
    acceptedAt: millis('accepted_at'),
    acceptedBy: text('accepted_by'),
    reason: text('reason'),
  },
  (t) => [
    index('quarantines_key_idx').on(t.template, t.version),
    index('quarantines_registry_idx').on(t.registryId),
  ],
);

/* The Deployment Manager's tables (docs/manager.md, "Several replicas"), defined beside the client's SQLite schema. */
export {
  deploymentLeases,
  deployments,
  managerTokens,
  manifestResources,
  manifests,
  operations,
  typeInstances,
} from '../../../../client/src/state/index.js';

// SQLite only: drizzle's sqlite-core declaration of the tables, from which drizzle-kit writes migrations/sqlite/.
/**
 * The registry server's database schema (docs/server.md "Store"), the one source of truth for it:
 * drizzle-kit generates `migrations/` from this file. The FTS5 index over templates cannot be
 * described in drizzle's schema language; it lives in a hand-written custom migration
 * (`npx drizzle-kit generate --custom --name=…`, see docs/server.md) and is written to by
 * `index-writes.ts` (the swap and added versions) and read by `search.ts`.
 *
 * Column types stay portable to PostgreSQL (postgres/schema.ts): integers, text, blobs, no
 * SQLite-only defaults.
 */
import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/** A registry: a source indexed under the name references use (`host/owner/repo`). */
export const registries = sqliteTable('registries', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  /** `github.com/owner/repo`: the name references use. */
  name: text('name').notNull().unique(),
  /** 'github' | 'git' | 'directory' (and 'upstream' for mirroring, §5). */
  sourceType: text('source_type').notNull(),
  /** The source as given: `github.com/o/r`, a git URL, a directory. */
  source: text('source').notNull(),
  branch: text('branch'),
  /** Registry root inside the repository ('' for the root). */
  path: text('path').notNull().default(''),
  /** Sync interval in seconds; null: on demand and webhook only. */
  intervalSeconds: integer('interval_seconds'),
  /** 'public' | 'private'. */
  visibility: text('visibility').notNull().default('public'),
  /** The organisation the registry belongs to (docs/server.md, "Organisations"); null: none. */
  organisation: text('organisation'),
  /** Name of a stored credential (credentials.name) for private sources. */
  credential: text('credential'),
  /** Webhook secret, encrypted like credentials; never returned. */
  webhookSecret: text('webhook_secret'),
  /** The commit the serving index was built from. */
  commit: text('commit'),
  /** The ETag of the last branch-commit answer, for conditional re-syncs. */
  etag: text('etag'),
  /** sha256 of the registry.yaml the index was built with (its content stays stored). */
  registryYamlSha256: text('registry_yaml_sha256'),
  /** Bumped on every index swap; caches keyed by it. */
  generation: integer('generation').notNull().default(0),
  lastSyncAt: integer('last_sync_at'),
  /** 'never' | 'running' | 'succeeded' | 'unchanged' | 'failed' | 'interrupted'. */
  lastSyncStatus: text('last_sync_status').notNull().default('never'),
  lastSyncError: text('last_sync_error'),
  templateCount: integer('template_count').notNull().default(0),
  versionCount: integer('version_count').notNull().default(0),
  findingCount: integer('finding_count').notNull().default(0),
  createdAt: integer('created_at').notNull(),
});

/** One sync attempt of a registry: outcome, cost in API requests, remaining rate-limit budget. */
export const syncs = sqliteTable(
  'syncs',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    registryId: integer('registry_id')
      .notNull()
      .references(() => registries.id, { onDelete: 'cascade' }),
    /** 'start' | 'schedule' | 'manual' | 'webhook' | 'cli' | 'revalidate' (indexer/sync-registry.ts). */
    trigger: text('trigger').notNull(),
    /** 'running' | 'succeeded' | 'unchanged' | 'failed' | 'interrupted'. */
    status: text('status').notNull(),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at'),
    commit: text('commit'),
    apiRequests: integer('api_requests').notNull().default(0),
    rateLimitRemaining: integer('rate_limit_remaining'),
    error: text('error'),
    /** The process that ran it (`host:pid`, store/replica.ts). */
    replica: text('replica'),
  },
  (t) => [index('syncs_registry_idx').on(t.registryId, t.id)],
);

export const templates = sqliteTable(
  'templates',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    registryId: integer('registry_id')
      .notNull()
      .references(() => registries.id, { onDelete: 'cascade' }),
    /** '' for the root collection. */
    collection: text('collection').notNull(),
    name: text('name').notNull(),
    latestVersion: text('latest_version'),
    /** Schema `info.title` / `info.description` of the latest version. */
    title: text('title'),
    description: text('description'),
  },
  (t) => [
    uniqueIndex('templates_name_idx').on(t.registryId, t.collection, t.name),
    index('templates_plain_name_idx').on(t.name),
  ],
);

export const versions = sqliteTable(
  'versions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    templateId: integer('template_id')
      .notNull()
      .references(() => templates.id, { onDelete: 'cascade' }),
    registryId: integer('registry_id').notNull(),
    /** As the directory names it: `v1.1`. */
    version: text('version').notNull(),
    /** 'jinja' | 'python' | 'blueprint'. */
    kind: text('kind').notNull(),
    dir: text('dir').notNull(),
    templateFile: text('template_file').notNull(),
    schemaFile: text('schema_file'),
    hasExample: integer('has_example', { mode: 'boolean' }).notNull(),
    /** sha256 over the sorted `path\0sha256\n` list (docs/registry-layout.md "Digests"). */
    digest: text('digest').notNull(),
    /** The parsed schema as JSON, or null. */
    schemaJson: text('schema_json'),
    /** When a mirror saw its upstream no longer list this version (ms since the epoch; docs/mirroring.md). */
    removedUpstreamAt: integer('removed_upstream_at'),
    /** The git tree SHA of the version directory (null for directory sources): unchanged → digest unchanged (docs/integrity-store.md §3). */
    treeSha: text('tree_sha'),
  },
  (t) => [uniqueIndex('versions_template_idx').on(t.templateId, t.version)],
);

/** Content, addressed by sha256 and stored once however many versions share it. */
export const files = sqliteTable(
  'files',
  {
    sha256: text('sha256').primaryKey(),
    /** The git blob id of the same content, so a re-sync fetches only blobs it has not seen. */
    gitSha: text('git_sha').notNull(),
    size: integer('size').notNull(),
    content: blob('content', { mode: 'buffer' }).notNull(),
  },
  (t) => [index('files_git_sha_idx').on(t.gitSha)],
);

export const versionFiles = sqliteTable(
  'version_files',
  {
    versionId: integer('version_id')
      .notNull()
      .references(() => versions.id, { onDelete: 'cascade' }),
    /** Relative to the version directory. */
    path: text('path').notNull(),
    sha256: text('sha256')
      .notNull()
      .references(() => files.sha256),
    size: integer('size').notNull(),
  },
  (t) => [primaryKey({ columns: [t.versionId, t.path] }), index('version_files_sha_idx').on(t.sha256)],
);

/** Lint findings of the serving index: versions skipped and why. */
export const findings = sqliteTable(
  'findings',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
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

/** Credentials for private sources, encrypted (AES-256-GCM); never returned by any read. */
export const credentials = sqliteTable('credentials', {
  name: text('name').primaryKey(),
  /** 'github-token' | 'git-token'. */
  kind: text('kind').notNull(),
  /** base64(iv | tag | ciphertext). */
  secret: text('secret').notNull(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

/** API tokens, stored as sha256 hashes. */
export const tokens = sqliteTable(
  'tokens',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    hash: text('hash').notNull().unique(),
    /** 'admin' | 'read'. */
    role: text('role').notNull(),
    /** For read tokens: the registry they may read (null: every registry). */
    registryId: integer('registry_id').references(() => registries.id, { onDelete: 'cascade' }),
    /** For read tokens: the organisations whose registries they may read, comma-separated; null: none. */
    organisations: text('organisations'),
    createdAt: integer('created_at').notNull(),
    /** Epoch ms after which the token is refused; null: never. */
    expiresAt: integer('expires_at'),
    /** Epoch ms of the last request made with it (recorded about once a second). */
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [index('tokens_registry_idx').on(t.registryId)],
);

/*
 * The first-seen record, checksum log and quarantine (docs/integrity-store.md §1). `first_seen`,
 * `log_hashes` and `log_checkpoints` are append-only: triggers in the custom migration
 * `0008_integrity-append-only.sql` abort any UPDATE or DELETE. No foreign keys to registries:
 * deleting a registry never deletes what the log recorded.
 */

/** Every first-seen (template, version, digest), and every accepted superseding digest. */
export const firstSeen = sqliteTable(
  'first_seen',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** The canonical full template name (`github.com/o/r/[c/]t`). */
    template: text('template').notNull(),
    /** The version directory's name as published (`v1.0.3`). */
    version: text('version').notNull(),
    digest: text('digest').notNull(),
    /** The digest an accepted change replaced; null for a first sight. */
    supersedes: text('supersedes'),
    /** The record's leaf index in the checksum log. */
    logIndex: integer('log_index').notNull().unique(),
    registryId: integer('registry_id').notNull(),
    syncId: integer('sync_id'),
    seenAt: integer('seen_at').notNull(),
  },
  (t) => [index('first_seen_key_idx').on(t.template, t.version, t.id)],
);

/** The Merkle log's stored complete-subtree hashes (docs/integrity.md §1.2). */
export const logHashes = sqliteTable(
  'log_hashes',
  {
    level: integer('level').notNull(),
    idx: integer('idx').notNull(),
    hash: blob('hash', { mode: 'buffer' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.level, t.idx] })],
);

/** The log's size: one row (id 1), moved only by a conditional update (one writer at a time). */
export const logState = sqliteTable('log_state', {
  id: integer('id').primaryKey(),
  size: integer('size').notNull(),
});

/** Signed checkpoints, one per append; the newest is served by GET /api/v1/checksums/latest. */
export const logCheckpoints = sqliteTable('log_checkpoints', {
  size: integer('size').primaryKey(),
  /** base64 root hash. */
  root: text('root').notNull(),
  /** The signed note's text. */
  note: text('note').notNull(),
  signedAt: integer('signed_at').notNull(),
});

/** Versions whose content changed after it was first seen; the audit trail of accepted changes. */
export const quarantines = sqliteTable(
  'quarantines',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    registryId: integer('registry_id').notNull(),
    template: text('template').notNull(),
    version: text('version').notNull(),
    firstDigest: text('first_digest').notNull(),
    newDigest: text('new_digest').notNull(),
    /** JSON: [{path, old, new}] with old/new sha256 or null (added/removed). */
    changedFiles: text('changed_files').notNull(),
    treeSha: text('tree_sha'),
    since: integer('since').notNull(),
    notifiedAt: integer('notified_at'),
    acceptedAt: integer('accepted_at'),
    /** Who accepted: the admin token's id (`token:<id>`) or `cli`. */
    acceptedBy: text('accepted_by'),
    reason: text('reason'),
  },
  (t) => [
    index('quarantines_key_idx').on(t.template, t.version),
    index('quarantines_registry_idx').on(t.registryId),
  ],
);

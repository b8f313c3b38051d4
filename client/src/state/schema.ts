/**
 * The deployments database (docs/deployments.md "State"): deployments, their manifests (one per
 * create/update/delete, kept in history), the outcome of applying each resource, and type instances.
 * One source of truth for the client's local state; drizzle-kit generates `migrations/client/` from
 * this file (`npx drizzle-kit generate --config drizzle.client.config.ts`), and the registry server
 * can hold the same tables. Column types stay portable (integers, text; JSON as text).
 */
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/** A deployment: a name and its current manifest. Deleting one removes this row, not its manifests. */
export const deployments = sqliteTable('deployments', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  /** 'applying' | 'deployed' | 'failed' | 'deleting'. */
  state: text('state').notNull(),
  /** manifests.name of the manifest last applied (or being applied). */
  currentManifest: text('current_manifest'),
  /** The manifest last applied completely: what the cluster holds when `state` is 'deployed'. */
  lastGoodManifest: text('last_good_manifest'),
  /** `pid@host` of the dm process applying it; null when idle. */
  lockOwner: text('lock_owner'),
  lockedAt: integer('locked_at'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

/** One manifest per create/update/delete of a deployment (docs/deployments.md "State"). */
export const manifests = sqliteTable(
  'manifests',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** `manifest-<deployment>-<seq>`, unique. */
    name: text('name').notNull().unique(),
    deployment: text('deployment').notNull(),
    /** Sequence number within the deployment, from 1. */
    seq: integer('seq').notNull(),
    /** 'create' | 'update' | 'delete' | 'rollback' (docs/deployments.md "Rollback and history"). */
    action: text('action').notNull(),
    /** JSON: {config, imports: [{name, path?, content}]} — the configuration as given. */
    inputConfig: text('input_config').notNull(),
    /** JSON: {resources: [{name, type, properties}]}, primitives only. */
    expandedConfig: text('expanded_config').notNull(),
    /** JSON: the layout (docs/expansion.md "Configurations and expansion"). */
    layout: text('layout').notNull(),
    /** JSON: [{reference, resolved, commit?, digest?}]. */
    references: text('references').notNull(),
    /** JSON: the resolved `$(ref.NAME.PATH)` values: [{resource, reference, value}]. */
    resolvedValues: text('resolved_values').notNull().default('[]'),
    /** JSON: {kubeconfig?, context?, namespace, server?}. */
    target: text('target').notNull(),
    /** 'applying' | 'applied' | 'failed'. */
    status: text('status').notNull(),
    /**
     * JSON: the objects that may be in the cluster once this manifest is done (applied ones, failed
     * ones that existed before, prunes that did not happen): what the next manifest prunes from.
     */
    inventory: text('inventory').notNull().default('[]'),
    error: text('error'),
    createdAt: integer('created_at').notNull(),
    finishedAt: integer('finished_at'),
  },
  (t) => [uniqueIndex('manifests_deployment_seq').on(t.deployment, t.seq)],
);

/** Per resource of a manifest: what was applied or pruned, in which level, and how it went. */
export const manifestResources = sqliteTable(
  'manifest_resources',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    manifest: text('manifest').notNull(),
    /** 'apply' | 'prune'. */
    action: text('action').notNull(),
    /** The resource's name in the configuration. */
    name: text('name').notNull(),
    type: text('type').notNull(),
    apiVersion: text('api_version').notNull(),
    kind: text('kind').notNull(),
    /** '' for cluster-scoped objects. */
    namespace: text('namespace').notNull(),
    objectName: text('object_name').notNull(),
    /** Dependency level (0 = Namespaces and CRDs), the order of application. */
    level: integer('level').notNull(),
    /** 'pending' | 'applying' | 'applied' | 'failed' | 'not-attempted' | 'pruned' | 'prune-failed'. */
    outcome: text('outcome').notNull(),
    message: text('message'),
    /** resourceVersion of the live object after apply. */
    resourceVersion: text('resource_version'),
  },
  (t) => [index('manifest_resources_manifest').on(t.manifest)],
);

/** Instances of types used by active deployments, with their path into the manifest's layout. */
export const typeInstances = sqliteTable(
  'type_instances',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    deployment: text('deployment').notNull(),
    manifest: text('manifest').notNull(),
    name: text('name').notNull(),
    type: text('type').notNull(),
    /** JSON path into the layout, e.g. `$.resources[0].resources[1]`. */
    path: text('path').notNull(),
  },
  (t) => [index('type_instances_type').on(t.type), index('type_instances_deployment').on(t.deployment)],
);

/**
 * Operations of the Deployment Manager service (docs/manager.md): one per create, update or delete
 * asked over HTTP, run one at a time per deployment. The row is the audit record too: who asked,
 * when, what, and which manifest it made.
 */
export const operations = sqliteTable(
  'operations',
  {
    /** `op-<uuid>`. */
    id: text('id').primaryKey(),
    deployment: text('deployment').notNull(),
    /** 'create' | 'update' | 'delete' | 'rollback' (docs/deployments.md "Rollback and history"). */
    action: text('action').notNull(),
    /** 'pending' | 'running' | 'done' | 'failed' | 'interrupted'. */
    status: text('status').notNull(),
    /** Who asked: the token's description (`admin`, `token:<id>`, …). */
    actor: text('actor').notNull(),
    /** The configured cluster's name and the namespace the deployment targets. */
    cluster: text('cluster').notNull(),
    namespace: text('namespace').notNull(),
    /** manifests.name this operation created (known once it runs). */
    manifest: text('manifest'),
    /** The deployment's current manifest when the operation started (restored if it is interrupted). */
    previousManifest: text('previous_manifest'),
    /**
     * The replica that accepted it and runs it (docs/manager.md "Several replicas"); with
     * `heartbeatAt` (the database's clock, renewed while it is pending or running there), how another
     * replica knows it died. Unused on SQLite, where one process serves.
     */
    replica: text('replica'),
    heartbeatAt: integer('heartbeat_at'),
    /** JSON: [{resource, message}] once finished. */
    errors: text('errors').notNull().default('[]'),
    error: text('error'),
    createdAt: integer('created_at').notNull(),
    startedAt: integer('started_at'),
    finishedAt: integer('finished_at'),
  },
  (t) => [index('operations_deployment').on(t.deployment, t.createdAt)],
);

/** Tokens of the Deployment Manager service, stored as sha256 hashes, scoped to clusters/namespaces. */
export const managerTokens = sqliteTable('manager_tokens', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  hash: text('hash').notNull().unique(),
  /** 'deploy' (change and read) | 'read' (read only). */
  role: text('role').notNull(),
  /** JSON: ["cluster/namespace" | "cluster/*" | "*"], where the token applies. */
  scopes: text('scopes').notNull(),
  createdAt: integer('created_at').notNull(),
});

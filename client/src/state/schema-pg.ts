/**
 * The deployments database on PostgreSQL (docs/manager.md, "Several replicas"): the tables of
 * schema.ts with the same names and columns, in PostgreSQL's types (milliseconds since the epoch
 * as `bigint` read as numbers, identity ids), held in the registry server's PostgreSQL database
 * when the server runs on it. server/src/store/postgres/schema.ts re-exports them, so drizzle-kit
 * generates their migration into migrations/postgres/ with the server's own tables. The store code
 * (deployments-store.ts, operations-store.ts) is the same for both dialects.
 *
 * `deployment_leases` has no SQLite twin: on SQLite one process serves the manager and its queue
 * serialises; across replicas a deployment is changed only by the replica holding its lease
 * (deployment-lease.ts).
 */
import { bigint, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';

const millis = (name: string) => bigint(name, { mode: 'number' });
const id = () => integer('id').primaryKey().generatedByDefaultAsIdentity();

export const deployments = pgTable('deployments', {
  id: id(),
  name: text('name').notNull().unique(),
  state: text('state').notNull(),
  currentManifest: text('current_manifest'),
  lastGoodManifest: text('last_good_manifest'),
  lockOwner: text('lock_owner'),
  lockedAt: millis('locked_at'),
  createdAt: millis('created_at').notNull(),
  updatedAt: millis('updated_at').notNull(),
});

export const manifests = pgTable(
  'manifests',
  {
    id: id(),
    name: text('name').notNull().unique(),
    deployment: text('deployment').notNull(),
    seq: integer('seq').notNull(),
    action: text('action').notNull(),
    inputConfig: text('input_config').notNull(),
    expandedConfig: text('expanded_config').notNull(),
    layout: text('layout').notNull(),
    references: text('references').notNull(),
    resolvedValues: text('resolved_values').notNull().default('[]'),
    target: text('target').notNull(),
    status: text('status').notNull(),
    inventory: text('inventory').notNull().default('[]'),
    error: text('error'),
    createdAt: millis('created_at').notNull(),
    finishedAt: millis('finished_at'),
  },
  (t) => [uniqueIndex('manifests_deployment_seq').on(t.deployment, t.seq)],
);

export const manifestResources = pgTable(
  'manifest_resources',
  {
    id: id(),
    manifest: text('manifest').notNull(),
    action: text('action').notNull(),
    name: text('name').notNull(),
    type: text('type').notNull(),
    apiVersion: text('api_version').notNull(),
    kind: text('kind').notNull(),
    namespace: text('namespace').notNull(),
    objectName: text('object_name').notNull(),
    level: integer('level').notNull(),
    outcome: text('outcome').notNull(),
    message: text('message'),
    resourceVersion: text('resource_version'),
  },
  (t) => [index('manifest_resources_manifest').on(t.manifest)],
);

export const typeInstances = pgTable(
  'type_instances',
  {
    id: id(),
    deployment: text('deployment').notNull(),
    manifest: text('manifest').notNull(),
    name: text('name').notNull(),
    type: text('type').notNull(),
    path: text('path').notNull(),
  },
  (t) => [index('type_instances_type').on(t.type), index('type_instances_deployment').on(t.deployment)],
);

export const operations = pgTable(
  'operations',
  {
    id: text('id').primaryKey(),
    deployment: text('deployment').notNull(),
    action: text('action').notNull(),
    status: text('status').notNull(),
    actor: text('actor').notNull(),
    cluster: text('cluster').notNull(),
    namespace: text('namespace').notNull(),
    manifest: text('manifest'),
    previousManifest: text('previous_manifest'),
    replica: text('replica'),
    heartbeatAt: millis('heartbeat_at'),
    errors: text('errors').notNull().default('[]'),
    error: text('error'),
    createdAt: millis('created_at').notNull(),
    startedAt: millis('started_at'),
    finishedAt: millis('finished_at'),
  },
  (t) => [index('operations_deployment').on(t.deployment, t.createdAt)],
);

export const managerTokens = pgTable('manager_tokens', {
  id: id(),
  hash: text('hash').notNull().unique(),
  role: text('role').notNull(),
  scopes: text('scopes').notNull(),
  createdAt: millis('created_at').notNull(),
});

/**
 * The deployment lock across replicas: the replica changing a deployment holds its row until
 * `expires_at` (database clock, ms), renewed by heartbeats; a replica killed mid-apply stops
 * renewing, and the next replica to take the lease marks its operation interrupted.
 */
export const deploymentLeases = pgTable('deployment_leases', {
  deployment: text('deployment').primaryKey(),
  holder: text('holder').notNull(),
  /** The operation the holder runs. */
  operation: text('operation').notNull(),
  expiresAt: millis('expires_at').notNull(),
});

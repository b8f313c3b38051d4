/**
 * Queries over the deployments database, asynchronous, the same code on SQLite (`dm deploy`, the
 * single-machine server) and PostgreSQL (the manager's replicas; database.ts). Every change is one
 * transaction, so a crash leaves each manifest saying exactly what had been applied.
 */
import { and, asc, desc, eq } from 'drizzle-orm';
import type { KubeObject } from '../deploy/objects.js';
import { DmError } from '../error.js';
import { nearest } from '../nearest.js';
import type { ManifestDocuments, ResourceView } from '../wire/manager-api.js';
import type { StateDatabase, StateDb } from './database.js';
import type { deployments, manifestResources, manifests, typeInstances } from './schema.js';

export type { ManifestDocuments } from '../wire/manager-api.js';

export type DeploymentRow = typeof deployments.$inferSelect;
export type ManifestRow = typeof manifests.$inferSelect;
export type ManifestResourceRow = typeof manifestResources.$inferSelect;
export type TypeInstanceRow = typeof typeInstances.$inferSelect;

/** An object that may be in the cluster for a deployment. */
export interface InventoryEntry extends Omit<KubeObject, 'body'> {
  level: number;
}

export interface NewManifest {
  deployment: string;
  action: 'create' | 'update' | 'delete' | 'rollback';
  inputConfig: unknown;
  expandedConfig: unknown;
  layout: unknown;
  references: unknown;
  target: unknown;
  resources: (InventoryEntry & { action: 'apply' | 'prune' })[];
  instances: { name: string; type: string; path: string }[];
  lockOwner: string;
  /** Whether `lockOwner`'s process is alive (a dead owner's lock is taken over). */
  isAlive: (owner: string) => boolean;
}

export interface OutcomeUpdate {
  action: 'apply' | 'prune';
  name: string;
  outcome: string;
  message?: string | undefined;
  resourceVersion?: string | undefined;
}

/**
 * A manifest's resource as commands and the manager's API show it: the row less its bookkeeping
 * (the manager API's shape, client/src/wire/manager-api.ts; docs/manager.md).
 */
export type ResourceOutcome = ResourceView;

export function resourceOutcome(r: ManifestResourceRow): ResourceOutcome {
  return {
    name: r.name,
    action: r.action,
    type: r.type,
    apiVersion: r.apiVersion,
    kind: r.kind,
    namespace: r.namespace,
    objectName: r.objectName,
    level: r.level,
    outcome: r.outcome,
    ...(r.message ? { message: r.message } : {}),
  };
}

/** The documents a manifest records (stored as JSON text), decoded. */
export function manifestDocuments(m: ManifestRow): ManifestDocuments {
  return {
    target: JSON.parse(m.target) as Record<string, unknown>,
    inputConfig: JSON.parse(m.inputConfig),
    expandedConfig: JSON.parse(m.expandedConfig),
    layout: JSON.parse(m.layout),
    references: JSON.parse(m.references),
    resolvedValues: JSON.parse(m.resolvedValues),
  };
}

/** Rows inserted per statement: well under either dialect's limit on bound parameters. */
const ROWS_PER_INSERT = 500;

export function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) out.push(rows.slice(i, i + ROWS_PER_INSERT));
  return out;
}

export class DeploymentStore {
  private readonly t: StateDatabase['tables'];

  constructor(
    readonly database: StateDatabase,
    private readonly clock: () => number = Date.now,
  ) {
    this.t = database.tables;
  }

  private tx<T>(fn: (db: StateDb) => Promise<T>): Promise<T> {
    return this.database.transaction(fn);
  }

  async getDeployment(name: string, db = this.database.db): Promise<DeploymentRow | undefined> {
    const { deployments } = this.t;
    return (await db.select().from(deployments).where(eq(deployments.name, name)).limit(1))[0];
  }

  /** DEPLOYMENT_NOT_FOUND for `name`, hinting the nearest existing name (`did you mean prod?`), else `hint`. */
  async notFound(name: string, hint?: string): Promise<DmError> {
    const { deployments } = this.t;
    const rows = await this.database.db.select({ name: deployments.name }).from(deployments).limit(10_000);
    const near = nearest(
      name,
      rows.map((r) => r.name),
    );
    return new DmError('DEPLOYMENT_NOT_FOUND', `deployment '${name}' does not exist`, {
      category: 'not-found',
      ...(near ? { hint: `did you mean ${near}?` } : hint ? { hint } : {}),
    });
  }

  async listDeployments(): Promise<DeploymentRow[]> {
    const { deployments } = this.t;
    return await this.database.db.select().from(deployments).orderBy(asc(deployments.name));
  }

  async listManifests(deployment: string): Promise<ManifestRow[]> {
    const { manifests } = this.t;
    return await this.database.db
      .select()
      .from(manifests)
      .where(eq(manifests.deployment, deployment))
      .orderBy(asc(manifests.seq));
  }

  async getManifest(name: string, db = this.database.db): Promise<ManifestRow | undefined> {
    const { manifests } = this.t;
    return (await db.select().from(manifests).where(eq(manifests.name, name)).limit(1))[0];
  }

  async manifestResources(manifest: string): Promise<ManifestResourceRow[]> {
    const { manifestResources } = this.t;
    return await this.database.db
      .select()
      .from(manifestResources)
      .where(eq(manifestResources.manifest, manifest))
      .orderBy(asc(manifestResources.id));
  }

  /** The inventory the deployment's latest manifest left (empty for a new deployment). */
  async inventory(deployment: string, db = this.database.db): Promise<InventoryEntry[]> {
    const { manifests } = this.t;
    const [latest] = await db
      .select()
      .from(manifests)
      .where(eq(manifests.deployment, deployment))
      .orderBy(desc(manifests.seq))
      .limit(1);
    const current = await this.getDeployment(deployment, db);
    if (!latest || !current) return [];
    return JSON.parse(latest.inventory) as InventoryEntry[];
  }

  /** The next manifest's name (used in object annotations before the manifest exists). */
  async nextManifestName(deployment: string, db = this.database.db): Promise<{ name: string; seq: number }> {
    const { manifests } = this.t;
    const [last] = await db
      .select({ seq: manifests.seq })
      .from(manifests)
      .where(eq(manifests.deployment, deployment))
      .orderBy(desc(manifests.seq))
      .limit(1);
    const seq = (last?.seq ?? 0) + 1;
    return { name: `${deployment}-${seq}`, seq };
  }

  /**
   * Creates the manifest and its resource rows, marks the deployment busy (refusing when another
   * live process holds it) and records the type instances, in one transaction.
   */
  beginManifest(m: NewManifest): Promise<ManifestRow> {
    const { deployments, manifests, manifestResources, typeInstances } = this.t;
    return this.tx(async (db) => {
      const now = this.clock();
      const existing = await this.getDeployment(m.deployment, db);
      if (existing?.lockOwner && existing.lockOwner !== m.lockOwner && m.isAlive(existing.lockOwner)) {
        throw new DmError(
          'DEPLOYMENT_BUSY',
          `deployment '${m.deployment}' is being changed by another dm process (${existing.lockOwner})`,
          { category: 'conflict', hint: 'wait for it to finish, then run the command again' },
        );
      }
      if (m.action === 'delete' && !existing) {
        throw new DmError('DEPLOYMENT_NOT_FOUND', `deployment '${m.deployment}' does not exist`, {
          category: 'not-found',
        });
      }
      const { name, seq } = await this.nextManifestName(m.deployment, db);
      const [manifest] = await db
        .insert(manifests)
        .values({
          name,
          deployment: m.deployment,
          seq,
          action: m.action,
          inputConfig: JSON.stringify(m.inputConfig),
          expandedConfig: JSON.stringify(m.expandedConfig),
          layout: JSON.stringify(m.layout),
          references: JSON.stringify(m.references),
          target: JSON.stringify(m.target),
          status: 'applying',
          inventory: JSON.stringify(await this.inventory(m.deployment, db)),
          createdAt: now,
        })
        .returning();
      for (const part of chunks(m.resources)) {
        await db.insert(manifestResources).values(
          part.map((r) => ({
            manifest: name,
            action: r.action,
            name: r.name,
            type: r.type,
            apiVersion: r.apiVersion,
            kind: r.kind,
            namespace: r.namespace,
            objectName: r.objectName,
            level: r.level,
            outcome: 'pending',
          })),
        );
      }
      const state = m.action === 'delete' ? 'deleting' : 'applying';
      if (existing) {
        await db
          .update(deployments)
          .set({ state, currentManifest: name, lockOwner: m.lockOwner, lockedAt: now, updatedAt: now })
          .where(eq(deployments.name, m.deployment));
      } else {
        await db.insert(deployments).values({
          name: m.deployment,
          state,
          currentManifest: name,
          lockOwner: m.lockOwner,
          lockedAt: now,
          createdAt: now,
          updatedAt: now,
        });
      }
      await db.delete(typeInstances).where(eq(typeInstances.deployment, m.deployment));
      for (const part of chunks(m.instances)) {
        await db.insert(typeInstances).values(
          part.map((i) => ({
            deployment: m.deployment,
            manifest: name,
            name: i.name,
            type: i.type,
            path: i.path,
          })),
        );
      }
      return manifest!;
    });
  }

  /** Records outcomes of some resources (one transaction). */
  recordOutcomes(manifest: string, updates: OutcomeUpdate[], inventory?: InventoryEntry[]): Promise<void> {
    const { manifests, manifestResources } = this.t;
    return this.tx(async (db) => {
      for (const u of updates) {
        await db
          .update(manifestResources)
          .set({
            outcome: u.outcome,
            message: u.message ?? null,
            ...(u.resourceVersion ? { resourceVersion: u.resourceVersion } : {}),
          })
          .where(
            and(
              eq(manifestResources.manifest, manifest),
              eq(manifestResources.action, u.action),
              eq(manifestResources.name, u.name),
            ),
          );
      }
      if (inventory) {
        await db
          .update(manifests)
          .set({ inventory: JSON.stringify(inventory) })
          .where(eq(manifests.name, manifest));
      }
    });
  }

  recordResolvedValues(manifest: string, values: unknown): Promise<void> {
    const { manifests } = this.t;
    return this.tx(async (db) => {
      await db
        .update(manifests)
        .set({ resolvedValues: JSON.stringify(values) })
        .where(eq(manifests.name, manifest));
    });
  }

  /**
   * Ends a manifest: its status, the deployment's state, and the lock released. A finished delete
   * removes the deployment and its type instances (the manifests stay in history).
   */
  finishManifest(manifest: string, status: 'applied' | 'failed', error?: string): Promise<void> {
    const { deployments, manifests, typeInstances } = this.t;
    return this.tx(async (db) => {
      const now = this.clock();
      const m = (await this.getManifest(manifest, db))!;
      await db
        .update(manifests)
        .set({ status, error: error ?? null, finishedAt: now })
        .where(eq(manifests.name, manifest));
      if (m.action === 'delete' && status === 'applied') {
        await db.delete(deployments).where(eq(deployments.name, m.deployment));
        await db.delete(typeInstances).where(eq(typeInstances.deployment, m.deployment));
        return;
      }
      await db
        .update(deployments)
        .set({
          state: status === 'applied' ? 'deployed' : 'failed',
          ...(status === 'applied' ? { lastGoodManifest: manifest } : {}),
          lockOwner: null,
          lockedAt: null,
          updatedAt: now,
        })
        .where(eq(deployments.name, m.deployment));
    });
  }

  /** Distinct types with their instance counts. */
  async listTypes(): Promise<{ type: string; instances: number }[]> {
    const rows = await this.database.db.select().from(this.t.typeInstances);
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
    return [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([type, instances]) => ({ type, instances }));
  }

  /** Instances of a type (`all`: every instance). */
  async listInstances(type: string): Promise<TypeInstanceRow[]> {
    const { typeInstances } = this.t;
    const q = this.database.db.select().from(typeInstances);
    const rows = type === 'all' ? await q : await q.where(eq(typeInstances.type, type));
    return rows.sort((a, b) => a.deployment.localeCompare(b.deployment) || a.id - b.id);
  }
}

/**
 * Queries over the deployments database. Every change is one transaction (better-sqlite3
 * `BEGIN IMMEDIATE`), so a crash leaves each manifest saying exactly what had been applied.
 */
import { and, asc, desc, eq } from 'drizzle-orm';
import type { KubeObject } from '../deploy/objects.js';
import { DmError } from '../error.js';
import type { StateDatabase } from './database.js';
import { deployments, manifestResources, manifests, typeInstances } from './schema.js';

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
  action: 'create' | 'update' | 'delete';
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

/** A manifest's resource as commands and the manager's API show it: the row less its bookkeeping. */
export interface ResourceOutcome extends InventoryEntry {
  action: string;
  outcome: string;
  message?: string;
}

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
export interface ManifestDocuments {
  target: Record<string, unknown>;
  inputConfig: unknown;
  expandedConfig: unknown;
  layout: unknown;
  references: unknown;
  resolvedValues: unknown;
}

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

export class DeploymentStore {
  constructor(
    readonly database: StateDatabase,
    private readonly clock: () => number = Date.now,
  ) {}

  private tx<T>(fn: () => T): T {
    return this.database.sqlite.transaction(fn).immediate();
  }

  getDeployment(name: string): DeploymentRow | undefined {
    return this.database.db.select().from(deployments).where(eq(deployments.name, name)).get();
  }

  listDeployments(): DeploymentRow[] {
    return this.database.db.select().from(deployments).orderBy(asc(deployments.name)).all();
  }

  listManifests(deployment: string): ManifestRow[] {
    return this.database.db
      .select()
      .from(manifests)
      .where(eq(manifests.deployment, deployment))
      .orderBy(asc(manifests.seq))
      .all();
  }

  getManifest(name: string): ManifestRow | undefined {
    return this.database.db.select().from(manifests).where(eq(manifests.name, name)).get();
  }

  manifestResources(manifest: string): ManifestResourceRow[] {
    return this.database.db
      .select()
      .from(manifestResources)
      .where(eq(manifestResources.manifest, manifest))
      .orderBy(asc(manifestResources.id))
      .all();
  }

  /** The inventory the deployment's latest manifest left (empty for a new deployment). */
  inventory(deployment: string): InventoryEntry[] {
    const latest = this.database.db
      .select()
      .from(manifests)
      .where(eq(manifests.deployment, deployment))
      .orderBy(desc(manifests.seq))
      .get();
    const current = this.getDeployment(deployment);
    if (!latest || !current) return [];
    return JSON.parse(latest.inventory) as InventoryEntry[];
  }

  /** The next manifest's name (used in object annotations before the manifest exists). */
  nextManifestName(deployment: string): { name: string; seq: number } {
    const last = this.database.db
      .select({ seq: manifests.seq })
      .from(manifests)
      .where(eq(manifests.deployment, deployment))
      .orderBy(desc(manifests.seq))
      .get();
    const seq = (last?.seq ?? 0) + 1;
    return { name: `${deployment}-${seq}`, seq };
  }

  /**
   * Creates the manifest and its resource rows, marks the deployment busy (refusing when another
   * live process holds it) and records the type instances, in one transaction.
   */
  beginManifest(m: NewManifest): ManifestRow {
    return this.tx(() => {
      const now = this.clock();
      const existing = this.getDeployment(m.deployment);
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
      const { name, seq } = this.nextManifestName(m.deployment);
      const manifest = this.database.db
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
          inventory: JSON.stringify(this.inventory(m.deployment)),
          createdAt: now,
        })
        .returning()
        .get();
      for (const r of m.resources) {
        this.database.db
          .insert(manifestResources)
          .values({
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
          })
          .run();
      }
      const state = m.action === 'delete' ? 'deleting' : 'applying';
      if (existing) {
        this.database.db
          .update(deployments)
          .set({ state, currentManifest: name, lockOwner: m.lockOwner, lockedAt: now, updatedAt: now })
          .where(eq(deployments.name, m.deployment))
          .run();
      } else {
        this.database.db
          .insert(deployments)
          .values({
            name: m.deployment,
            state,
            currentManifest: name,
            lockOwner: m.lockOwner,
            lockedAt: now,
            createdAt: now,
            updatedAt: now,
          })
          .run();
      }
      this.database.db.delete(typeInstances).where(eq(typeInstances.deployment, m.deployment)).run();
      for (const i of m.instances) {
        this.database.db
          .insert(typeInstances)
          .values({ deployment: m.deployment, manifest: name, name: i.name, type: i.type, path: i.path })
          .run();
      }
      return manifest;
    });
  }

  /** Records outcomes of some resources (one transaction). */
  recordOutcomes(manifest: string, updates: OutcomeUpdate[], inventory?: InventoryEntry[]): void {
    this.tx(() => {
      for (const u of updates) {
        this.database.db
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
          )
          .run();
      }
      if (inventory) {
        this.database.db
          .update(manifests)
          .set({ inventory: JSON.stringify(inventory) })
          .where(eq(manifests.name, manifest))
          .run();
      }
    });
  }

  recordResolvedValues(manifest: string, values: unknown): void {
    this.tx(() => {
      this.database.db
        .update(manifests)
        .set({ resolvedValues: JSON.stringify(values) })
        .where(eq(manifests.name, manifest))
        .run();
    });
  }

  /**
   * Ends a manifest: its status, the deployment's state, and the lock released. A finished delete
   * removes the deployment and its type instances (the manifests stay in history).
   */
  finishManifest(manifest: string, status: 'applied' | 'failed', error?: string): void {
    this.tx(() => {
      const now = this.clock();
      const m = this.getManifest(manifest)!;
      this.database.db
        .update(manifests)
        .set({ status, error: error ?? null, finishedAt: now })
        .where(eq(manifests.name, manifest))
        .run();
      if (m.action === 'delete' && status === 'applied') {
        this.database.db.delete(deployments).where(eq(deployments.name, m.deployment)).run();
        this.database.db.delete(typeInstances).where(eq(typeInstances.deployment, m.deployment)).run();
        return;
      }
      this.database.db
        .update(deployments)
        .set({
          state: status === 'applied' ? 'deployed' : 'failed',
          ...(status === 'applied' ? { lastGoodManifest: manifest } : {}),
          lockOwner: null,
          lockedAt: null,
          updatedAt: now,
        })
        .where(eq(deployments.name, m.deployment))
        .run();
    });
  }

  /** Distinct types with their instance counts. */
  listTypes(): { type: string; instances: number }[] {
    const rows = this.database.db.select().from(typeInstances).all();
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
    return [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([type, instances]) => ({ type, instances }));
  }

  /** Instances of a type (`all`: every instance). */
  listInstances(type: string): TypeInstanceRow[] {
    const q = this.database.db.select().from(typeInstances);
    const rows = type === 'all' ? q.all() : q.where(eq(typeInstances.type, type)).all();
    return rows.sort((a, b) => a.deployment.localeCompare(b.deployment) || a.id - b.id);
  }
}

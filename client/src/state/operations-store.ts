/**
 * Operations and tokens of the Deployment Manager service (docs/manager.md), over the same
 * deployments database as `dm deploy` (schema.ts). An operation is one create, update or delete of
 * a deployment asked over HTTP: pending until its turn, running while `deployConfiguration` applies
 * it, then done or failed; a server that stopped mid-apply finds it running at start and marks it
 * interrupted, with the deployment's previous manifest current again (recoverInterrupted).
 */
import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, inArray } from 'drizzle-orm';
import { typeInstancesOf } from '../deploy/deploy.js';
import type { Layout } from '../deploy/model.js';
import type { StateDatabase } from './database.js';
import {
  deployments,
  managerTokens,
  manifestResources,
  manifests,
  operations,
  typeInstances,
} from './schema.js';

export type OperationRow = typeof operations.$inferSelect;
export type OperationStatus = 'pending' | 'running' | 'done' | 'failed' | 'interrupted';
export type ManagerTokenRow = typeof managerTokens.$inferSelect;

export interface NewOperation {
  deployment: string;
  action: 'create' | 'update' | 'delete';
  actor: string;
  cluster: string;
  namespace: string;
}

export const INTERRUPTED_MESSAGE = 'interrupted: the server stopped while this operation was running';

export class OperationStore {
  constructor(
    readonly database: StateDatabase,
    private readonly clock: () => number = Date.now,
  ) {}

  private tx<T>(fn: () => T): T {
    return this.database.sqlite.transaction(fn).immediate();
  }

  create(op: NewOperation): OperationRow {
    return this.database.db
      .insert(operations)
      .values({ id: `op-${randomUUID()}`, ...op, status: 'pending', createdAt: this.clock() })
      .returning()
      .get();
  }

  get(id: string): OperationRow | undefined {
    return this.database.db.select().from(operations).where(eq(operations.id, id)).get();
  }

  /** A deployment's operations, newest first. */
  listFor(deployment: string, limit = 100): OperationRow[] {
    return this.database.db
      .select()
      .from(operations)
      .where(eq(operations.deployment, deployment))
      .orderBy(desc(operations.createdAt), desc(operations.id))
      .limit(limit)
      .all();
  }

  /** The newest operation of a deployment: where it lives (cluster, namespace). */
  latestFor(deployment: string): OperationRow | undefined {
    return this.database.db
      .select()
      .from(operations)
      .where(eq(operations.deployment, deployment))
      .orderBy(desc(operations.createdAt), desc(operations.id))
      .get();
  }

  /** Where each deployment lives, from its newest operation (one query). */
  placements(): Map<string, { cluster: string; namespace: string }> {
    const rows = this.database.db
      .select({
        deployment: operations.deployment,
        cluster: operations.cluster,
        namespace: operations.namespace,
      })
      .from(operations)
      .orderBy(asc(operations.createdAt), asc(operations.id))
      .all();
    return new Map(rows.map((r) => [r.deployment, { cluster: r.cluster, namespace: r.namespace }]));
  }

  start(id: string, manifest: string, previousManifest: string | null): void {
    this.database.db
      .update(operations)
      .set({ status: 'running', manifest, previousManifest, startedAt: this.clock() })
      .where(eq(operations.id, id))
      .run();
  }

  finish(
    id: string,
    status: 'done' | 'failed',
    errors: { resource: string; message: string }[],
    error?: string,
  ): void {
    this.tx(() => {
      const op = this.get(id);
      // A run that failed before its manifest was written made none (the name goes to the next one).
      const made =
        op?.manifest &&
        this.database.db
          .select({ id: manifests.id })
          .from(manifests)
          .where(eq(manifests.name, op.manifest))
          .get();
      this.database.db
        .update(operations)
        .set({
          status,
          errors: JSON.stringify(errors),
          error: error ?? null,
          finishedAt: this.clock(),
          ...(made ? {} : { manifest: null }),
        })
        .where(eq(operations.id, id))
        .run();
    });
  }

  /**
   * At start: operations left pending or running by a server that stopped. A running one whose
   * manifest had not finished is marked interrupted, its manifest failed, and the deployment's
   * previous manifest (with its type instances) made current again, the lock released — so the
   * deployment can be applied again. Returns the operations it marked.
   */
  recoverInterrupted(): OperationRow[] {
    return this.tx(() => {
      const now = this.clock();
      const stale = this.database.db
        .select()
        .from(operations)
        .where(inArray(operations.status, ['pending', 'running']))
        .all();
      for (const op of stale) {
        const m = op.manifest
          ? this.database.db.select().from(manifests).where(eq(manifests.name, op.manifest)).get()
          : undefined;
        if (op.status === 'running' && m && m.status !== 'applying') {
          // The manifest finished; only the operation's own end was lost.
          this.database.db
            .update(operations)
            .set({ status: m.status === 'applied' ? 'done' : 'failed', finishedAt: m.finishedAt ?? now })
            .where(eq(operations.id, op.id))
            .run();
          continue;
        }
        this.database.db
          .update(operations)
          .set({ status: 'interrupted', error: INTERRUPTED_MESSAGE, finishedAt: now })
          .where(eq(operations.id, op.id))
          .run();
        if (!m) continue;
        this.database.db
          .update(manifests)
          .set({ status: 'failed', error: INTERRUPTED_MESSAGE, finishedAt: now })
          .where(eq(manifests.name, m.name))
          .run();
        this.database.db
          .update(manifestResources)
          .set({ outcome: 'not-attempted' })
          .where(and(eq(manifestResources.manifest, m.name), eq(manifestResources.outcome, 'pending')))
          .run();
        const previous = op.previousManifest
          ? this.database.db.select().from(manifests).where(eq(manifests.name, op.previousManifest)).get()
          : undefined;
        this.database.db
          .update(deployments)
          .set({
            state: 'failed',
            currentManifest: previous?.name ?? null,
            lockOwner: null,
            lockedAt: null,
            updatedAt: now,
          })
          .where(eq(deployments.name, op.deployment))
          .run();
        this.database.db.delete(typeInstances).where(eq(typeInstances.deployment, op.deployment)).run();
        if (previous && previous.action !== 'delete') {
          for (const i of typeInstancesOf(JSON.parse(previous.layout) as Layout)) {
            this.database.db
              .insert(typeInstances)
              .values({ deployment: op.deployment, manifest: previous.name, ...i })
              .run();
          }
        }
      }
      return stale.map((op) => this.get(op.id)!);
    });
  }

  addToken(hash: string, role: 'deploy' | 'read', scopes: string[]): ManagerTokenRow {
    return this.database.db
      .insert(managerTokens)
      .values({ hash, role, scopes: JSON.stringify(scopes), createdAt: this.clock() })
      .returning()
      .get();
  }

  tokenByHash(hash: string): ManagerTokenRow | undefined {
    return this.database.db.select().from(managerTokens).where(eq(managerTokens.hash, hash)).get();
  }
}

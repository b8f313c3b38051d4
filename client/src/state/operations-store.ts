/**
 * Operations and tokens of the Deployment Manager service (docs/manager.md), over the same
 * deployments database as `dm deploy` (schema.ts; on PostgreSQL schema-pg.ts, the same code). An operation is one create, update or delete of
 * a deployment asked over HTTP: pending until its turn, running while `deployConfiguration` applies
 * it, then done or failed; a server that stopped mid-apply finds it running at start and marks it
 * interrupted, with the deployment's previous manifest current again (recoverInterrupted).
 */
import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, inArray } from 'drizzle-orm';
import { typeInstancesOf } from '../deploy/deploy.js';
import type { Layout } from '../deploy/model.js';
import type { StateDatabase } from './database.js';
import { chunks } from './deployments-store.js';
import type { managerTokens, operations } from './schema.js';

export type OperationRow = typeof operations.$inferSelect;
export type OperationStatus = 'pending' | 'running' | 'done' | 'failed' | 'interrupted';
export type ManagerTokenRow = typeof managerTokens.$inferSelect;

export interface NewOperation {
  /** The replica accepting it (several replicas on PostgreSQL). */
  replica?: string | undefined;
  deployment: string;
  action: 'create' | 'update' | 'delete' | 'rollback';
  actor: string;
  cluster: string;
  namespace: string;
}

export const INTERRUPTED_MESSAGE =
  'interrupted: the server that accepted this operation stopped before it finished';

export class OperationStore {
  private readonly t: StateDatabase['tables'];

  constructor(
    readonly database: StateDatabase,
    private readonly clock: () => number = Date.now,
  ) {
    this.t = database.tables;
  }

  // Writes go through transactions even when single: on SQLite they queue behind an open one.
  create(op: NewOperation): Promise<OperationRow> {
    return this.database.transaction(async (db) => {
      const [row] = await db
        .insert(this.t.operations)
        .values({ id: `op-${randomUUID()}`, ...op, status: 'pending', createdAt: this.clock() })
        .returning();
      return row!;
    });
  }

  async get(id: string, db = this.database.db): Promise<OperationRow | undefined> {
    const { operations } = this.t;
    return (await db.select().from(operations).where(eq(operations.id, id)).limit(1))[0];
  }

  /** A deployment's operations, newest first. */
  async listFor(deployment: string, limit = 100): Promise<OperationRow[]> {
    const { operations } = this.t;
    return await this.database.db
      .select()
      .from(operations)
      .where(eq(operations.deployment, deployment))
      .orderBy(desc(operations.createdAt), desc(operations.id))
      .limit(limit);
  }

  /** The newest operation of a deployment: where it lives (cluster, namespace). */
  async latestFor(deployment: string): Promise<OperationRow | undefined> {
    return (await this.listFor(deployment, 1))[0];
  }

  /** Where each deployment lives, from its newest operation (one query). */
  async placements(): Promise<Map<string, { cluster: string; namespace: string }>> {
    const { operations } = this.t;
    const rows = await this.database.db
      .select({
        deployment: operations.deployment,
        cluster: operations.cluster,
        namespace: operations.namespace,
      })
      .from(operations)
      .orderBy(asc(operations.createdAt), asc(operations.id));
    return new Map(rows.map((r) => [r.deployment, { cluster: r.cluster, namespace: r.namespace }]));
  }

  /** The operations of a deployment not yet finished, oldest first (its queue). */
  async unfinished(deployment: string): Promise<OperationRow[]> {
    const { operations } = this.t;
    return await this.database.db
      .select()
      .from(operations)
      .where(and(eq(operations.deployment, deployment), inArray(operations.status, ['pending', 'running'])))
      .orderBy(asc(operations.createdAt), asc(operations.id));
  }

  start(id: string, manifest: string, previousManifest: string | null): Promise<void> {
    const { operations } = this.t;
    return this.database.transaction(async (db) => {
      await db
        .update(operations)
        .set({ status: 'running', manifest, previousManifest, startedAt: this.clock() })
        .where(eq(operations.id, id));
    });
  }

  finish(
    id: string,
    status: 'done' | 'failed',
    errors: { resource: string; message: string }[],
    error?: string,
  ): Promise<void> {
    const { manifests, operations } = this.t;
    return this.database.transaction(async (db) => {
      const op = await this.get(id, db);
      // A run that failed before its manifest was written made none (the name goes to the next one).
      const made =
        op?.manifest &&
        (
          await db
            .select({ id: manifests.id })
            .from(manifests)
            .where(eq(manifests.name, op.manifest))
            .limit(1)
        ).length > 0;
      await db
        .update(operations)
        .set({
          status,
          errors: JSON.stringify(errors),
          error: error ?? null,
          finishedAt: this.clock(),
          ...(made ? {} : { manifest: null }),
        })
        .where(eq(operations.id, id));
    });
  }

  /**
   * Operations left pending or running by a server that stopped (at start, on SQLite). With a
   * `deployment` (PostgreSQL, under its lease: docs/manager.md "Several replicas"), only its
   * operations left running by a replica whose lease expired; pending ones wait on live replicas.
   * A running one whose manifest had not
   * finished is marked interrupted, its manifest failed, and the deployment's previous manifest
   * (with its type instances) made current again, the lock released — so the deployment can be
   * applied again. Returns the operations it marked.
   */
  recoverInterrupted(deployment?: string): Promise<OperationRow[]> {
    const { deployments, manifestResources, manifests, operations, typeInstances } = this.t;
    return this.database.transaction(async (db) => {
      const now = this.clock();
      const stale = await db
        .select()
        .from(operations)
        .where(
          deployment === undefined
            ? inArray(operations.status, ['pending', 'running'])
            : and(eq(operations.status, 'running'), eq(operations.deployment, deployment)),
        )
        .orderBy(asc(operations.createdAt), asc(operations.id));
      for (const op of stale) {
        const m = op.manifest
          ? (await db.select().from(manifests).where(eq(manifests.name, op.manifest)).limit(1))[0]
          : undefined;
        if (op.status === 'running' && m && m.status !== 'applying') {
          // The manifest finished; only the operation's own end was lost.
          await db
            .update(operations)
            .set({ status: m.status === 'applied' ? 'done' : 'failed', finishedAt: m.finishedAt ?? now })
            .where(eq(operations.id, op.id));
          continue;
        }
        await db
          .update(operations)
          .set({ status: 'interrupted', error: INTERRUPTED_MESSAGE, finishedAt: now })
          .where(eq(operations.id, op.id));
        if (!m) continue;
        await db
          .update(manifests)
          .set({ status: 'failed', error: INTERRUPTED_MESSAGE, finishedAt: now })
          .where(eq(manifests.name, m.name));
        await db
          .update(manifestResources)
          .set({ outcome: 'not-attempted' })
          .where(and(eq(manifestResources.manifest, m.name), eq(manifestResources.outcome, 'pending')));
        const previous = op.previousManifest
          ? (await db.select().from(manifests).where(eq(manifests.name, op.previousManifest)).limit(1))[0]
          : undefined;
        await db
          .update(deployments)
          .set({
            state: 'failed',
            currentManifest: previous?.name ?? null,
            lockOwner: null,
            lockedAt: null,
            updatedAt: now,
          })
          .where(eq(deployments.name, op.deployment));
        await db.delete(typeInstances).where(eq(typeInstances.deployment, op.deployment));
        if (previous && previous.action !== 'delete') {
          const instances = typeInstancesOf(JSON.parse(previous.layout) as Layout);
          for (const part of chunks(instances)) {
            await db
              .insert(typeInstances)
              .values(part.map((i) => ({ deployment: op.deployment, manifest: previous.name, ...i })));
          }
        }
      }
      const out: OperationRow[] = [];
      for (const op of stale) out.push((await this.get(op.id, db))!);
      return out;
    });
  }

  /** Marks operations still pending interrupted (their replica died before running them). */
  interruptPending(ids: readonly string[]): Promise<OperationRow[]> {
    const { operations } = this.t;
    return this.database.transaction(async (db) => {
      if (ids.length === 0) return [];
      return await db
        .update(operations)
        .set({ status: 'interrupted', error: INTERRUPTED_MESSAGE, finishedAt: this.clock() })
        .where(and(inArray(operations.id, [...ids]), eq(operations.status, 'pending')))
        .returning();
    });
  }

  addToken(hash: string, role: 'deploy' | 'read', scopes: string[]): Promise<ManagerTokenRow> {
    return this.database.transaction(async (db) => {
      const [row] = await db
        .insert(this.t.managerTokens)
        .values({ hash, role, scopes: JSON.stringify(scopes), createdAt: this.clock() })
        .returning();
      return row!;
    });
  }

  async tokenByHash(hash: string): Promise<ManagerTokenRow | undefined> {
    const { managerTokens } = this.t;
    return (
      await this.database.db.select().from(managerTokens).where(eq(managerTokens.hash, hash)).limit(1)
    )[0];
  }
}

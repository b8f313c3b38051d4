/**
 * The mappings from the deployments database to the Deployment Manager API's JSON shapes
 * (docs/manager.md), which are declared once in client/src/wire/manager-api.ts (re-exported here). They follow DM's model: a deployment (name, state, latest manifest),
 * a manifest (inputConfig, expandedConfig, layout), a type instance (name, type, deployment,
 * manifest, path), plus dm's operations.
 */

import type { OperationRow } from '../../../client/src/state/index.js';
import {
  type DeploymentRow,
  type DeploymentStore,
  type ManifestResourceRow,
  type ManifestRow,
  manifestDocuments,
  resourceOutcome,
} from '../../../client/src/state/index.js';
import type {
  DeploymentSummary,
  DeploymentView,
  LevelProgress,
  ManifestSummary,
  ManifestView,
  OperationView,
} from '../../../client/src/wire/manager-api.js';

export type * from '../../../client/src/wire/manager-api.js';

const iso = (ms: number) => new Date(ms).toISOString();

export const resourceView = resourceOutcome;

export function deploymentSummary(
  d: DeploymentRow,
  where: { cluster: string; namespace: string },
): DeploymentSummary {
  return {
    name: d.name,
    state: d.state,
    latestManifest: d.currentManifest,
    cluster: where.cluster,
    namespace: where.namespace,
    updatedAt: iso(d.updatedAt),
  };
}

export async function deploymentView(
  d: DeploymentRow,
  where: { cluster: string; namespace: string },
  store: DeploymentStore,
): Promise<DeploymentView> {
  return {
    ...deploymentSummary(d, where),
    lastGoodManifest: d.lastGoodManifest,
    createdAt: iso(d.createdAt),
    manifests: (await store.listManifests(d.name)).map((m) => m.name),
    resources: d.currentManifest ? (await store.manifestResources(d.currentManifest)).map(resourceView) : [],
  };
}

export function manifestSummary(m: ManifestRow): ManifestSummary {
  return {
    name: m.name,
    deployment: m.deployment,
    action: m.action,
    status: m.status,
    createdAt: iso(m.createdAt),
  };
}

/** A manifest in full; the server's kubeconfig path is replaced by the cluster's name. */
export async function manifestView(
  m: ManifestRow,
  cluster: string,
  store: DeploymentStore,
): Promise<ManifestView> {
  const {
    target: { kubeconfig: _path, ...target },
    ...documents
  } = manifestDocuments(m);
  return {
    ...manifestSummary(m),
    ...(m.error ? { error: m.error } : {}),
    ...(m.finishedAt ? { finishedAt: iso(m.finishedAt) } : {}),
    target: { cluster, ...target },
    ...documents,
    resources: (await store.manifestResources(m.name)).map(resourceView),
  };
}

const DONE = new Set(['applied', 'pruned']);
const FAILED = new Set(['failed', 'prune-failed', 'not-attempted']);

/** Progress per dependency level, from the manifest's resource rows as they are recorded. */
export function progressOf(resources: readonly ManifestResourceRow[]): LevelProgress[] {
  const levels = new Map<string, LevelProgress>();
  for (const r of resources) {
    const action = r.action as 'apply' | 'prune';
    const key = `${action}:${r.level}`;
    const p = levels.get(key) ?? { action, level: r.level, total: 0, done: 0, failed: 0, pending: 0 };
    p.total++;
    if (DONE.has(r.outcome)) p.done++;
    else if (FAILED.has(r.outcome)) p.failed++;
    else p.pending++;
    levels.set(key, p);
  }
  // Applies in level order, then prunes in reverse level order: the order they run.
  return [...levels.values()].sort((a, b) =>
    a.action !== b.action
      ? a.action === 'apply'
        ? -1
        : 1
      : a.action === 'apply'
        ? a.level - b.level
        : b.level - a.level,
  );
}

export async function operationView(op: OperationRow, store: DeploymentStore): Promise<OperationView> {
  const manifest = op.manifest && (await store.getManifest(op.manifest)) ? op.manifest : null;
  return {
    id: op.id,
    deployment: op.deployment,
    action: op.action,
    status: op.status,
    actor: op.actor,
    cluster: op.cluster,
    namespace: op.namespace,
    manifest,
    createdAt: iso(op.createdAt),
    startedAt: op.startedAt ? iso(op.startedAt) : null,
    finishedAt: op.finishedAt ? iso(op.finishedAt) : null,
    progress: manifest ? progressOf(await store.manifestResources(manifest)) : [],
    errors: JSON.parse(op.errors) as { resource: string; message: string }[],
    ...(op.error ? { error: op.error } : {}),
  };
}

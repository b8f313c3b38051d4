/**
 * `dm rollback` and `dm history` (docs/deployments.md "Rollback and history"): a rollback applies a
 * stored manifest's expanded configuration again, through the one deploy path, as a new manifest
 * (action `rollback`) whose input records which manifest it restored; what the newer manifests
 * added is pruned from the inventory as any update prunes. History lists every manifest with its
 * time, actor, status and counts, as `helm history`.
 */
import { DmError } from '../error.js';
import { type DeploymentStore, type ManifestRow, manifestDocuments } from '../state/deployments-store.js';
import {
  type DeployOptions,
  type DeployResult,
  type DryRunResult,
  deployConfiguration,
  planDeployment,
} from './deploy.js';
import { Kubectl } from './kubectl.js';
import type { DeploymentInput, ExpandedConfig, InputConfig, Layout, ResolvedReference } from './model.js';

export type RollbackOptions = Omit<DeployOptions, 'input'> & {
  /** The manifest to restore (name or sequence number); default: the applied one before the current. */
  to?: string | undefined;
};

/** The manifest to restore and the deployment input it holds (its namespace as the default). */
export async function rollbackInput(
  store: DeploymentStore,
  name: string,
  to: string | undefined,
): Promise<{ input: DeploymentInput; restored: ManifestRow; namespace: string | undefined }> {
  const d = await store.getDeployment(name);
  if (!d) throw await store.notFound(name);
  const all = await store.listManifests(name);
  const current = all.find((m) => m.name === d.currentManifest);
  let target: ManifestRow | undefined;
  if (to !== undefined) {
    target = all.find((m) => m.name === to || String(m.seq) === to);
    if (!target) {
      throw new DmError('MANIFEST_NOT_FOUND', `deployment '${name}' has no manifest '${to}'`, {
        category: 'not-found',
        hint: `have: ${all.map((m) => m.name).join(', ')}`,
      });
    }
  } else {
    target = [...all]
      .reverse()
      .find((m) => m.seq < (current?.seq ?? 0) && m.status === 'applied' && m.action !== 'delete');
    if (!target) {
      throw new DmError(
        'MANIFEST_NOT_FOUND',
        `deployment '${name}' has no applied manifest before ${current?.name ?? 'its current one'} to roll back to`,
        { category: 'not-found', hint: `dm history ${name} lists its manifests` },
      );
    }
  }
  const docs = manifestDocuments(target);
  const config = docs.expandedConfig as ExpandedConfig;
  if (target.action === 'delete' || (config.resources ?? []).length === 0) {
    throw new DmError(
      'NOTHING_TO_DEPLOY',
      `manifest ${target.name} holds no resources: there is nothing to restore`,
      {
        hint: `dm history ${name} lists its manifests`,
      },
    );
  }
  const { restoredFrom: _, ...given } = docs.inputConfig as InputConfig;
  return {
    input: {
      inputConfig: { ...given, restoredFrom: target.name },
      config,
      layout: docs.layout as Layout,
      references: docs.references as ResolvedReference[],
    },
    restored: target,
    namespace: typeof docs.target.namespace === 'string' ? docs.target.namespace : undefined,
  };
}

/** kubectl with the restored manifest's namespace as the default for objects that name none. */
function kubectlFor(kubectl: Kubectl, namespace: string | undefined): Kubectl {
  return namespace === undefined ? kubectl : new Kubectl({ ...kubectl.options, namespace });
}

/** Applies a stored manifest again as a new `rollback` manifest. */
export async function rollbackDeployment(
  options: RollbackOptions,
): Promise<DeployResult & { restoredFrom: string }> {
  const { input, restored, namespace } = await rollbackInput(options.store, options.name, options.to);
  const result = await deployConfiguration(
    { ...options, input, kubectl: kubectlFor(options.kubectl, namespace) },
    'rollback',
  );
  return { ...result, restoredFrom: restored.name };
}

/** What a rollback would do (`dm rollback --dry-run`), as `dm deploy --dry-run` says it. */
export async function planRollback(
  options: RollbackOptions,
): Promise<DryRunResult & { restoredFrom: string }> {
  const { input, restored, namespace } = await rollbackInput(options.store, options.name, options.to);
  const plan = await planDeployment({
    ...options,
    input,
    kubectl: kubectlFor(options.kubectl, namespace),
    pruneAll: true,
  });
  return { ...plan, restoredFrom: restored.name };
}

/** One row of `dm history`. */
export interface HistoryEntry {
  revision: number;
  manifest: string;
  time: string;
  actor: string;
  action: string;
  status: string;
  /** The manifest a rollback restored. */
  restoredFrom?: string;
  applied: number;
  pruned: number;
  failed: number;
  error?: string;
}

/** Every manifest of a deployment, oldest first, with what it changed (counts). */
export async function deploymentHistory(store: DeploymentStore, name: string): Promise<HistoryEntry[]> {
  const all = await store.listManifests(name);
  if (all.length === 0) throw await store.notFound(name);
  const out: HistoryEntry[] = [];
  for (const m of all) {
    const docs = manifestDocuments(m);
    const rows = await store.manifestResources(m.name);
    const restoredFrom = (docs.inputConfig as InputConfig).restoredFrom;
    out.push({
      revision: m.seq,
      manifest: m.name,
      time: new Date(m.createdAt).toISOString(),
      actor: typeof docs.target.actor === 'string' ? docs.target.actor : '-',
      action: m.action,
      status: m.status,
      ...(restoredFrom ? { restoredFrom } : {}),
      applied: rows.filter((r) => r.action === 'apply' && r.outcome === 'applied').length,
      pruned: rows.filter((r) => r.action === 'prune' && r.outcome === 'pruned').length,
      failed: rows.filter((r) => r.outcome === 'failed' || r.outcome === 'prune-failed').length,
      ...(m.error ? { error: m.error } : {}),
    });
  }
  return out;
}

/**
 * Deployments (docs/deployments.md "Update, prune, delete"): `deployConfiguration` creates or updates a deployment
 * from an expanded configuration — a new manifest, apply level by level, then prune what left it in
 * reverse dependency order; `deleteDeployment` updates to an empty manifest, then removes the
 * deployment (its manifests stay). Everything is recorded as it happens.
 */

import { hostname, userInfo } from 'node:os';
import { formatYamlDocuments } from '../document/yaml.js';
import { DmError } from '../error.js';
import type { DeploymentStore, InventoryEntry } from '../state/deployments-store.js';
import { applyObjects, getLive, type PlannedObject, pruneObjects, type ResourceResult } from './apply.js';
import { ANNOTATION_MANIFEST, comparable, fieldChanges, formatChange } from './fields.js';
import {
  type ClusterTarget,
  clusterRefusal,
  isUnreachable,
  type Kubectl,
  kubectlSays,
  readTarget,
  splitErrors,
  unreachableMessage,
} from './kubectl.js';
import type { DeploymentInput, Layout, LayoutEntry, Primitive } from './model.js';
import { type KubeObject, kubectlName, objectKey, type ServedKind, toObjects } from './objects.js';
import { planLevels, substituteReferences, valueAt } from './plan.js';

export const LABEL_DEPLOYMENT = 'dm.io/deployment';
export { ANNOTATION_MANIFEST, type ClusterTarget, readTarget };
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';

export interface DeployOptions {
  name: string;
  input: DeploymentInput;
  store: DeploymentStore;
  kubectl: Kubectl;
  dryRun?: boolean;
  wait?: boolean;
  timeoutSeconds?: number;
  /** Identifies this process in the deployment lock (default `pid@host`). */
  lockOwner?: string;
  /** Let a plan prune every object of the deployment, or more than half (`--prune-all`). */
  pruneAll?: boolean;
  /**
   * `false`: prune nothing; objects that left the configuration stay in the inventory for a later
   * deploy to prune (`dm blueprint apply` before its last layer, docs/blueprints.md).
   */
  prune?: boolean;
  /** Take fields another field manager changed back (`--force-conflicts`, server-side apply's). */
  forceConflicts?: boolean;
  /** Who asks, recorded in the manifest (`dm history`; default `user@host`; the service: the token's actor). */
  actor?: string;
}

export interface DeployResult {
  deployment: string;
  manifest: string;
  action: 'create' | 'update' | 'delete' | 'rollback';
  status: 'applied' | 'failed';
  resources: ResourceResult[];
  pruned: ResourceResult[];
  kubectlInvocations: number;
}

export interface DryRunChange {
  name: string;
  kind: string;
  namespace: string;
  objectName: string;
  /** Apply level: the `$(ref)` order, level 0 first (prunes go in reverse order). */
  level?: number;
  changes?: string[];
  message?: string;
}

export interface DryRunResult {
  deployment: string;
  dryRun: true;
  /** Whether the cluster was asked (server-side dry run) or the plan is against the last manifest. */
  server: boolean;
  /** Why no cluster was contacted, when `server` is false. */
  offlineReason?: string;
  create: DryRunChange[];
  update: DryRunChange[];
  unchanged: DryRunChange[];
  prune: DryRunChange[];
  failed: DryRunChange[];
  /** Objects the deployment has now (its inventory), against which `prune` is counted. */
  existing: number;
  /** Why a deploy of this plan would stop (too many prunes without `--prune-all`). */
  refused?: string;
}

const DEPLOYMENT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function validateDeploymentName(name: string): void {
  if (name.length > 53 || !DEPLOYMENT_NAME.test(name)) {
    throw new DmError(
      'INVALID_DEPLOYMENT_NAME',
      `deployment name '${name}' must be a DNS label of at most 53 characters (lower-case letters, digits, '-')`,
      { category: 'usage' },
    );
  }
}

/** Every layout entry as a type instance with its JSON path (`$.resources[0].resources[1]`). */
export function typeInstancesOf(layout: Layout): { name: string; type: string; path: string }[] {
  const out: { name: string; type: string; path: string }[] = [];
  const walk = (entries: LayoutEntry[], prefix: string) => {
    entries.forEach((e, i) => {
      const path = `${prefix}.resources[${i}]`;
      out.push({ name: e.name, type: e.type, path });
      if (e.resources) walk(e.resources, path);
    });
  };
  walk(layout.resources ?? [], '$');
  return out;
}

/**
 * Kinds the cluster serves (`kubectl api-resources`); undefined when nothing answered. A cluster
 * that answers but refuses the context's credentials or permissions is an error saying so
 * (docs/deployments.md "When the cluster says no").
 */
export async function servedKinds(kubectl: Kubectl): Promise<ServedKind[] | undefined> {
  const r = await kubectl.run(['api-resources']);
  if (r.code !== 0) {
    if (isUnreachable(r.stderr)) return undefined;
    const refused = await clusterRefusal(kubectl, r.stderr);
    if (refused) throw refused;
    throw new DmError('CLUSTER_DISCOVERY_FAILED', `kubectl api-resources failed: ${kubectlSays(r.stderr)}`, {
      category: 'unreachable',
    });
  }
  const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
  const header = lines.shift() ?? '';
  const col = (name: string) => header.indexOf(name);
  const [apiCol, nsCol, kindCol] = [col('APIVERSION'), col('NAMESPACED'), col('KIND')];
  return lines.map((l) => ({
    apiVersion: l.slice(apiCol, nsCol).trim(),
    namespaced: l.slice(nsCol, kindCol).trim() === 'true',
    kind: l.slice(kindCol).trim(),
  }));
}

function inventoryEntry(o: PlannedObject): InventoryEntry {
  return {
    name: o.name,
    type: o.type,
    apiVersion: o.apiVersion,
    kind: o.kind,
    namespace: o.namespace,
    objectName: o.objectName,
    level: o.level,
  };
}

function defaultActor(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {}
  return `${user}@${hostname()}`;
}

function defaultLockOwner(): string {
  return `${process.pid}@${hostname()}`;
}

/** Whether a lock owner `pid@host` on this host is still running. */
export function lockOwnerAlive(owner: string): boolean {
  const [pid, host] = owner.split('@');
  if (host !== hostname()) return true;
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface Prepared {
  objects: PlannedObject[];
  target: ClusterTarget;
  served: ServedKind[] | undefined;
  previous: InventoryEntry[];
  prunes: InventoryEntry[];
  manifestName: string;
  /** Why no cluster was asked (a dry run without one), else undefined. */
  offlineReason: string | undefined;
}

export async function prepare(options: DeployOptions, requireCluster: boolean): Promise<Prepared> {
  const { name, input, store, kubectl } = options;
  validateDeploymentName(name);
  const planned = planLevels(input.config.resources);
  // A dry run plans without a cluster when there is no usable kubeconfig (docs/deployments.md).
  let offlineReason: string | undefined;
  const target = await readTarget(kubectl).catch((error: unknown) => {
    if (requireCluster || !(error instanceof DmError) || error.code !== 'KUBECONFIG_INVALID') throw error;
    offlineReason = 'no usable kubeconfig context';
    return { context: undefined, namespace: kubectl.options.namespace ?? 'default', server: undefined };
  });
  const served = offlineReason === undefined ? await servedKinds(kubectl) : undefined;
  if (served === undefined && offlineReason === undefined) offlineReason = unreachableMessage(target);
  if (served === undefined && requireCluster) {
    throw new DmError('CLUSTER_UNREACHABLE', unreachableMessage(target), {
      category: 'unreachable',
      hint: 'check --kubeconfig/--context; --dry-run works offline',
    });
  }
  const manifestName = (await store.nextManifestName(name)).name;
  const objects = toObjects(
    planned.map((p) => p.primitive),
    {
      served,
      defaultNamespace: target.namespace,
      labels: { [LABEL_MANAGED_BY]: 'dm', [LABEL_DEPLOYMENT]: name },
      annotations: { [ANNOTATION_MANIFEST]: manifestName },
    },
  ).map((o, i) => ({ ...o, level: planned[i]!.level, references: planned[i]!.references }));
  const previous = (await store.getDeployment(name)) ? await store.inventory(name) : [];
  const keys = new Set(objects.map(objectKey));
  const prunes = options.prune === false ? [] : previous.filter((p) => !keys.has(objectKey(p)));
  return { objects, target, served, previous, prunes, manifestName, offlineReason };
}

/**
 * A deploy whose plan deletes every object of an existing deployment, or more than half of them,
 * stops unless `--prune-all` (API: `pruneAll`) says so (docs/deployments.md "Update, prune,
 * delete"): a wrong file or a wrong `--name` must not empty a deployment. Undefined when allowed.
 */
export function pruneRefusal(
  deployment: string,
  prunes: number,
  existing: number,
  pruneAll: boolean | undefined,
): string | undefined {
  if (pruneAll || existing === 0 || prunes * 2 <= existing) return undefined;
  const what =
    prunes === existing ? `every object (${prunes} of ${existing})` : `${prunes} of the ${existing} objects`;
  return `this deploy would prune ${what} of deployment '${deployment}'; check the configuration and --name, or pass --prune-all`;
}

function refusePrunes(name: string, p: Prepared, pruneAll: boolean | undefined): void {
  const refused = pruneRefusal(name, p.prunes.length, p.previous.length, pruneAll);
  if (refused) {
    throw new DmError('PRUNE_REFUSED', refused, {
      details: { prune: p.prunes.map((t) => t.name), existing: p.previous.length },
    });
  }
}

/**
 * The prune rule alone, for the Deployment Manager service to answer before it queues a change
 * (the change checks it again when it runs). A cluster that cannot be asked leaves it to the run.
 */
export async function checkPrunes(options: DeployOptions): Promise<void> {
  const p = await prepare(options, false);
  if (p.served !== undefined) refusePrunes(options.name, p, options.pruneAll);
}

/** Creates or updates a deployment (or, with an empty configuration and `delete`, empties it). */
export async function deployConfiguration(
  options: DeployOptions,
  action?: 'delete' | 'rollback',
): Promise<DeployResult> {
  const { name, input, store, kubectl } = options;
  const p = await prepare(options, true);
  // A delete empties the deployment; a rollback goes back to a state the user named.
  if (action === undefined) refusePrunes(name, p, options.pruneAll);
  const existing = await store.getDeployment(name);
  const manifestAction = action ?? (existing ? 'update' : 'create');
  const manifest = (
    await store.beginManifest({
      deployment: name,
      action: manifestAction,
      inputConfig: input.inputConfig,
      expandedConfig: input.config,
      layout: input.layout,
      references: input.references,
      target: {
        ...(kubectl.options.kubeconfig ? { kubeconfig: kubectl.options.kubeconfig } : {}),
        ...(p.target.context ? { context: kubectl.options.context ?? p.target.context } : {}),
        namespace: p.target.namespace,
        ...(p.target.server ? { server: p.target.server } : {}),
        actor: options.actor ?? defaultActor(),
      },
      resources: [
        ...p.objects.map((o) => ({ ...inventoryEntry(o), action: 'apply' as const })),
        ...p.prunes.map((o) => ({ ...o, action: 'prune' as const })),
      ],
      instances: manifestAction === 'delete' ? [] : typeInstancesOf(input.layout),
      lockOwner: options.lockOwner ?? defaultLockOwner(),
      isAlive: lockOwnerAlive,
    })
  ).name;

  // The inventory after each step: what may be in the cluster now.
  const applied = new Set<string>();
  const inventoryNow = (pruned: Set<string>) => {
    const entries = new Map<string, InventoryEntry>();
    for (const e of p.previous) if (!pruned.has(e.name)) entries.set(objectKey(e), e);
    for (const o of p.objects) if (applied.has(o.name)) entries.set(objectKey(o), inventoryEntry(o));
    return [...entries.values()];
  };
  // Progress arrives in callbacks; its records are written in order, and all before the end.
  let recording: Promise<void> = Promise.resolve();
  const record = (...args: Parameters<DeploymentStore['recordOutcomes']>) => {
    recording = recording.then(() => store.recordOutcomes(...args));
  };
  let error: string | undefined;
  let applyResults: ResourceResult[] = [];
  let pruneResults: ResourceResult[] = [];
  try {
    const result = await applyObjects(kubectl, p.objects, {
      ...(options.wait ? { wait: true } : {}),
      ...(options.timeoutSeconds ? { timeoutSeconds: options.timeoutSeconds } : {}),
      ...(options.forceConflicts ? { forceConflicts: true } : {}),
      onProgress: (results) => {
        for (const r of results) if (r.outcome === 'applied' || r.outcome === 'applying') applied.add(r.name);
        record(
          manifest,
          results.map((r) => ({ action: 'apply', ...r })),
          inventoryNow(new Set()),
        );
      },
    });
    applyResults = result.results;
    await recording;
    await store.recordResolvedValues(manifest, result.resolvedValues);
    if (result.ok) {
      const pruned = new Set<string>();
      pruneResults = await pruneObjects(kubectl, p.prunes, {
        ...(options.timeoutSeconds ? { timeoutSeconds: options.timeoutSeconds } : {}),
        onProgress: (results) => {
          for (const r of results) if (r.outcome === 'pruned') pruned.add(r.name);
          record(
            manifest,
            results.map((r) => ({ action: 'prune', ...r })),
            inventoryNow(pruned),
          );
        },
      });
    } else {
      pruneResults = p.prunes.map((t) => ({ name: t.name, outcome: 'not-attempted' }));
      record(
        manifest,
        pruneResults.map((r) => ({ action: 'prune', ...r })),
      );
    }
    await recording;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
    await recording.catch(() => {});
    await store.finishManifest(manifest, 'failed', error);
    throw e;
  }
  const ok =
    applyResults.every((r) => r.outcome === 'applied') && pruneResults.every((r) => r.outcome === 'pruned');
  const failures = [...applyResults, ...pruneResults].filter(
    (r) => r.outcome === 'failed' || r.outcome === 'prune-failed',
  );
  await store.finishManifest(
    manifest,
    ok ? 'applied' : 'failed',
    ok
      ? undefined
      : failures.map((f) => `${f.name}: ${f.message ?? f.outcome}`).join('\n') ||
          'not every resource was applied',
  );
  return {
    deployment: name,
    manifest,
    action: manifestAction,
    status: ok ? 'applied' : 'failed',
    resources: applyResults,
    pruned: pruneResults,
    kubectlInvocations: kubectl.invocations,
  };
}

/** Deletes a deployment: an empty manifest removes every object, then the deployment goes. */
export async function deleteDeployment(
  options: Omit<DeployOptions, 'input'> & { input?: undefined },
): Promise<DeployResult> {
  if (!(await options.store.getDeployment(options.name))) throw await options.store.notFound(options.name);
  const empty: DeploymentInput = {
    inputConfig: { config: 'resources: []\n', imports: [] },
    config: { resources: [] },
    layout: { resources: [] },
    references: [],
  };
  return deployConfiguration({ ...options, input: empty }, 'delete');
}

type Json = Record<string, unknown>;

/**
 * Server-side dry run of the objects whose references can be filled from live objects: what each
 * would become (defaults included), or why the server refuses it. `dm deploy --dry-run`, `dm diff`
 * and the service's plans all ask the cluster through here.
 */
export async function serverDryRun(
  kubectl: Kubectl,
  objects: PlannedObject[],
  served: ServedKind[],
  live: Map<string, Json>,
  forceConflicts?: boolean,
): Promise<{ wouldBe: Map<string, Json>; failed: Map<string, string> }> {
  const applyArgs = [
    'apply',
    '--server-side',
    '--field-manager=dm',
    ...(forceConflicts ? ['--force-conflicts'] : []),
    '--dry-run=server',
  ];
  // Server-side dry run of everything whose references can be filled from live objects.
  const byName = new Map(objects.map((o) => [o.name, o]));
  const names = new Set(byName.keys());
  const servedKeys = new Set(served.map((s) => `${s.apiVersion}/${s.kind}`));
  const checkable: PlannedObject[] = [];
  for (const o of objects) {
    let unresolved = false;
    const body = substituteReferences(
      o.body,
      (ref) => {
        const target = byName.get(ref.name)!;
        const v = valueAt(live.get(objectKey(target)), ref);
        if (v === undefined) unresolved = true;
        return v ?? ref.text;
      },
      names,
      o.name,
    ) as Json;
    if (!unresolved && servedKeys.has(`${o.apiVersion}/${o.kind}`)) checkable.push({ ...o, body });
  }
  // Server-side dry run: what each object would become (defaults included), or why it is refused.
  const failed = new Map<string, string>();
  const wouldBe = new Map<string, Json>();
  const dryRun = async (batch: PlannedObject[]) => {
    const args = [...applyArgs, '-o'];
    const r = await kubectl.run([...args, 'json', '-f', '-'], formatYamlDocuments(batch.map((o) => o.body)));
    if (r.code === 0) {
      const parsed = JSON.parse(r.stdout) as Json;
      const items = parsed.kind === 'List' ? ((parsed.items ?? []) as Json[]) : [parsed];
      batch.forEach((o, i) => {
        if (items[i]) wouldBe.set(o.name, items[i]!);
      });
      return true;
    }
    if (isUnreachable(r.stderr)) {
      throw new DmError('CLUSTER_UNREACHABLE', `cannot reach the cluster: ${kubectlSays(r.stderr)}`, {
        category: 'unreachable',
      });
    }
    const refused = await clusterRefusal(kubectl, r.stderr, batch.length);
    if (refused) throw refused;
    return false;
  };
  if (checkable.length > 0 && !(await dryRun(checkable))) {
    // kubectl prints no JSON when one object fails: find which with -o name, then retry the others.
    const r = await kubectl.run(
      [...applyArgs, '-o', 'name', '-f', '-'],
      formatYamlDocuments(checkable.map((o) => o.body)),
    );
    const ok = new Set(r.stdout.split('\n').map((l) => l.trim()));
    const bad = checkable.filter((o) => !ok.has(kubectlName(o)));
    const errors = splitErrors(r.stderr);
    bad.forEach((o, i) => {
      failed.set(o.name, errors.find((e) => e.includes(`"${o.objectName}"`)) ?? errors[i] ?? r.stderr.trim());
    });
    const good = checkable.filter((o) => ok.has(kubectlName(o)));
    if (good.length > 0) await dryRun(good);
  }
  return { wouldBe, failed };
}

/**
 * What a deploy would do: creates, updates (with the changed fields), unchanged and prunes — against
 * the live objects with a server-side dry run when the cluster is reachable, else against the
 * deployment's last manifest.
 */
export async function planDeployment(options: DeployOptions): Promise<DryRunResult> {
  const { kubectl, store, name } = options;
  const p = await prepare(options, false);
  const result: DryRunResult = {
    deployment: name,
    dryRun: true,
    server: p.served !== undefined,
    ...(p.served === undefined && p.offlineReason ? { offlineReason: p.offlineReason } : {}),
    create: [],
    update: [],
    unchanged: [],
    prune: [],
    failed: [],
    existing: p.previous.length,
  };
  const refused = pruneRefusal(name, p.prunes.length, p.previous.length, options.pruneAll);
  if (refused) result.refused = refused;
  const describe = (o: InventoryEntry | KubeObject): DryRunChange => ({
    name: o.name,
    kind: o.kind,
    namespace: o.namespace,
    objectName: o.objectName,
    ...('level' in o && typeof o.level === 'number' ? { level: o.level } : {}),
  });
  if (p.served === undefined) {
    const last = (await store.getDeployment(name))?.currentManifest;
    const lastManifest = last ? await store.getManifest(last) : undefined;
    const before = new Map(
      lastManifest
        ? (JSON.parse(lastManifest.expandedConfig) as { resources: Primitive[] }).resources.map((r) => [
            r.name,
            r,
          ])
        : [],
    );
    for (const o of p.objects) {
      const prev = before.get(o.name);
      const now = options.input.config.resources.find((r) => r.name === o.name)!;
      if (!prev) result.create.push(describe(o));
      else if (JSON.stringify(prev) === JSON.stringify(now)) result.unchanged.push(describe(o));
      else result.update.push(describe(o));
    }
    result.prune = p.prunes.map(describe);
    return result;
  }
  const live = await getLive(kubectl, [...p.objects, ...p.prunes]);
  const { wouldBe, failed } = await serverDryRun(kubectl, p.objects, p.served, live, options.forceConflicts);
  for (const o of p.objects) {
    const change = describe(o);
    const l = live.get(objectKey(o));
    if (failed.has(o.name)) result.failed.push({ ...change, message: failed.get(o.name)! });
    else if (!l) result.create.push(change);
    else {
      const after = wouldBe.get(o.name);
      const changes = after
        ? fieldChanges(comparable(after), comparable(l), o.kind).map(formatChange)
        : ['(references not yet resolvable)'];
      if (changes.length === 0) result.unchanged.push(change);
      else result.update.push({ ...change, changes });
    }
  }
  result.prune = p.prunes.filter((t) => live.has(objectKey(t))).map(describe);
  return result;
}

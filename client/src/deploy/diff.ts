/**
 * `dm diff` and `dm drift` (docs/deployments.md "Diff and drift"): three states of a deployment's
 * objects side by side — the last applied manifest (dm's record), the live objects (`kubectl get`)
 * and what a configuration would apply (a server-side dry run, through the same plan as `dm
 * deploy`) — per object and per field. Drift is a field dm applied whose live value is different
 * (or an applied object that is gone); a change is what the configuration would do to the live
 * object. A Secret's values are never shown, only whether they changed.
 */
import { isMapping } from '../data.js';
import { DmError } from '../error.js';
import type { DeploymentStore } from '../state/deployments-store.js';
import { manifestDocuments } from '../state/deployments-store.js';
import { getLive } from './apply.js';
import {
  type DeployOptions,
  LABEL_DEPLOYMENT,
  LABEL_MANAGED_BY,
  prepare,
  servedKinds,
  serverDryRun,
} from './deploy.js';
import {
  ANNOTATION_MANIFEST,
  comparable,
  driftedFields,
  type FieldChange,
  fieldChanges,
  foldStringData,
} from './fields.js';
import { type Kubectl, readTarget, unreachableMessage } from './kubectl.js';
import type { Primitive } from './model.js';
import { type KubeObject, objectKey, type ServedKind, toObjects } from './objects.js';
import { substituteReferences } from './plan.js';

type Json = Record<string, unknown>;

export interface ObjectDiff {
  name: string;
  kind: string;
  namespace: string;
  objectName: string;
  /** What the configuration would do (`dm drift`: `unchanged`). */
  action: 'create' | 'update' | 'unchanged' | 'prune' | 'failed';
  /** Fields dm last applied whose live value differs (from: last applied, to: live). */
  drift: FieldChange[];
  /** dm applied it and it is not in the cluster any more. */
  deletedOutOfBand?: true;
  /** What the configuration would change in the live object (from: live, to: would be). */
  changes: FieldChange[];
  /** A Secret's keys: whether each value would change (values are never shown). */
  secretData?: Record<string, 'changed' | 'unchanged'>;
  message?: string;
}

export interface DiffResult {
  deployment: string;
  /** The manifest the comparison starts from (the deployment's current one); null for a new deployment. */
  lastManifest: string | null;
  /** `diff`: three states; `drift`: last applied against live only. */
  mode: 'diff' | 'drift';
  objects: ObjectDiff[];
  counts: { create: number; update: number; prune: number; drift: number; failed: number };
  /** Whether anything differs (`--detailed-exitcode` exits 2). */
  changed: boolean;
}

interface LastApplied {
  manifest: string | null;
  objects: Map<string, KubeObject>;
}

/** The objects the deployment's current manifest applied, as dm sent them (resolved `$(ref)` values filled in). */
async function lastApplied(store: DeploymentStore, name: string, served: ServedKind[]): Promise<LastApplied> {
  const current = (await store.getDeployment(name))?.currentManifest;
  const m = current ? await store.getManifest(current) : undefined;
  if (!m) return { manifest: null, objects: new Map() };
  const docs = manifestDocuments(m);
  const resources = ((docs.expandedConfig as { resources?: Primitive[] }).resources ?? []) as Primitive[];
  const applied = new Set(
    (await store.manifestResources(m.name))
      .filter((r) => r.action === 'apply' && r.outcome === 'applied')
      .map((r) => r.name),
  );
  const resolved = (docs.resolvedValues ?? []) as { resource: string; reference: string; value: unknown }[];
  const names = new Set(resources.map((r) => r.name));
  const objects = toObjects(resources, {
    served,
    defaultNamespace: typeof docs.target.namespace === 'string' ? docs.target.namespace : 'default',
    labels: { [LABEL_MANAGED_BY]: 'dm', [LABEL_DEPLOYMENT]: name },
    annotations: { [ANNOTATION_MANIFEST]: m.name },
  });
  const out = new Map<string, KubeObject>();
  for (const o of objects) {
    if (!applied.has(o.name)) continue;
    // A value not recorded is unknown (undefined): not compared.
    const body = substituteReferences(
      o.body,
      (ref) => resolved.find((r) => r.resource === o.name && r.reference === ref.text)?.value,
      names,
      o.name,
    ) as Json;
    out.set(objectKey(o), { ...o, body: foldStringData(o.kind, body) });
  }
  return { manifest: m.name, objects: out };
}

function secretData(next: Json, live: Json): Record<string, 'changed' | 'unchanged'> {
  const a = (isMapping(next.data) ? next.data : {}) as Json;
  const b = (isMapping(live.data) ? live.data : {}) as Json;
  const out: Record<string, 'changed' | 'unchanged'> = {};
  for (const k of [...new Set([...Object.keys(b), ...Object.keys(a)])].sort()) {
    out[k] = a[k] === b[k] ? 'unchanged' : 'changed';
  }
  return out;
}

function driftOf(
  last: KubeObject | undefined,
  live: Json | undefined,
): Pick<ObjectDiff, 'drift' | 'deletedOutOfBand'> {
  if (!last) return { drift: [] };
  if (!live) return { drift: [], deletedOutOfBand: true };
  return { drift: driftedFields(last.body, live, last.kind) };
}

function finish(
  deployment: string,
  lastManifest: string | null,
  mode: DiffResult['mode'],
  objects: ObjectDiff[],
): DiffResult {
  const count = (a: ObjectDiff['action']) => objects.filter((o) => o.action === a).length;
  const counts = {
    create: count('create'),
    update: count('update'),
    prune: count('prune'),
    drift: objects.filter((o) => o.drift.length > 0 || o.deletedOutOfBand).length,
    failed: count('failed'),
  };
  const changed = counts.create + counts.update + counts.prune + counts.drift + counts.failed > 0;
  return { deployment, lastManifest, mode, objects, counts, changed };
}

const identity = (o: Pick<KubeObject, 'name' | 'kind' | 'namespace' | 'objectName'>) => ({
  name: o.name,
  kind: o.kind,
  namespace: o.namespace,
  objectName: o.objectName,
});

/**
 * Compares a configuration with the deployment: last applied, live and would-be, per object and
 * field. The dry run takes back fields others changed (`--force-conflicts`), so drift the
 * configuration would undo shows as a change too.
 */
export async function diffDeployment(options: DeployOptions): Promise<DiffResult> {
  const { kubectl, store, name } = options;
  if (!(await store.getDeployment(name))) {
    throw await store.notFound(
      name,
      `dm deploy <config> --name ${name} --dry-run shows what a new deployment would create`,
    );
  }
  const p = await prepare(options, true);
  const served = p.served!;
  const last = await lastApplied(store, name, served);
  const wanted = new Map<string, Pick<KubeObject, 'apiVersion' | 'kind' | 'namespace' | 'objectName'>>();
  for (const o of [...p.objects, ...p.prunes, ...last.objects.values()]) wanted.set(objectKey(o), o);
  const live = await getLive(kubectl, [...wanted.values()]);
  const { wouldBe, failed } = await serverDryRun(kubectl, p.objects, served, live, true);
  const objects: ObjectDiff[] = p.objects.map((o) => {
    const key = objectKey(o);
    const l = live.get(key);
    const base = { ...identity(o), ...driftOf(last.objects.get(key), l) };
    if (failed.has(o.name)) return { ...base, action: 'failed', changes: [], message: failed.get(o.name)! };
    if (!l) return { ...base, action: 'create', changes: [] };
    const next = wouldBe.get(o.name);
    if (!next)
      return { ...base, action: 'update', changes: [], message: 'its $(ref) values are not known yet' };
    const changes = fieldChanges(comparable(next), comparable(l), o.kind);
    return {
      ...base,
      action: changes.length > 0 ? 'update' : 'unchanged',
      changes,
      ...(o.kind === 'Secret' ? { secretData: secretData(next, l) } : {}),
    };
  });
  for (const t of p.prunes) {
    const key = objectKey(t);
    const l = live.get(key);
    if (!l) continue;
    objects.push({ ...identity(t), action: 'prune', ...driftOf(last.objects.get(key), l), changes: [] });
  }
  return finish(name, last.manifest, 'diff', objects);
}

/** Compares the live objects with the deployment's last applied manifest only. */
export async function driftDeployment(options: {
  name: string;
  store: DeploymentStore;
  kubectl: Kubectl;
}): Promise<DiffResult> {
  const { name, store, kubectl } = options;
  if (!(await store.getDeployment(name))) throw await store.notFound(name);
  const served = await servedKinds(kubectl);
  if (!served) {
    const target = await readTarget(kubectl).catch(() => undefined);
    throw new DmError('CLUSTER_UNREACHABLE', `${unreachableMessage(target)} to read the live objects`, {
      category: 'unreachable',
      hint: 'check --kubeconfig/--context',
    });
  }
  const last = await lastApplied(store, name, served);
  const live = await getLive(kubectl, [...last.objects.values()]);
  const objects: ObjectDiff[] = [...last.objects].map(([key, o]) => ({
    ...identity(o),
    action: 'unchanged',
    ...driftOf(o, live.get(key)),
    changes: [],
  }));
  return finish(name, last.manifest, 'drift', objects);
}

/**
 * Applying objects to a cluster through kubectl (docs/deployments.md "Order and batching"): level by level, each level
 * in ONE `kubectl apply --server-side --field-manager=dm` call (a multi-document stream on stdin);
 * CRDs of level 0 waited for `Established`; `$(ref.NAME.PATH)` substituted from live objects read with
 * one `kubectl get -o json` per level; `--wait` through `kubectl wait` / `rollout status`. The first
 * level with a failure stops the run: later levels are recorded as not attempted. Prune deletes in
 * reverse level order.
 */
import { formatYamlDocuments } from '../document/yaml.js';
import { DmError } from '../error.js';
import { clusterRefusal, isUnreachable, type Kubectl, kubectlSays, splitErrors } from './kubectl.js';
import type { ResourceOutcome } from './model.js';
import { type KubeObject, kubectlName, objectKey } from './objects.js';
import { substituteReferences, type ValueReference, valueAt } from './plan.js';

export interface PlannedObject extends KubeObject {
  level: number;
  references: ValueReference[];
}

export interface ResourceResult {
  name: string;
  outcome: ResourceOutcome;
  message?: string;
  resourceVersion?: string;
}

export interface ResolvedValue {
  resource: string;
  reference: string;
  value: unknown;
}

export interface ApplyOptions {
  wait?: boolean;
  timeoutSeconds?: number;
  fieldManager?: string;
  forceConflicts?: boolean;
  /** Called before a level goes to the cluster and after; persist here (one transaction each). */
  onProgress?: (results: ResourceResult[]) => void;
}

export interface ApplyResult {
  ok: boolean;
  results: ResourceResult[];
  resolvedValues: ResolvedValue[];
}

type Json = Record<string, unknown>;

function levelsOf<T extends { level: number }>(items: T[]): number[] {
  return [...new Set(items.map((i) => i.level))].sort((a, b) => a - b);
}

/** Splits a batch so that no two objects share a `kind.group/name` (kubectl -o name has no namespace). */
function uniqueByKubectlName<T extends KubeObject>(objects: T[]): T[][] {
  const chunks: T[][] = [];
  for (const o of objects) {
    const chunk = chunks.find((c) => !c.some((x) => kubectlName(x) === kubectlName(o)));
    if (chunk) chunk.push(o);
    else chunks.push([o]);
  }
  return chunks;
}

/** Gives kubectl's error messages to the objects that failed: by name when it is quoted, else in order. */
function assignErrors(failed: KubeObject[], stderr: string): Map<string, string> {
  const errors = splitErrors(stderr);
  const out = new Map<string, string>();
  const rest: KubeObject[] = [];
  const unused = [...errors];
  for (const o of failed) {
    const i = unused.findIndex(
      (e) => e.includes(`"${o.objectName}"`) && e.toLowerCase().includes(o.kind.toLowerCase()),
    );
    if (i >= 0) out.set(o.name, unused.splice(i, 1)[0]!);
    else rest.push(o);
  }
  rest.forEach((o, i) => {
    out.set(o.name, unused[i] ?? (unused.length > 0 ? unused.join('\n') : stderr.trim() || 'kubectl failed'));
  });
  return out;
}

function documents(objects: KubeObject[]): string {
  return formatYamlDocuments(objects.map((o) => o.body));
}

/** Minimal documents naming objects (for get/wait/delete). */
function identities(objects: Pick<KubeObject, 'apiVersion' | 'kind' | 'namespace' | 'objectName'>[]): string {
  return formatYamlDocuments(
    objects.map((o) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      metadata: { name: o.objectName, ...(o.namespace ? { namespace: o.namespace } : {}) },
    })),
  );
}

/** Reads live objects; returns them by objectKey (missing ones are absent). */
export async function getLive(
  kubectl: Kubectl,
  objects: Pick<KubeObject, 'apiVersion' | 'kind' | 'namespace' | 'objectName'>[],
): Promise<Map<string, Json>> {
  const live = new Map<string, Json>();
  if (objects.length === 0) return live;
  const r = await kubectl.run(['get', '--ignore-not-found', '-o', 'json', '-f', '-'], identities(objects));
  if (r.code !== 0) {
    const refused = isUnreachable(r.stderr) ? undefined : await clusterRefusal(kubectl, r.stderr);
    if (refused) throw refused;
    throw new DmError(
      'CLUSTER_READ_FAILED',
      `kubectl get failed: ${splitErrors(r.stderr)[0] ?? r.stderr.trim()}`,
      {
        category: isUnreachable(r.stderr) ? 'unreachable' : 'error',
      },
    );
  }
  if (r.stdout.trim() === '') return live;
  const parsed = JSON.parse(r.stdout) as Json;
  const items =
    parsed.kind === 'List' || Array.isArray(parsed.items) ? ((parsed.items ?? []) as Json[]) : [parsed];
  for (const item of items) {
    const m = (item.metadata ?? {}) as Json;
    live.set(
      objectKey({
        apiVersion: String(item.apiVersion),
        kind: String(item.kind),
        namespace: String(m.namespace ?? ''),
        objectName: String(m.name),
      }),
      item,
    );
  }
  return live;
}

const ROLLOUT_KINDS = new Set(['StatefulSet', 'DaemonSet']);

/** Waits for readiness: Deployments Available, Jobs Complete, StatefulSets/DaemonSets rolled out. */
async function waitReady(
  kubectl: Kubectl,
  objects: KubeObject[],
  timeoutSeconds: number,
): Promise<Map<string, string>> {
  const failures = new Map<string, string>();
  const timeout = `--timeout=${timeoutSeconds}s`;
  const groups: [string, KubeObject[]][] = [
    ['condition=Available', objects.filter((o) => o.kind === 'Deployment')],
    ['condition=Complete', objects.filter((o) => o.kind === 'Job')],
  ];
  for (const [condition, group] of groups) {
    if (group.length === 0) continue;
    const r = await kubectl.run(['wait', `--for=${condition}`, timeout, '-f', '-'], identities(group));
    if (r.code !== 0) {
      const met = new Set(r.stdout.split('\n').map((l) => l.split(' ')[0]));
      for (const o of group) {
        if (!met.has(kubectlName(o)))
          failures.set(o.name, `not ready within ${timeoutSeconds}s (${condition})`);
      }
    }
  }
  for (const o of objects.filter((x) => ROLLOUT_KINDS.has(x.kind))) {
    const r = await kubectl.run([
      'rollout',
      'status',
      `${o.kind.toLowerCase()}/${o.objectName}`,
      ...(o.namespace ? ['-n', o.namespace] : []),
      timeout,
    ]);
    if (r.code !== 0) failures.set(o.name, `not rolled out within ${timeoutSeconds}s`);
  }
  return failures;
}

/** Applies the objects level by level. Never throws for per-object failures; they are in the results. */
export async function applyObjects(
  kubectl: Kubectl,
  objects: PlannedObject[],
  options: ApplyOptions = {},
): Promise<ApplyResult> {
  const results = new Map<string, ResourceResult>(
    objects.map((o) => [o.name, { name: o.name, outcome: 'pending' }]),
  );
  const progress = (names: string[]) => options.onProgress?.(names.map((n) => results.get(n)!));
  const names = new Set(objects.map((o) => o.name));
  const referenced = new Set(objects.flatMap((o) => o.references.map((r) => r.name)));
  const live = new Map<string, Json>();
  const resolvedValues: ResolvedValue[] = [];
  const timeoutSeconds = options.timeoutSeconds ?? 300;
  let failed = false;

  for (const level of levelsOf(objects)) {
    const batch = objects.filter((o) => o.level === level);
    if (failed) {
      for (const o of batch) results.set(o.name, { name: o.name, outcome: 'not-attempted' });
      progress(batch.map((o) => o.name));
      continue;
    }
    // Substitute references from the live objects of earlier levels.
    const ready: PlannedObject[] = [];
    for (const o of batch) {
      if (o.references.length === 0) {
        ready.push(o);
        continue;
      }
      const missing: string[] = [];
      const body = substituteReferences(
        o.body,
        (ref) => {
          const value = valueAt(live.get(ref.name), ref);
          if (value === undefined) missing.push(ref.text);
          else resolvedValues.push({ resource: o.name, reference: ref.text, value });
          return value ?? ref.text;
        },
        names,
        o.name,
      ) as Json;
      if (missing.length > 0) {
        results.set(o.name, {
          name: o.name,
          outcome: 'failed',
          message: `${missing.join(', ')}: no such field in the live object`,
        });
        failed = true;
      } else ready.push({ ...o, body });
    }
    for (const o of ready) results.set(o.name, { name: o.name, outcome: 'applying' });
    progress(batch.map((o) => o.name));

    for (const chunk of uniqueByKubectlName(ready)) {
      const args = [
        'apply',
        '--server-side',
        `--field-manager=${options.fieldManager ?? 'dm'}`,
        ...(options.forceConflicts ? ['--force-conflicts'] : []),
        '-o',
        'name',
        '-f',
        '-',
      ];
      const r = await kubectl.run(args, documents(chunk));
      const applied = new Set(r.stdout.split('\n').map((l) => l.trim()));
      const failedHere = chunk.filter((o) => !applied.has(kubectlName(o)));
      const messages = assignErrors(failedHere, r.stderr);
      for (const o of chunk) {
        if (applied.has(kubectlName(o))) results.set(o.name, { name: o.name, outcome: 'applied' });
        else {
          results.set(o.name, {
            name: o.name,
            outcome: 'failed',
            message: messages.get(o.name) ?? 'kubectl failed',
          });
          failed = true;
        }
      }
      if (failedHere.length === chunk.length && isUnreachable(r.stderr)) {
        progress(batch.map((o) => o.name));
        throw new DmError('CLUSTER_UNREACHABLE', `cannot reach the cluster: ${kubectlSays(r.stderr)}`, {
          category: 'unreachable',
        });
      }
      // Every object refused for the credentials or permissions: the cluster's answer, said once.
      const refused =
        failedHere.length === chunk.length
          ? await clusterRefusal(kubectl, r.stderr, chunk.length)
          : undefined;
      if (refused) {
        progress(batch.map((o) => o.name));
        throw refused;
      }
    }
    // CRDs must be Established before anything uses them.
    const crds = ready.filter(
      (o) => o.kind === 'CustomResourceDefinition' && results.get(o.name)!.outcome === 'applied',
    );
    if (crds.length > 0) {
      const r = await kubectl.run(
        ['wait', '--for=condition=Established', `--timeout=${Math.min(timeoutSeconds, 60)}s`, '-f', '-'],
        identities(crds),
      );
      if (r.code !== 0) {
        const met = new Set(r.stdout.split('\n').map((l) => l.split(' ')[0]));
        for (const o of crds.filter((c) => !met.has(kubectlName(c)))) {
          results.set(o.name, {
            name: o.name,
            outcome: 'failed',
            message: 'applied, but not Established in time',
          });
          failed = true;
        }
      }
    }
    if (options.wait && !failed) {
      const failures = await waitReady(kubectl, ready, timeoutSeconds);
      for (const [name, message] of failures) {
        results.set(name, { name, outcome: 'failed', message: `applied, but ${message}` });
        failed = true;
      }
    }
    // Read the live objects later levels reference.
    const wanted = ready.filter((o) => referenced.has(o.name) && results.get(o.name)!.outcome === 'applied');
    if (wanted.length > 0 && !failed) {
      const got = await getLive(kubectl, wanted);
      for (const o of wanted) {
        const item = got.get(objectKey(o));
        if (item) live.set(o.name, item);
      }
    }
    for (const o of ready) {
      const l = live.get(o.name);
      const rv = (l?.metadata as Json | undefined)?.resourceVersion;
      if (typeof rv === 'string') results.set(o.name, { ...results.get(o.name)!, resourceVersion: rv });
    }
    progress(batch.map((o) => o.name));
  }
  const list = objects.map((o) => results.get(o.name)!);
  return { ok: list.every((r) => r.outcome === 'applied'), results: list, resolvedValues };
}

export interface PruneTarget {
  name: string;
  apiVersion: string;
  kind: string;
  namespace: string;
  objectName: string;
  level: number;
}

/** Deletes objects in reverse level order, one kubectl call per level (Namespaces not waited for). */
export async function pruneObjects(
  kubectl: Kubectl,
  targets: PruneTarget[],
  options: { timeoutSeconds?: number; onProgress?: (results: ResourceResult[]) => void } = {},
): Promise<ResourceResult[]> {
  const results = new Map<string, ResourceResult>(
    targets.map((t) => [t.name, { name: t.name, outcome: 'pending' }]),
  );
  const timeout = `--timeout=${options.timeoutSeconds ?? 300}s`;
  for (const level of levelsOf(targets).reverse()) {
    const batch = targets.filter((t) => t.level === level);
    for (const t of batch) results.set(t.name, { name: t.name, outcome: 'applying' });
    options.onProgress?.(batch.map((t) => results.get(t.name)!));
    const namespaces = batch.filter((t) => t.kind === 'Namespace');
    const others = batch.filter((t) => t.kind !== 'Namespace');
    for (const [group, wait] of [
      [others, true],
      [namespaces, false],
    ] as const) {
      if (group.length === 0) continue;
      const r = await kubectl.run(
        ['delete', '--ignore-not-found', `--wait=${wait}`, timeout, '-o', 'name', '-f', '-'],
        identities(group),
      );
      if (r.code === 0) {
        for (const t of group) results.set(t.name, { name: t.name, outcome: 'pruned' });
        continue;
      }
      const deleted = new Set(r.stdout.split('\n').map((l) => l.trim()));
      const failed = group.filter((t) => !deleted.has(kubectlName(t)));
      const messages = assignErrors(failed as unknown as KubeObject[], r.stderr);
      for (const t of group) {
        results.set(
          t.name,
          deleted.has(kubectlName(t))
            ? { name: t.name, outcome: 'pruned' }
            : {
                name: t.name,
                outcome: 'prune-failed',
                message: messages.get(t.name) ?? 'kubectl delete failed',
              },
        );
      }
    }
    options.onProgress?.(batch.map((t) => results.get(t.name)!));
  }
  return targets.map((t) => results.get(t.name)!);
}

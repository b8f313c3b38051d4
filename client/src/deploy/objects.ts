/**
 * From primitive to Kubernetes object (docs/deployments.md "From primitive to object"): the kind comes from `type` (a bare
 * kind, `v1/<Kind>` or `<group>/<version>/<Kind>`), the API version from the type, else
 * `properties.apiVersion`, else what the cluster serves (discovery), else a table of core kinds;
 * `metadata.name` defaults to the resource's name; the namespace is `metadata.namespace`, else the
 * default namespace (`--namespace`, else the kubeconfig context's).
 */
import { DmError } from '../error.js';
import type { ObjectIdentity } from '../wire/manager-api.js';
import type { Primitive } from './model.js';

/** One kind the cluster serves (from `kubectl api-resources`), or the built-in table. */
export interface ServedKind {
  apiVersion: string;
  kind: string;
  namespaced: boolean;
}

/** Core kinds, used when the cluster cannot be asked (offline dry-run) and to order scopes. */
export const CORE_KINDS: ServedKind[] = [
  ['v1', 'Namespace', false],
  ['v1', 'ConfigMap', true],
  ['v1', 'Secret', true],
  ['v1', 'Service', true],
  ['v1', 'ServiceAccount', true],
  ['v1', 'Pod', true],
  ['v1', 'PersistentVolumeClaim', true],
  ['v1', 'PersistentVolume', false],
  ['v1', 'ReplicationController', true],
  ['v1', 'Endpoints', true],
  ['v1', 'LimitRange', true],
  ['v1', 'ResourceQuota', true],
  ['apps/v1', 'Deployment', true],
  ['apps/v1', 'StatefulSet', true],
  ['apps/v1', 'DaemonSet', true],
  ['apps/v1', 'ReplicaSet', true],
  ['batch/v1', 'Job', true],
  ['batch/v1', 'CronJob', true],
  ['networking.k8s.io/v1', 'Ingress', true],
  ['networking.k8s.io/v1', 'NetworkPolicy', true],
  ['policy/v1', 'PodDisruptionBudget', true],
  ['autoscaling/v2', 'HorizontalPodAutoscaler', true],
  ['rbac.authorization.k8s.io/v1', 'Role', true],
  ['rbac.authorization.k8s.io/v1', 'RoleBinding', true],
  ['rbac.authorization.k8s.io/v1', 'ClusterRole', false],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', false],
  ['storage.k8s.io/v1', 'StorageClass', false],
  ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', false],
].map(([apiVersion, kind, namespaced]) => ({
  apiVersion: apiVersion as string,
  kind: kind as string,
  namespaced: namespaced as boolean,
}));

/** A primitive made concrete: the object to apply and its identity in the cluster. */
export interface KubeObject extends ObjectIdentity {
  body: Record<string, unknown>;
}

/** `group/Kind/namespace/name`: what identifies an object across manifests. */
export function objectKey(o: Pick<KubeObject, 'apiVersion' | 'kind' | 'namespace' | 'objectName'>): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  return `${group}/${o.kind}/${o.namespace}/${o.objectName}`;
}

/** `kind.group/name` as `kubectl -o name` prints it. */
export function kubectlName(o: Pick<KubeObject, 'apiVersion' | 'kind' | 'objectName'>): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  return `${o.kind.toLowerCase()}${group ? `.${group}` : ''}/${o.objectName}`;
}

export interface ParsedType {
  apiVersion: string | undefined;
  kind: string;
}

/** Parses a primitive's type: `Service`, `v1/Service`, `apps/v1/Deployment`. */
export function parsePrimitiveType(type: string, resource: string): ParsedType {
  const parts = type.split('/');
  const valid = parts.every((p) => /^[A-Za-z0-9.-]+$/.test(p)) && parts.length <= 3;
  const kind = parts[parts.length - 1] ?? '';
  if (!valid || !/^[A-Z][A-Za-z0-9]*$/.test(kind)) {
    throw new DmError(
      'INVALID_PRIMITIVE_TYPE',
      `resource '${resource}': type '${type}' is not a Kubernetes kind (Kind, v1/Kind or group/version/Kind)`,
      { category: 'validation' },
    );
  }
  if (parts.length === 1) return { apiVersion: undefined, kind };
  return { apiVersion: parts.slice(0, -1).join('/'), kind };
}

export interface ToObjectsOptions {
  /** Kinds the cluster serves; undefined when the cluster cannot be asked (then CORE_KINDS). */
  served: ServedKind[] | undefined;
  defaultNamespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Kinds that CustomResourceDefinitions in the configuration define. */
export function kindsFromCrds(resources: Primitive[]): ServedKind[] {
  const out: ServedKind[] = [];
  for (const r of resources) {
    const p = r.properties ?? {};
    const kind = parsePrimitiveType(r.type, r.name).kind;
    if (kind !== 'CustomResourceDefinition') continue;
    const spec = (p.spec ?? {}) as Record<string, unknown>;
    const names = (spec.names ?? {}) as Record<string, unknown>;
    const versions = Array.isArray(spec.versions) ? (spec.versions as Record<string, unknown>[]) : [];
    for (const v of versions) {
      out.push({
        apiVersion: `${String(spec.group)}/${String(v.name)}`,
        kind: String(names.kind),
        namespaced: spec.scope !== 'Cluster',
      });
    }
  }
  return out;
}

/** Turns the primitives into objects; an unknown type is an error before anything is applied. */
export function toObjects(resources: Primitive[], options: ToObjectsOptions): KubeObject[] {
  const fromCrds = kindsFromCrds(resources);
  const served = [...(options.served ?? CORE_KINDS), ...fromCrds];
  const seen = new Map<string, string>();
  return resources.map((r) => {
    const parsed = parsePrimitiveType(r.type, r.name);
    const props = structuredClone(r.properties ?? {});
    const explicit =
      parsed.apiVersion ?? (typeof props.apiVersion === 'string' ? props.apiVersion : undefined);
    const candidates = served.filter(
      (s) => s.kind === parsed.kind && (!explicit || s.apiVersion === explicit),
    );
    const match = candidates[0];
    if (!match) {
      const where = options.served
        ? 'the cluster does not serve it'
        : 'it is not a core kind (cluster not asked)';
      throw new DmError(
        'UNKNOWN_KIND',
        `resource '${r.name}': type '${r.type}'${explicit ? ` (${explicit})` : ''} is unknown: ${where} and no CustomResourceDefinition in the configuration defines it`,
        { category: 'validation', details: { resource: r.name, type: r.type } },
      );
    }
    const metadata = { ...((props.metadata ?? {}) as Record<string, unknown>) };
    const objectName = typeof metadata.name === 'string' ? metadata.name : r.name;
    const namespace = match.namespaced
      ? typeof metadata.namespace === 'string'
        ? metadata.namespace
        : options.defaultNamespace
      : '';
    metadata.name = objectName;
    if (match.namespaced) metadata.namespace = namespace;
    else delete metadata.namespace;
    metadata.labels = { ...((metadata.labels ?? {}) as Record<string, string>), ...options.labels };
    metadata.annotations = {
      ...((metadata.annotations ?? {}) as Record<string, string>),
      ...options.annotations,
    };
    const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = props;
    const object: KubeObject = {
      name: r.name,
      type: r.type,
      apiVersion: match.apiVersion,
      kind: match.kind,
      namespace,
      objectName,
      body: { apiVersion: match.apiVersion, kind: match.kind, metadata, ...rest },
    };
    const key = objectKey(object);
    const other = seen.get(key);
    if (other !== undefined) {
      throw new DmError(
        'DUPLICATE_OBJECT',
        `resources '${other}' and '${r.name}' are the same object (${match.kind} ${namespace ? `${namespace}/` : ''}${objectName})`,
        { category: 'validation' },
      );
    }
    seen.set(key, r.name);
    return object;
  });
}

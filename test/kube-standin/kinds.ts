/**
 * The stand-in's resource types: the built-in kinds it serves (a subset of Kubernetes 1.32) and the
 * types CustomResourceDefinitions add once Established. Test code only; never imported by product code.
 */

export type NameRule = 'subdomain' | 'label' | 'dns1035';
export type Readiness = 'deployment' | 'statefulset' | 'daemonset' | 'job';

export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  /** Plural resource name, as in URLs. */
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  nameRule: NameRule;
  /** Top-level fields besides apiVersion/kind/metadata; undefined accepts any (schemaless CRD). */
  fields: string[] | undefined;
  /** Whether metadata.generation is kept (objects with a spec). */
  generation: boolean;
  /** Whether `status` is a subresource (stripped from writes to the main resource). */
  statusSubresource: boolean;
  readiness?: Readiness;
  /** Set for types a CRD defines: the CRD's name. */
  crd?: string;
}

const WORKLOAD = { fields: ['spec', 'status'], generation: true, statusSubresource: true };

function t(
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced: boolean,
  rest: Partial<ResourceType> & Pick<ResourceType, 'fields' | 'generation' | 'statusSubresource'>,
): ResourceType {
  return {
    group,
    version,
    kind,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    nameRule: 'subdomain',
    ...rest,
  };
}

export function builtinTypes(): ResourceType[] {
  return [
    t('', 'v1', 'Namespace', 'namespaces', false, {
      fields: ['spec', 'status'],
      generation: false,
      statusSubresource: true,
      nameRule: 'label',
      shortNames: ['ns'],
    }),
    t('', 'v1', 'ConfigMap', 'configmaps', true, {
      fields: ['data', 'binaryData', 'immutable'],
      generation: false,
      statusSubresource: false,
      shortNames: ['cm'],
    }),
    t('', 'v1', 'Secret', 'secrets', true, {
      fields: ['data', 'stringData', 'type', 'immutable'],
      generation: false,
      statusSubresource: false,
    }),
    t('', 'v1', 'Service', 'services', true, {
      fields: ['spec', 'status'],
      generation: false,
      statusSubresource: true,
      nameRule: 'dns1035',
      shortNames: ['svc'],
    }),
    t('', 'v1', 'ServiceAccount', 'serviceaccounts', true, {
      fields: ['secrets', 'imagePullSecrets', 'automountServiceAccountToken'],
      generation: false,
      statusSubresource: false,
      shortNames: ['sa'],
    }),
    t('', 'v1', 'Pod', 'pods', true, { ...WORKLOAD, generation: false, shortNames: ['po'] }),
    t('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true, {
      ...WORKLOAD,
      generation: false,
      shortNames: ['pvc'],
    }),
    t('', 'v1', 'ReplicationController', 'replicationcontrollers', true, { ...WORKLOAD, shortNames: ['rc'] }),
    t('apps', 'v1', 'Deployment', 'deployments', true, {
      ...WORKLOAD,
      readiness: 'deployment',
      shortNames: ['deploy'],
    }),
    t('apps', 'v1', 'StatefulSet', 'statefulsets', true, {
      ...WORKLOAD,
      readiness: 'statefulset',
      shortNames: ['sts'],
    }),
    t('apps', 'v1', 'DaemonSet', 'daemonsets', true, {
      ...WORKLOAD,
      readiness: 'daemonset',
      shortNames: ['ds'],
    }),
    t('apps', 'v1', 'ReplicaSet', 'replicasets', true, { ...WORKLOAD, shortNames: ['rs'] }),
    t('batch', 'v1', 'Job', 'jobs', true, { ...WORKLOAD, readiness: 'job' }),
    t('batch', 'v1', 'CronJob', 'cronjobs', true, { ...WORKLOAD, shortNames: ['cj'] }),
    t('networking.k8s.io', 'v1', 'Ingress', 'ingresses', true, { ...WORKLOAD, shortNames: ['ing'] }),
    t('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true, {
      ...WORKLOAD,
      shortNames: ['pdb'],
    }),
    t('rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true, {
      fields: ['rules'],
      generation: false,
      statusSubresource: false,
    }),
    t('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false, {
      fields: ['rules', 'aggregationRule'],
      generation: false,
      statusSubresource: false,
    }),
    t('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true, {
      fields: ['subjects', 'roleRef'],
      generation: false,
      statusSubresource: false,
    }),
    t('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false, {
      fields: ['subjects', 'roleRef'],
      generation: false,
      statusSubresource: false,
    }),
    t('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, {
      ...WORKLOAD,
      shortNames: ['crd', 'crds'],
    }),
  ];
}

export const METADATA_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** Kubernetes' own messages for invalid names (k8s.io/apimachinery validation). */
export function nameProblem(name: string, rule: NameRule): string | undefined {
  if (rule === 'subdomain') {
    if (name.length > 253) return 'must be no more than 253 characters';
    if (!SUBDOMAIN.test(name)) {
      return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    }
  } else if (rule === 'label') {
    if (name.length > 63) return 'must be no more than 63 characters';
    if (!LABEL.test(name)) {
      return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    }
  } else {
    if (name.length > 63) return 'must be no more than 63 characters';
    if (!DNS1035.test(name)) {
      return "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    }
  }
  return undefined;
}

export interface FieldCause {
  field: string;
  message: string;
  reason: 'FieldValueInvalid' | 'FieldValueRequired';
}

type Json = Record<string, unknown>;

function obj(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

/** Per-kind semantic validation (a few rules of the real validators; enough to fail like the real thing). */
export function validateObject(type: ResourceType, body: Json): FieldCause[] {
  const causes: FieldCause[] = [];
  const spec = obj(body.spec);
  if (type.kind === 'Deployment' || type.kind === 'StatefulSet' || type.kind === 'DaemonSet') {
    const selector = obj(spec?.selector);
    if (!selector) {
      causes.push({ field: 'spec.selector', message: 'Required value', reason: 'FieldValueRequired' });
    }
    const template = obj(spec?.template);
    const templateLabels = obj(obj(template?.metadata)?.labels) ?? {};
    const matchLabels = obj(selector?.matchLabels) ?? {};
    if (selector && Object.entries(matchLabels).some(([k, v]) => templateLabels[k] !== v)) {
      causes.push({
        field: 'spec.template.metadata.labels',
        message: `Invalid value: ${JSON.stringify(templateLabels)}: \`selector\` does not match template \`labels\``,
        reason: 'FieldValueInvalid',
      });
    }
    const containers = obj(template?.spec)?.containers;
    if (!Array.isArray(containers) || containers.length === 0) {
      causes.push({
        field: 'spec.template.spec.containers',
        message: 'Required value',
        reason: 'FieldValueRequired',
      });
    } else {
      containers.forEach((c, i) => {
        if (!obj(c)?.image) {
          causes.push({
            field: `spec.template.spec.containers[${i}].image`,
            message: 'Required value',
            reason: 'FieldValueRequired',
          });
        }
      });
    }
  }
  if (type.kind === 'Service') {
    const ports = spec?.ports;
    if (Array.isArray(ports)) {
      ports.forEach((p, i) => {
        const port = obj(p)?.port;
        if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
          causes.push({
            field: `spec.ports[${i}].port`,
            message: `Invalid value: ${JSON.stringify(port ?? null)}: must be between 1 and 65535, inclusive`,
            reason: 'FieldValueInvalid',
          });
        }
      });
    }
  }
  if (type.kind === 'ConfigMap') {
    for (const [key, value] of Object.entries(obj(body.data) ?? {})) {
      if (!/^[-._a-zA-Z0-9]+$/.test(key)) {
        causes.push({
          field: `data[${key}]`,
          message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
          reason: 'FieldValueInvalid',
        });
      }
      if (typeof value !== 'string') {
        causes.push({
          field: `data[${key}]`,
          message: `Invalid value: ${JSON.stringify(value)}: must be a string`,
          reason: 'FieldValueInvalid',
        });
      }
    }
  }
  if (type.kind === 'CustomResourceDefinition') {
    const names = obj(spec?.names);
    const group = spec?.group;
    const plural = names?.plural;
    const name = obj(body.metadata)?.name;
    if (typeof group !== 'string' || !group.includes('.')) {
      causes.push({
        field: 'spec.group',
        message: `Invalid value: ${JSON.stringify(group ?? '')}: should be a domain with at least one dot`,
        reason: 'FieldValueInvalid',
      });
    }
    if (typeof plural !== 'string' || typeof names?.kind !== 'string') {
      causes.push({
        field: 'spec.names',
        message: 'Required value: plural and kind',
        reason: 'FieldValueRequired',
      });
    } else if (name !== `${plural}.${group}`) {
      causes.push({
        field: 'metadata.name',
        message: `Invalid value: ${JSON.stringify(name)}: must be spec.names.plural+"."+spec.group`,
        reason: 'FieldValueInvalid',
      });
    }
    if (spec?.scope !== 'Namespaced' && spec?.scope !== 'Cluster') {
      causes.push({
        field: 'spec.scope',
        message: `Unsupported value: ${JSON.stringify(spec?.scope ?? '')}: supported values: "Cluster", "Namespaced"`,
        reason: 'FieldValueInvalid',
      });
    }
    const versions = spec?.versions;
    if (!Array.isArray(versions) || versions.length === 0) {
      causes.push({ field: 'spec.versions', message: 'Required value', reason: 'FieldValueRequired' });
    } else if (versions.filter((v) => obj(v)?.storage === true).length !== 1) {
      causes.push({
        field: 'spec.versions',
        message: 'Invalid value: must have exactly one version marked as storage version',
        reason: 'FieldValueInvalid',
      });
    }
  }
  return causes;
}

/** The types a CRD defines (one per served version). */
export function typesFromCrd(crd: Json): ResourceType[] {
  const spec = obj(crd.spec) ?? {};
  const names = obj(spec.names) ?? {};
  const name = String(obj(crd.metadata)?.name ?? '');
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  return versions
    .map((v) => obj(v) ?? {})
    .filter((v) => v.served !== false)
    .map((v) => {
      const props = obj(obj(obj(v.schema)?.openAPIV3Schema)?.properties);
      return {
        group: String(spec.group),
        version: String(v.name),
        kind: String(names.kind),
        plural: String(names.plural),
        singular: String(names.singular ?? String(names.kind).toLowerCase()),
        namespaced: spec.scope !== 'Cluster',
        ...(Array.isArray(names.shortNames) ? { shortNames: names.shortNames.map(String) } : {}),
        nameRule: 'subdomain' as const,
        fields: props
          ? Object.keys(props).filter((k) => !['apiVersion', 'kind', 'metadata'].includes(k))
          : undefined,
        generation: true,
        statusSubresource: obj(obj(v.subresources)?.status) !== undefined,
        crd: name,
      };
    });
}

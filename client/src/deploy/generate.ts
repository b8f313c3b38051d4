/**
 * Kubernetes objects without a cluster (docs/deployments.md "Argo CD and KRM functions"): what
 * `dm generate` prints for an Argo CD config management plugin and what `dm fn` appends to a KRM
 * ResourceList. The same objects `dm deploy` would apply (toObjects), made without asking a cluster:
 * core kinds, kinds the configuration's CRDs define, and kinds the type names with its API version
 * (taken as namespaced). A `$(ref…)` needs a live object: it is an error naming it, never a
 * placeholder.
 */
import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';
import { LABEL_DEPLOYMENT, LABEL_MANAGED_BY } from './deploy.js';
import type { DeploymentInput } from './model.js';
import { CORE_KINDS, parsePrimitiveType, type ServedKind, toObjects } from './objects.js';
import { planLevels } from './plan.js';

/** The objects of an expanded configuration, in configuration order. */
export function generateObjects(
  input: DeploymentInput,
  options: { name: string; namespace: string },
): Record<string, unknown>[] {
  const resources = input.config.resources;
  for (const p of planLevels(resources)) {
    const ref = p.references[0];
    if (ref) {
      throw new DmError(
        'REFERENCE_NEEDS_CLUSTER',
        `resource '${p.primitive.name}': ${ref.text} needs the live object of '${ref.name}', which cannot be known without a cluster; deploy with dm deploy, or set the value`,
        { details: { resource: p.primitive.name, reference: ref.text } },
      );
    }
  }
  const served: ServedKind[] = [...CORE_KINDS];
  for (const r of resources) {
    const t = parsePrimitiveType(r.type, r.name);
    const apiVersion =
      t.apiVersion ?? (typeof r.properties?.apiVersion === 'string' ? r.properties.apiVersion : undefined);
    if (apiVersion && !served.some((s) => s.kind === t.kind && s.apiVersion === apiVersion)) {
      served.push({ apiVersion, kind: t.kind, namespaced: true });
    }
  }
  return toObjects(resources, {
    served,
    defaultNamespace: options.namespace,
    labels: { [LABEL_MANAGED_BY]: 'dm', [LABEL_DEPLOYMENT]: options.name },
    annotations: {},
  }).map((o) => {
    const metadata = o.body.metadata as Record<string, unknown>;
    if (Object.keys(metadata.annotations as object).length === 0) delete metadata.annotations;
    return o.body;
  });
}

/**
 * Argo CD's parameters as properties: `ARGOCD_APP_PARAMETERS` (`[{name, string|array|map}]`), else
 * the `PARAM_<NAME>` variables (name lower-cased). String values are read as YAML scalars, as
 * `--properties` reads them.
 */
export function argoProperties(env: Record<string, string | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const scalar = (name: string, raw: string) => {
    try {
      return raw === '' ? '' : parseYaml(raw, { source: `parameter ${name}` });
    } catch {
      return raw;
    }
  };
  const json = env.ARGOCD_APP_PARAMETERS;
  if (json !== undefined && json.trim() !== '') {
    let list: unknown;
    try {
      list = JSON.parse(json);
    } catch {
      list = undefined;
    }
    if (!Array.isArray(list)) {
      throw new DmError(
        'INVALID_PROPERTY',
        'ARGOCD_APP_PARAMETERS is not a JSON list of {name, string|array|map}',
        {
          category: 'usage',
        },
      );
    }
    for (const p of list as { name?: unknown; string?: unknown; array?: unknown; map?: unknown }[]) {
      if (typeof p?.name !== 'string') continue;
      out[p.name] = typeof p.string === 'string' ? scalar(p.name, p.string) : (p.array ?? p.map ?? null);
    }
    return out;
  }
  for (const [k, v] of Object.entries(env).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (k.startsWith('PARAM_') && v !== undefined) out[k.slice(6).toLowerCase()] = scalar(k, v);
  }
  return out;
}

/**
 * The Kubernetes objects of an expanded configuration, as GitOps tools take them (docs/gitops.md):
 * the primitives made objects by the one conversion `dm deploy` uses (docs/deployments.md "From
 * primitive to object"), without asking a cluster, without dm's deployment labels, in configuration
 * order. A `$(ref…)` value is known only once the referenced object lives in a cluster: an error
 * naming the reference, never a placeholder.
 */

import type { Primitive } from '../deploy/model.js';
import { toObjects } from '../deploy/objects.js';
import { DmError } from '../error.js';
import { findReferencesIn } from '../expand/value-references.js';

export interface ObjectsOptions {
  /** The namespace of namespaced objects that set none. */
  namespace: string;
  /** Who is asking, for the message: `dm argocd generate`, `dm fn`. */
  mode: string;
}

/** The objects' bodies (apiVersion, kind, metadata.name first-class), or an error. */
export function objectsOf(resources: Primitive[], options: ObjectsOptions): Record<string, unknown>[] {
  const names = new Set(resources.map((r) => r.name));
  for (const r of resources) {
    const [first] = findReferencesIn(r.properties ?? {}, names, r.name);
    if (first) {
      throw new DmError(
        'REFERENCE_NEEDS_CLUSTER',
        `resource '${r.name}': ${first.text} at ${first.at} needs the live object '${first.name}', which ${options.mode} cannot read; write the value itself, or deploy with dm deploy`,
        { details: { resource: r.name, reference: first.text, at: first.at } },
      );
    }
  }
  return toObjects(resources, {
    served: undefined,
    defaultNamespace: options.namespace,
    labels: {},
    annotations: {},
  }).map((o) => withoutEmptyMetadata(o.body));
}

/** toObjects always writes labels and annotations; empty ones are left out of the objects printed. */
function withoutEmptyMetadata(body: Record<string, unknown>): Record<string, unknown> {
  const metadata = { ...(body.metadata as Record<string, unknown>) };
  for (const key of ['labels', 'annotations']) {
    const value = metadata[key];
    if (value && typeof value === 'object' && Object.keys(value).length === 0) delete metadata[key];
  }
  return { ...body, metadata };
}

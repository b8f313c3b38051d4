/**
 * `dm blueprint apply` (docs/blueprints.md "apply"): the Kubernetes objects of the
 * rendered `landscaper.gardener.cloud/kubernetes-manifest` deploy items go through dm deploy's
 * apply path (client/src/deploy/), one run-order layer after the other. Each step deploys every
 * object of the layers so far under one deployment name, so an earlier layer is never pruned
 * and a later layer starts only after the earlier ones were applied; only the last step prunes,
 * with dm deploy's prune guard (`pruneAll`). Other deploy item types are reported as skipped.
 */

import { isMapping } from '../data.js';
import { formatYamlDocuments } from '../document/yaml.js';
import { DmError } from '../error.js';
import type { DeploymentStore } from '../state/deployments-store.js';
import type { RenderResult } from './engine.js';

export const MANIFEST_TYPE = 'landscaper.gardener.cloud/kubernetes-manifest';

type Obj = Record<string, unknown>;

export interface ManifestLayer {
  /** `<installation path>/<deploy item>` of the items in this layer. */
  items: string[];
  objects: Obj[];
}

export interface SkippedItem {
  installation: string;
  item: string;
  type: string;
}

/**
 * The objects to apply, in layers: installations in the order they were rendered (parents
 * before children, siblings in subinstallation order), each installation's deployOrder layers in
 * turn. A linear order that respects every dependsOn edge and every sibling dependency.
 */
export function manifestLayers(result: RenderResult): { layers: ManifestLayer[]; skipped: SkippedItem[] } {
  const layers: ManifestLayer[] = [];
  const skipped: SkippedItem[] = [];
  for (const [path, inst] of Object.entries(result.installations)) {
    const items = new Map((inst.deployItems ?? []).map((d) => [String(d.name), d]));
    for (const layer of inst.deployOrder ?? []) {
      const out: ManifestLayer = { items: [], objects: [] };
      for (const name of layer) {
        const item = items.get(name);
        if (!item) continue;
        if (item.type !== MANIFEST_TYPE) {
          skipped.push({ installation: path, item: name, type: String(item.type) });
          continue;
        }
        const config = isMapping(item.config) ? item.config : {};
        const manifests = Array.isArray(config.manifests) ? config.manifests : [];
        for (const [i, m] of manifests.entries()) {
          const manifest =
            isMapping(m) && isMapping(m.manifest)
              ? m.manifest
              : isMapping(m) && 'apiVersion' in m
                ? m
                : undefined;
          if (!manifest || typeof manifest.apiVersion !== 'string' || typeof manifest.kind !== 'string') {
            throw new DmError(
              'INVALID_DEPLOY_ITEM',
              `deploy item ${path}/${name}: config.manifests[${i}] is not a Kubernetes object`,
              {
                category: 'invalid-input',
              },
            );
          }
          out.objects.push(manifest);
        }
        out.items.push(`${path}/${name}`);
      }
      if (out.objects.length > 0) layers.push(out);
    }
  }
  return { layers, skipped };
}

export interface ApplyOptions {
  store: DeploymentStore;
  kubectl: import('../deploy/kubectl.js').Kubectl;
  /** Deployment name, default the root installation's name. */
  name?: string;
  dryRun?: boolean;
  wait?: boolean;
  timeoutSeconds?: number;
  /** Let the apply prune every object of the deployment, or more than half (`--prune-all`). */
  pruneAll?: boolean;
}

export interface ApplyResult {
  deployment: string;
  status: 'applied' | 'failed' | 'dry-run' | 'nothing to apply';
  layers: { items: string[]; objects: number; status: string; manifest?: string }[];
  skipped: SkippedItem[];
  plan?: unknown;
}

export async function applyRenderedBlueprint(
  result: RenderResult,
  options: ApplyOptions,
): Promise<ApplyResult> {
  const { primitivesFromObjects } = await import('../deploy/input.js');
  const { deployConfiguration, planDeployment, validateDeploymentName } = await import('../deploy/deploy.js');
  const rootName = Object.keys(result.installations)[0] ?? 'blueprint';
  const name = options.name ?? rootName;
  validateDeploymentName(name);
  const { layers, skipped } = manifestLayers(result);
  const out: ApplyResult = { deployment: name, status: 'nothing to apply', layers: [], skipped };
  if (layers.length === 0) return out;
  const inputFor = (objects: Obj[]) => {
    const resources = primitivesFromObjects(objects, `blueprint ${rootName}`);
    return {
      inputConfig: { config: formatYamlDocuments(objects), imports: [] },
      config: { resources },
      layout: { resources: resources.map((r) => ({ name: r.name, type: r.type })) },
      references: [],
    };
  };
  const common = {
    name,
    store: options.store,
    kubectl: options.kubectl,
    timeoutSeconds: options.timeoutSeconds ?? 300,
    ...(options.pruneAll ? { pruneAll: true } : {}),
  };
  if (options.dryRun) {
    out.plan = await planDeployment({ ...common, input: inputFor(layers.flatMap((l) => l.objects)) });
    out.status = 'dry-run';
    out.layers = layers.map((l) => ({ items: l.items, objects: l.objects.length, status: 'planned' }));
    return out;
  }
  const soFar: Obj[] = [];
  for (const [i, layer] of layers.entries()) {
    soFar.push(...layer.objects);
    // Only the last step, which holds every object, prunes (with dm deploy's prune guard): an
    // earlier step must not delete what a later layer of this same run applies again.
    const applied = await deployConfiguration({
      ...common,
      input: inputFor(soFar),
      wait: Boolean(options.wait),
      ...(i < layers.length - 1 ? { prune: false } : {}),
    });
    out.layers.push({
      items: layer.items,
      objects: layer.objects.length,
      status: applied.status,
      manifest: applied.manifest,
    });
    if (applied.status !== 'applied') {
      out.status = 'failed';
      throw new DmError(
        'DEPLOY_FAILED',
        `deployment '${name}' failed while applying ${layer.items.join(', ')} (manifest ${applied.manifest})`,
        {
          hint: `see dm manifests ${name} ${applied.manifest}`,
          details: { ...out, resources: applied.resources },
        },
      );
    }
  }
  out.status = 'applied';
  return out;
}

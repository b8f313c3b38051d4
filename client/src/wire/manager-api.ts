/**
 * The JSON shapes of the Deployment Manager API (docs/manager.md), as they travel: the manager's
 * routes build them (server/src/manager/shapes.ts), the OpenAPI description documents them, and
 * `dm --manager-url` reads them. They follow DM's model: a deployment (name, state, latest
 * manifest), a manifest (inputConfig, expandedConfig, layout), plus dm's operations. A leaf: it
 * imports nothing.
 */

export interface DeploymentSummary {
  name: string;
  state: string;
  latestManifest: string | null;
  cluster: string;
  namespace: string;
  updatedAt: string;
}

/** An object of a deployment: its resource in the configuration and its identity in the cluster. */
export interface ObjectIdentity {
  /** The resource's name in the configuration. */
  name: string;
  type: string;
  apiVersion: string;
  kind: string;
  /** '' for cluster-scoped objects. */
  namespace: string;
  objectName: string;
}

/** One object of a manifest and what applying it did. */
export interface ResourceView extends ObjectIdentity {
  level: number;
  action: string;
  outcome: string;
  message?: string;
}

export interface DeploymentView extends DeploymentSummary {
  lastGoodManifest: string | null;
  createdAt: string;
  manifests: string[];
  resources: ResourceView[];
}

export interface ManifestSummary {
  name: string;
  deployment: string;
  action: string;
  status: string;
  createdAt: string;
}

/** A manifest's documents, as stored when it was made. */
export interface ManifestDocuments {
  target: Record<string, unknown>;
  inputConfig: unknown;
  expandedConfig: unknown;
  layout: unknown;
  references: unknown;
  resolvedValues: unknown;
}

export interface ManifestView extends ManifestSummary, ManifestDocuments {
  error?: string;
  finishedAt?: string;
  resources: ResourceView[];
}

export interface LevelProgress {
  action: 'apply' | 'prune';
  level: number;
  total: number;
  done: number;
  failed: number;
  pending: number;
}

export interface OperationView {
  id: string;
  deployment: string;
  action: string;
  status: string;
  actor: string;
  cluster: string;
  namespace: string;
  manifest: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  progress: LevelProgress[];
  errors: { resource: string; message: string }[];
  error?: string;
}

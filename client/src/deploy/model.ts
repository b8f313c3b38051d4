/**
 * The shapes deployments work with (docs/deployments.md, docs/expansion.md "Configurations and expansion"): an expanded
 * configuration of primitives, its layout, and what applying each resource came to.
 */

export interface Primitive {
  name: string;
  type: string;
  properties?: Record<string, unknown>;
}

export interface ExpandedConfig {
  resources: Primitive[];
}

export interface LayoutEntry {
  name: string;
  type: string;
  properties?: Record<string, unknown>;
  resources?: LayoutEntry[];
  /** A template's `outputs:` as expansion knows them (docs/expansion.md "Template outputs"). */
  outputs?: { name: string; value: unknown }[];
}

export interface Layout {
  resources: LayoutEntry[];
}

/** The configuration as given: the top file and every imported file. */
export interface InputConfig {
  config: string;
  imports: { name: string; path?: string; content: string }[];
  /** A rollback's manifest: the manifest whose configuration it applied again (docs/deployments.md "Rollback and history"). */
  restoredFrom?: string;
}

/** A registry reference resolved while expanding, with what pins it. */
export interface ResolvedReference {
  reference: string;
  resolved: string;
  commit?: string;
  digest?: string;
}

/** What `dm deploy` hands the applier: an expanded configuration and where it came from. */
export interface DeploymentInput {
  inputConfig: InputConfig;
  config: ExpandedConfig;
  layout: Layout;
  references: ResolvedReference[];
}

export type ResourceOutcome =
  | 'pending'
  | 'applying'
  | 'applied'
  | 'failed'
  | 'not-attempted'
  | 'pruned'
  | 'prune-failed';

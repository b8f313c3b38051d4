/** Deployments and cluster application (docs/deployments.md): the public surface of `client/src/deploy`. */
export {
  type ApplyOptions,
  type ApplyResult,
  applyObjects,
  type PlannedObject,
  pruneObjects,
  type ResourceResult,
} from './apply.js';
export {
  type DeployOptions,
  type DeployResult,
  type DryRunResult,
  deleteDeployment,
  deployConfiguration,
  planDeployment,
  typeInstancesOf,
  validateDeploymentName,
} from './deploy.js';
export {
  defaultDeploymentName,
  type LoadInputOptions,
  loadDeploymentInput,
  primitivesFromObjects,
} from './input.js';
export { Kubectl, type KubectlOptions } from './kubectl.js';
export type { DeploymentInput, ExpandedConfig, Layout, LayoutEntry, Primitive } from './model.js';
export { type KubeObject, parsePrimitiveType, toObjects } from './objects.js';
export { findReferences, planLevels } from './plan.js';

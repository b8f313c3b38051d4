/** Deployments and cluster application (docs/deployments.md): the public surface of `client/src/deploy`. */
export {
  type ApplyOptions,
  type ApplyResult,
  applyObjects,
  getLive,
  type PlannedObject,
  pruneObjects,
  type ResourceResult,
} from './apply.js';
export {
  checkPrunes,
  type DeployOptions,
  type DeployResult,
  type DryRunResult,
  deleteDeployment,
  deployConfiguration,
  planDeployment,
  readTarget,
  servedKinds,
  typeInstancesOf,
  validateDeploymentName,
} from './deploy.js';
export { type DiffResult, diffDeployment, driftDeployment } from './diff.js';
export {
  defaultDeploymentName,
  type LoadInputOptions,
  loadDeploymentInput,
  primitivesFromObjects,
} from './input.js';
export { Kubectl, type KubectlOptions } from './kubectl.js';
export type { DeploymentInput, ExpandedConfig, Layout, LayoutEntry, Primitive } from './model.js';
export { type KubeObject, objectKey, parsePrimitiveType, toObjects } from './objects.js';
export { findReferences, planLevels } from './plan.js';
export { deploymentHistory, type HistoryEntry, planRollback, rollbackInput } from './rollback.js';

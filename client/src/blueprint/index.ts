/**
 * Landscaper-style blueprints (docs/blueprints.md): `dm blueprint render|apply`. The module's
 * public surface.
 */
export {
  type BlueprintInputs,
  type BlueprintSource,
  deepMerge,
  type Files,
  type InstallationResult,
  type RenderOptions,
  type RenderResult,
  renderBlueprint,
} from './engine.js';
export { BlueprintError, PHASES, type Phase } from './errors.js';
export { inputsFromDocument, readBlueprintDir, readImportsFile } from './load.js';
export { generateDataObjectName } from './names.js';
export { type DependencyNode, findCycleBfs, findCycleDfs, layers } from './order.js';
export { type RunOptions, runBlueprintRender } from './run.js';
export { BlueprintSandbox, type BlueprintSandboxOptions, type TemplateRenderer } from './sandbox.js';

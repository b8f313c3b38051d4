/**
 * The expansion engine (docs/expansion.md): configurations → {config, layout}, Jinja templates
 * with Jinja2's semantics, Python templates, schemas, value references, and the sandbox they
 * render in. This is the module's whole public surface.
 */
export {
  type ConfigurationInput,
  cpuMs,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_TEMPLATES,
  type ExpandOptions,
  type ExpansionResult,
  type ExpansionTimings,
  expandConfiguration,
  expandFile,
  looksLikeTemplate,
  type ParsedConfiguration,
  parseConfiguration,
} from './expand-configuration.js';
export {
  chainTemplateSources,
  type ImportEntry,
  LocalTemplateSource,
  type LocalTemplateSourceOptions,
  lazyTemplateSource,
  templateKindOf,
} from './local-template-source.js';
export { type RenderedTemplate, type RenderTemplateOptions, renderTemplateFile } from './render-template.js';
export {
  type PythonResult,
  RenderSandbox,
  type SandboxOptions,
  type SandboxTimings,
  type TemplateRequest,
} from './sandbox/render-sandbox.js';
export {
  parseTemplateSchema,
  pythonTypeNameWarnings,
  SCHEMA_VALIDATION_MODES,
  type SchemaValidationMode,
  type TemplateSchema,
} from './schema.js';
export { applySchema, checkTemplateSchema } from './schema-validation.js';
export type {
  ExpandedConfiguration,
  LayoutResource,
  LoadedTemplate,
  Resource,
  TemplateFile,
  TemplateKind,
  TemplateSource,
  Warning,
} from './types.js';
export {
  buildReferenceGraph,
  findValueReferences,
  type ReferenceGraph,
  type ValueReference,
} from './value-references.js';

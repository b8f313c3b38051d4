/** The expansion engine's vocabulary (docs/expansion.md, "Configurations and expansion"). */

/** A resource as written in a configuration or a template's output. */
export interface Resource {
  name: string;
  type: string;
  properties?: Record<string, unknown>;
  [field: string]: unknown;
}

/** One entry of the layout: templates carry their properties and the layout of their output. */
export interface LayoutResource {
  name: string;
  type: string;
  properties?: Record<string, unknown>;
  resources?: LayoutResource[];
  /** Only for templates that declare them: `outputs: [{name, value}]` (docs/expansion.md, "Template outputs"). */
  outputs?: { name: string; value: unknown }[];
}

/** What `dm expand` prints. */
export interface ExpandedConfiguration {
  config: { resources: Resource[] };
  layout: { resources: LayoutResource[] };
}

/** A file a template can see: its import name, where it came from, its text. */
export interface TemplateFile {
  /** The name templates use (`helpers/common.jinja`, or the `name:` alias of an import). */
  name: string;
  /** A path or reference, for messages. */
  path: string;
  content: string;
}

export type TemplateKind = 'jinja' | 'python';

/** A template ready to render, as a TemplateSource returns it. */
export interface LoadedTemplate {
  /** The type as written in the resource (`redis.jinja`, `github.com/o/r/redis:v1`, a URL). */
  type: string;
  /** Where it came from (file path, reference with version), for messages. */
  path: string;
  kind: TemplateKind;
  content: string;
  /** `<template>.schema`, when there is one. */
  schema?: TemplateFile;
  /**
   * One of the user's own files (the local source: the configuration's imports, files beside it,
   * `--imports-dir`), not content fetched from a registry: in `strict` mode its schema's top-level
   * `additionalProperties: false` warns instead of failing, as DM accepted it (docs/expansion.md,
   * "Schemas").
   */
  ownFile?: boolean;
  /**
   * Every file the template can see by name: `{% include %}`, Python imports, `imports` in the
   * context, and the types its output uses. For local templates this is the configuration's
   * whole import set; for a registry version, that version's files.
   */
  files: Map<string, TemplateFile>;
}

/**
 * Where templates come from. `load` returns `null` for "not mine", so sources chain: the local
 * source (imports, files next to the configuration, `--imports-dir`) first, then registry
 * references and URLs (wired by the lead over client/src/reference and the resolver chain).
 *
 * `from` is the template whose output names `typeRef` (undefined at the top level); a source
 * resolves relative names against it (a registry template's own files, a URL's base path).
 */
export interface TemplateSource {
  load(typeRef: string, from?: LoadedTemplate): Promise<LoadedTemplate | null>;
}

export interface Warning {
  code: string;
  message: string;
}

/**
 * How property violations are treated: `strict` (default) fails the expansion; `warn` expands
 * anyway and reports every violation (as DM's expander did without VALIDATE_SCHEMA); `off`
 * only fills in defaults.
 */
export type SchemaValidationMode = 'strict' | 'warn' | 'off';
export const SCHEMA_VALIDATION_MODES: readonly SchemaValidationMode[] = ['strict', 'warn', 'off'];

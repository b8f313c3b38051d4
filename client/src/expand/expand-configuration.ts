/**
 * Expansion (docs/expansion.md, "Configurations and expansion"): a configuration becomes a flat list of primitive
 * resources plus a layout, recursively, as Deployment Manager expanded it. Templates render in
 * the RenderSandbox (one per run: one Jinja process, one Python process); where templates come
 * from is a TemplateSource chain (local files first, registry references from injected sources).
 */

import { basename, dirname, resolve } from 'node:path';
import { isMapping, mergeDeep } from '../data.js';
import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';
import {
  isTemplateReferenceType,
  missingVWarning,
  oneResourceConfiguration,
  readTextFile,
} from '../input.js';
import { nearest } from '../nearest.js';
import { cloneData, plainFloatsInPlace } from '../python/values.js';
import { checkConfigurationKeys, unknownResourceKeys } from './configuration-keys.js';
import {
  chainTemplateSources,
  type ImportEntry,
  LocalTemplateSource,
  templateKindOf,
} from './local-template-source.js';
import { parseRenderedYaml } from './rendered-yaml.js';
import { RenderSandbox, type SandboxOptions } from './sandbox/render-sandbox.js';
import { parseTemplateSchema, type SchemaValidationMode, type TemplateSchema } from './schema.js';
import type {
  ExpandedConfiguration,
  LayoutResource,
  LoadedTemplate,
  Resource,
  TemplateSource,
  Warning,
} from './types.js';
import {
  buildReferenceGraph,
  type ReferenceGraph,
  resolveTemplateOutputs,
  type TemplateOutput,
  type TemplateOutputs,
} from './value-references.js';
import { checkNodeBudget, DEFAULT_MAX_NODES } from './yaml-budget.js';

export interface ConfigurationInput {
  /** The configuration's YAML text. */
  content: string;
  /** Its path (messages, and the directory imports are relative to). */
  path: string;
}

export interface ExpandOptions {
  /** Sources for what local files do not provide (registry references, URLs), tried in order. */
  sources?: readonly TemplateSource[];
  /** `--imports-dir`. */
  importsDir?: string;
  /** The deployment name (`env.deployment`); default: the configuration's base name. */
  deployment?: string;
  /** `env.project`; default ''. */
  project?: string;
  /** Extra `env` entries (`--env k=v`). */
  env?: Record<string, unknown>;
  /** Merged into the properties of every top-level template resource (values files, --properties). */
  properties?: Record<string, unknown>;
  /** Clock for `env.current_time`. */
  now?: () => Date;
  /** Expansion depth bound, default 32. */
  maxDepth?: number;
  /** Largest document (in nodes, aliases expanded) accepted from a configuration or template. */
  maxNodes?: number;
  /** Most template renders in one run (a template that multiplies itself), default 100,000. */
  maxTemplates?: number;
  /** Limits of the rendering processes, or an existing sandbox to reuse (the caller closes it). */
  sandbox?: SandboxOptions | RenderSandbox;
  /** Check value references and build their graph (default true). */
  references?: boolean;
  /** Receives warnings as they happen (they are also returned). */
  onWarning?: (warning: Warning) => void;
  /** Properties that break a template's schema: fail (`strict`, default), warn, or ignore. */
  schemaValidation?: SchemaValidationMode;
  /**
   * Keep floats with an integral value as PyFloat in the result (they print `1.0` through
   * formatYaml, as DM's output did): for `dm expand`'s output. Default false: plain numbers, as
   * other consumers (deploy, JSON) take data; a PyFloat does not survive structuredClone.
   */
  pythonValues?: boolean;
  /** Adds up where the main process's time went (bench/expand.ts prints it). */
  timings?: ExpansionTimings;
  /**
   * Why imports by URL are refused (docs/expansion.md "Imports by URL"): set where nothing may
   * fetch the URLs a configuration names (the manager API). Absent: they are loaded through
   * `sources` as plain URL references.
   */
  refuseUrlImports?: string;
}

/** This process's CPU time in ms: the timings count work, not waiting (a busy machine). */
export function cpuMs(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
}

/** CPU milliseconds of the main process's own work, by step (rendering: RenderSandbox.timings). */
export interface ExpansionTimings {
  /** Reading the configuration. */
  configurationMs: number;
  /** Reading Python templates' text output as YAML. */
  outputYamlMs: number;
  /** Value references and their graph. */
  referencesMs: number;
}

export interface ExpansionResult extends ExpandedConfiguration {
  warnings: Warning[];
  /** The value-reference dependency graph over the primitives (deploy ordering). */
  references: ReferenceGraph;
  /** The files read from disk by the local source (imports, files beside it, their schemas). */
  localFiles?: string[];
  /** Where a type's template file was looked for and not found (it stayed a primitive). */
  absentFiles?: string[];
}

export const DEFAULT_MAX_DEPTH = 32;
export const DEFAULT_MAX_TEMPLATES = 100_000;
const SIBLINGS_IN_FLIGHT = 64;

/** Whether a type could be a template: a template file name, a registry reference, or a URL. */
export function looksLikeTemplate(type: string): boolean {
  return templateKindOf(type) !== undefined || isTemplateReferenceType(type);
}

function stableKey(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableKey).join(',')}]`;
  if (isMapping(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableKey(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

export interface ParsedConfiguration {
  imports: ImportEntry[];
  resources: unknown[];
}

/** Reads a configuration document: `imports` and `resources` (missing or null → empty). */
export function parseConfiguration(
  content: string,
  source: string,
  maxNodes = DEFAULT_MAX_NODES,
): ParsedConfiguration {
  const doc = parseYaml(content, { source, dialect: 'pyyaml' });
  checkNodeBudget(doc, source, maxNodes);
  if (doc === null || doc === undefined) return { imports: [], resources: [] };
  if (!isMapping(doc)) {
    throw new DmError(
      'INVALID_CONFIGURATION',
      `${source}: a configuration must be a YAML mapping with 'resources:'`,
      {
        category: 'invalid-input',
      },
    );
  }
  checkConfigurationKeys(doc, source);
  const resources = doc.resources ?? [];
  if (!Array.isArray(resources)) {
    throw new DmError('INVALID_CONFIGURATION', `${source}: 'resources' must be a list`, {
      category: 'invalid-input',
    });
  }
  const rawImports = doc.imports ?? [];
  if (!Array.isArray(rawImports)) {
    throw new DmError('INVALID_CONFIGURATION', `${source}: 'imports' must be a list`, {
      category: 'invalid-input',
    });
  }
  const imports = rawImports.map((entry, i): ImportEntry => {
    if (typeof entry === 'string') return { path: entry, name: entry };
    if (isMapping(entry) && typeof entry.path === 'string') {
      return { path: entry.path, name: typeof entry.name === 'string' ? entry.name : entry.path };
    }
    throw new DmError('INVALID_CONFIGURATION', `${source}: imports[${i}] must be a path or {path, name}`, {
      category: 'invalid-input',
    });
  });
  return { imports, resources };
}

const filesRecords = new WeakMap<Map<string, unknown>, { size: number; record: Record<string, string> }>();

/** The files of a scope as one record, the same object while the scope does not grow. */
function filesRecord(files: LoadedTemplate['files']): Record<string, string> {
  const cached = filesRecords.get(files);
  if (cached && cached.size === files.size) return cached.record;
  const record: Record<string, string> = {};
  for (const [name, file] of files) record[name] = file.content;
  filesRecords.set(files, { size: files.size, record });
  return record;
}

interface Expanded {
  layout: LayoutResource[];
  primitives: Resource[];
  warnings: Warning[];
}

interface Frame {
  /** The template whose output is being expanded (undefined: the configuration). */
  template: LoadedTemplate | undefined;
  /** For messages: `configuration config.yaml` or `template 'rs.jinja'`. */
  where: string;
  /** The file the resources came from, for messages. */
  file: string;
  depth: number;
  chain: ChainLink[];
}

/**
 * One template instance on the way down to a frame. Its cycle key (the properties in a canonical
 * text) is made only when a descendant renders the same template: a chain of different
 * templates, the common case, never writes its properties out.
 */
interface ChainLink {
  type: string;
  properties: Record<string, unknown>;
  label: string;
  key?: string;
}

function cycleKey(link: ChainLink): string {
  link.key ??= stableKey(link.properties);
  return link.key;
}

/** Whether two instances are the same template with the same properties. */
function sameInstance(a: ChainLink, b: ChainLink): boolean {
  return a.type === b.type && cycleKey(a) === cycleKey(b);
}

class Expander {
  private readonly maxDepth: number;
  private readonly maxNodes: number;
  private readonly maxTemplates: number;
  private rendered = 0;
  private readonly currentTime: string;

  constructor(
    private readonly source: TemplateSource,
    private readonly sandbox: RenderSandbox,
    private readonly options: ExpandOptions,
    private readonly deployment: string,
  ) {
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.maxNodes = options.maxNodes ?? DEFAULT_MAX_NODES;
    this.maxTemplates = options.maxTemplates ?? DEFAULT_MAX_TEMPLATES;
    this.currentTime = (options.now?.() ?? new Date()).toISOString();
  }

  private checkResources(list: unknown[], frame: Frame): Resource[] {
    const names = new Set<string>();
    return list.map((raw, i) => {
      if (!isMapping(raw)) {
        throw new DmError(
          'INVALID_RESOURCE',
          `${frame.file}: resources[${i}] in ${frame.where} is not a mapping`,
          {
            category: 'invalid-input',
          },
        );
      }
      const label = typeof raw.name === 'string' ? `'${raw.name}'` : `resources[${i}]`;
      if (typeof raw.name !== 'string' || raw.name === '') {
        throw new DmError(
          'RESOURCE_NAME_MISSING',
          `${frame.file}: Resource does not have a name: resources[${i}] in ${frame.where}`,
          {
            category: 'invalid-input',
            details: { index: i, file: frame.file },
          },
        );
      }
      if (typeof raw.type !== 'string' || raw.type === '') {
        throw new DmError(
          'RESOURCE_TYPE_MISSING',
          `${frame.file}: Resource does not have type defined: ${label} in ${frame.where}`,
          {
            category: 'invalid-input',
            details: { resource: raw.name, file: frame.file },
          },
        );
      }
      if (raw.properties !== undefined && raw.properties !== null && !isMapping(raw.properties)) {
        throw new DmError(
          'INVALID_PROPERTIES',
          `${frame.file}: properties of ${label} in ${frame.where} must be a mapping`,
          {
            category: 'invalid-input',
          },
        );
      }
      if (names.has(raw.name)) {
        throw new DmError(
          'DUPLICATE_RESOURCE_NAME',
          `${frame.file}: Resource name '${raw.name}' is not unique in ${frame.where}`,
          {
            category: 'invalid-input',
            details: { resource: raw.name, in: frame.where },
          },
        );
      }
      names.add(raw.name);
      return raw as Resource;
    });
  }

  /**
   * Expands one list of resources. Siblings expand concurrently (their renders pipeline through
   * the sandbox); results are assembled in declaration order, and when several fail, the first
   * failure in declaration order is the one reported.
   */
  async expandList(list: unknown[], frame: Frame, overrides?: Record<string, unknown>): Promise<Expanded> {
    const resources = this.checkResources(list, frame);
    const keyWarnings: Warning[] = resources.flatMap((r) =>
      unknownResourceKeys(r as unknown as Record<string, unknown>, `'${r.name}'`).map((said) => ({
        code: 'UNKNOWN_RESOURCE_KEY',
        message: `${frame.file}: ${said}`,
      })),
    );
    // A window of siblings in flight keeps the rendering processes busy without holding every
    // sibling's request, answer and properties in memory at once (less garbage collection).
    const settled: PromiseSettledResult<Expanded>[] = new Array(resources.length);
    let next = 0;
    const lane = async () => {
      while (next < resources.length) {
        const i = next++;
        try {
          settled[i] = { status: 'fulfilled', value: await this.expandOne(resources[i]!, frame, overrides) };
        } catch (reason) {
          settled[i] = { status: 'rejected', reason };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(SIBLINGS_IN_FLIGHT, resources.length) }, lane));
    const out: Expanded = { layout: [], primitives: [], warnings: keyWarnings };
    for (const s of settled) {
      if (s.status === 'rejected') throw s.reason;
      out.layout.push(s.value.layout[0]!);
      for (const p of s.value.primitives) out.primitives.push(p);
      for (const w of s.value.warnings) out.warnings.push(w);
    }
    return out;
  }

  private async expandOne(
    resource: Resource,
    frame: Frame,
    overrides?: Record<string, unknown>,
  ): Promise<Expanded> {
    const template = looksLikeTemplate(resource.type)
      ? await this.source.load(resource.type, frame.template)
      : null;
    if (!template) {
      const warnings: Warning[] = [];
      if (templateKindOf(resource.type) !== undefined) {
        warnings.push({
          code: 'TEMPLATE_NOT_FOUND',
          message: `${frame.file}: type '${resource.type}' of '${resource.name}' looks like a template but is neither imported nor present; treated as a primitive`,
        });
      } else {
        const said = missingVWarning(resource.type, resource.name);
        if (said) warnings.push({ code: 'INVALID_VERSION', message: `${frame.file}: ${said}` });
      }
      return { layout: [{ name: resource.name, type: resource.type }], primitives: [resource], warnings };
    }
    let written = isMapping(resource.properties) ? resource.properties : {};
    if (overrides) written = mergeDeep(written, overrides);
    const entry: LayoutResource = { name: resource.name, type: resource.type };
    const inner = await this.expandTemplate(resource, template, written, frame);
    if (overrides && template.schema) {
      inner.warnings.unshift(...unknownOverrides(overrides, parseTemplateSchema(template.schema), resource));
    }
    // As DM's layout: the properties the template saw (schema defaults applied), and no
    // `resources` key when the template rendered none.
    if (resource.properties !== undefined || overrides || template.schema)
      entry.properties = inner.properties;
    if (inner.layout.length > 0) entry.resources = inner.layout;
    if (inner.outputs.length > 0) entry.outputs = inner.outputs;
    return { layout: [entry], primitives: inner.primitives, warnings: inner.warnings };
  }

  /** A template instance that repeats one above it (same template, same properties) is a cycle. */
  private refuseCycle(frame: Frame, link: ChainLink, chain: ChainLink[]): void {
    const start = frame.chain.findIndex((c) => sameInstance(c, link));
    if (start >= 0) {
      throw new DmError(
        'TEMPLATE_CYCLE',
        `template cycle: ${chain
          .slice(start)
          .map((c) => c.label)
          .join(' → ')} instantiates itself with the same properties`,
        { category: 'invalid-input', details: { chain: chain.map((c) => c.label) } },
      );
    }
  }

  private async expandTemplate(
    resource: Resource,
    template: LoadedTemplate,
    written: Record<string, unknown>,
    frame: Frame,
  ): Promise<Expanded & { properties: Record<string, unknown>; outputs: TemplateOutput[] }> {
    const violations: Warning[] = [];
    const timings = this.options.timings;
    const check = template.schema
      ? {
          subject: `${resource.name} (${template.path})`,
          mode: this.options.schemaValidation ?? 'strict',
          ...(template.ownFile ? { ownFile: true } : {}),
        }
      : undefined;
    // Checked against the schema in the Jinja rendering process, under its limits (docs/expansion.md,
    // "Isolation"): for a Jinja template in the request that renders it, else on its own.
    const checkedWithRendering = template.schema !== undefined && template.kind === 'jinja';
    let properties = written;
    if (!template.schema) properties = cloneData(written) as Record<string, unknown>;
    else if (!checkedWithRendering) {
      const checked = await this.sandbox.applySchema({
        schema: template.schema,
        properties: written,
        ...check!,
      });
      properties = checked.properties;
      for (const message of checked.violations) violations.push({ code: 'SCHEMA_VIOLATION', message });
    }
    const link: ChainLink = { type: template.type, properties, label: `${resource.name} (${template.type})` };
    const chain = [...frame.chain, link];
    if (!checkedWithRendering) this.refuseCycle(frame, link, chain);
    if (frame.depth + 1 > this.maxDepth) {
      throw new DmError(
        'EXPANSION_TOO_DEEP',
        `limit: expansion is deeper than ${this.maxDepth} levels: ${chain.map((c) => c.label).join(' → ')}`,
        { category: 'limit', details: { maxDepth: this.maxDepth } },
      );
    }
    if (++this.rendered > this.maxTemplates) {
      throw new DmError(
        'TOO_MANY_TEMPLATES',
        `limit: more than ${this.maxTemplates} templates to render (last: ${chain.map((c) => c.label).join(' → ')})`,
        { category: 'limit', details: { maxTemplates: this.maxTemplates } },
      );
    }
    const imports = filesRecord(template.files);
    const env: Record<string, unknown> = {
      deployment: this.deployment,
      name: resource.name,
      type: resource.type,
      project: this.options.project ?? '',
      current_time: this.currentTime,
      ...(this.options.env ?? {}),
    };
    const request = {
      name: template.type,
      source: template.content,
      context: { properties, env },
      files: imports,
      importsAreFiles: true,
      ...(template.ownFile ? { ownFile: true } : {}),
    };
    let output: unknown;
    const outputSource = `${template.path} (output for '${resource.name}')`;
    if (template.kind === 'python') {
      const result = await this.sandbox.renderPython(request);
      if ('text' in result) {
        const parseStart = timings ? cpuMs() : 0;
        output = parseRenderedYaml(result.text, { source: outputSource, dialect: 'pyyaml' });
        if (timings) timings.outputYamlMs += cpuMs() - parseStart;
      } else output = result.data;
      checkNodeBudget(output, outputSource, this.maxNodes);
    } else if (checkedWithRendering) {
      // Bounded where it was parsed, in the Jinja process; rendered with the checked properties.
      const parse = { source: outputSource, maxNodes: this.maxNodes };
      const result = await this.sandbox.renderJinjaChecked(
        { ...request, schema: template.schema! },
        parse,
        check!,
      );
      output = result.data;
      properties = result.properties;
      link.properties = properties;
      for (const message of result.violations) violations.push({ code: 'SCHEMA_VIOLATION', message });
      this.refuseCycle(frame, link, chain);
    } else {
      // Bounded where it was parsed, in the Jinja process.
      output = await this.sandbox.renderJinjaData(request, { source: outputSource, maxNodes: this.maxNodes });
    }
    if (!isMapping(output) || !('resources' in output)) {
      throw new DmError(
        'TEMPLATE_NO_RESOURCES',
        `${template.path}: Template did not return a 'resources:' field`,
        {
          category: 'invalid-input',
          details: { template: template.path, resource: resource.name },
        },
      );
    }
    const list = output.resources ?? [];
    if (!Array.isArray(list)) {
      throw new DmError(
        'TEMPLATE_NO_RESOURCES',
        `${template.path}: 'resources' in the template's output must be a list`,
        {
          category: 'invalid-input',
        },
      );
    }
    const outputs = templateOutputs(output.outputs, template.path);
    const expanded = await this.expandList(list, {
      template,
      where: `template '${template.type}'`,
      file: template.path,
      depth: frame.depth + 1,
      chain,
    });
    return { ...expanded, warnings: [...violations, ...expanded.warnings], properties, outputs };
  }
}

/** A template's `outputs:` as DM read it: a list of `{name, value}`; absent or null is none. */
function templateOutputs(raw: unknown, file: string): { name: string; value: unknown }[] {
  if (raw === undefined || raw === null) return [];
  const bad = (what: string) =>
    new DmError('TEMPLATE_INVALID_OUTPUTS', `${file}: ${what}`, {
      category: 'invalid-input',
      details: { template: file },
    });
  if (!Array.isArray(raw)) throw bad("'outputs' in the template's output must be a list of {name, value}");
  const seen = new Set<string>();
  return raw.map((entry, i) => {
    if (!isMapping(entry) || typeof entry.name !== 'string' || entry.name === '') {
      throw bad(`outputs[${i}] must be a mapping with a name and a value`);
    }
    if (seen.has(entry.name)) throw bad(`output '${entry.name}' is declared twice`);
    seen.add(entry.name);
    return { name: entry.name, value: entry.value ?? null };
  });
}

/** The layout's templates with the outputs they declared, outer ones first. */
function layoutOutputs(layout: readonly LayoutResource[], out: TemplateOutputs[] = []): TemplateOutputs[] {
  for (const entry of layout) {
    if (entry.outputs) out.push({ name: entry.name, outputs: entry.outputs });
    if (entry.resources) layoutOutputs(entry.resources, out);
  }
  return out;
}

/**
 * Expands a configuration into `{config, layout}` plus warnings and the value-reference graph.
 * `dm lint` calls this on each version's example.yaml.
 */
export async function expandConfiguration(
  input: ConfigurationInput,
  options: ExpandOptions = {},
): Promise<ExpansionResult> {
  const maxNodes = options.maxNodes ?? DEFAULT_MAX_NODES;
  const start = options.timings ? cpuMs() : 0;
  const parsed = parseConfiguration(input.content, input.path, maxNodes);
  if (options.timings) options.timings.configurationMs += cpuMs() - start;
  const others = chainTemplateSources(options.sources ?? []);
  const local = new LocalTemplateSource({
    baseDir: dirname(resolve(input.path)),
    ...(options.importsDir ? { importsDir: options.importsDir } : {}),
    imports: parsed.imports,
    configuration: input.path,
    // An import by URL is a plain URL reference of the sources after this one (url-imports.ts).
    ...(options.refuseUrlImports === undefined
      ? { loadUrl: (url: string) => others.load(url) }
      : { refuseUrlImports: options.refuseUrlImports }),
  });
  await local.ready();
  const source = chainTemplateSources([local, ...(options.sources ?? [])]);
  const ownSandbox = !(options.sandbox instanceof RenderSandbox);
  const sandbox =
    options.sandbox instanceof RenderSandbox ? options.sandbox : new RenderSandbox(options.sandbox ?? {});
  const deployment = options.deployment ?? basename(input.path).replace(/\.[^.]*$/, '');
  // The engines the imports name start at once, side by side.
  const kinds = new Set(parsed.imports.map((i) => templateKindOf(i.path)));
  sandbox.warm({ jinja: kinds.has('jinja'), python: kinds.has('python') });
  try {
    const expander = new Expander(source, sandbox, options, deployment);
    const expanded = await expander.expandList(
      parsed.resources,
      { template: undefined, where: `configuration ${input.path}`, file: input.path, depth: 0, chain: [] },
      options.properties && Object.keys(options.properties).length ? options.properties : undefined,
    );
    for (const w of expanded.warnings) options.onWarning?.(w);
    if (!options.pythonValues) {
      plainFloatsInPlace(expanded.primitives);
      plainFloatsInPlace(expanded.layout);
    }
    const referencesStart = options.timings ? cpuMs() : 0;
    // Template outputs known at expansion replace the references to them (docs/expansion.md).
    const primitives = resolveTemplateOutputs(
      expanded.primitives,
      layoutOutputs(expanded.layout),
      new Set(expanded.primitives.map((p) => p.name)),
    );
    const references =
      options.references === false
        ? { order: [], dependsOn: {}, references: [] }
        : buildReferenceGraph(primitives);
    if (options.timings) options.timings.referencesMs += cpuMs() - referencesStart;
    return {
      config: { resources: primitives },
      layout: { resources: expanded.layout },
      warnings: expanded.warnings,
      references,
      localFiles: local.localFiles(),
      absentFiles: local.absentFiles(),
    };
  } finally {
    if (ownSandbox) sandbox.close();
  }
}

/** Expands a configuration file; a template file (`.jinja`, `.py`) becomes a one-resource configuration. */
export async function expandFile(path: string, options: ExpandOptions = {}): Promise<ExpansionResult> {
  const content = readTextFile(path);
  if (templateKindOf(path) === 'python' || path.endsWith('.jinja')) {
    const type = basename(path);
    const name = options.deployment ?? type.replace(/\.[^.]*$/, '');
    const synthetic = oneResourceConfiguration(name, type);
    return expandConfiguration(
      { content: synthetic, path },
      {
        ...options,
        deployment: options.deployment ?? name,
      },
    );
  }
  return expandConfiguration({ content, path }, options);
}

/**
 * Warnings for values (`-f`, `--properties`) whose top-level keys the template's schema does not
 * declare, each naming the nearest declared property: a typo there is otherwise silently ignored.
 * A schema that declares no properties says nothing about which keys are known.
 */
function unknownOverrides(
  overrides: Record<string, unknown>,
  schema: TemplateSchema,
  resource: Resource,
): Warning[] {
  const declared = schema.document.properties;
  if (!isMapping(declared)) return [];
  const known = Object.keys(declared);
  return Object.keys(overrides)
    .filter((key) => !Object.hasOwn(declared, key))
    .map((key) => {
      const near = nearest(key, known);
      return {
        code: 'UNKNOWN_PROPERTY',
        message: `property '${key}' given for ${resource.name} (${resource.type}) is not in its schema${
          near ? `; did you mean '${near}'?` : ` (known: ${known.join(', ')})`
        }`,
      };
    });
}

/**
 * What `dm deploy` accepts (docs/deployments.md "What `dm deploy` accepts"): a configuration file (expanded by
 * the expansion engine), a template file, a stream of Kubernetes objects, Deckhand-style layered
 * documents in a file or a directory (rendered first; `dm/Configuration/v1` documents are expanded
 * as a configuration, otherwise documents whose `data` is a Kubernetes object are deployed), or a
 * registry reference (a one-resource configuration, expanded through the registry's template source).
 */

import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isMapping } from '../data.js';
import { formatYaml, formatYamlDocuments, parseYamlDocuments } from '../document/yaml.js';
import { DmError } from '../error.js';
import { checkConfigurationKeys } from '../expand/configuration-keys.js';
import type { SchemaValidationMode } from '../expand/schema.js';
import type { TemplateSource } from '../expand/types.js';
import { defaultInputName, type Input, loadInput } from '../input.js';
import type { DeploymentInput, Primitive } from './model.js';

export interface LoadInputOptions {
  /** Deployment name (env.deployment). */
  deployment: string;
  /** Properties: values files merged, then --properties (top-level template resources). */
  properties: Record<string, unknown>;
  importsDir?: string;
  /** What schema violations do (--schema-validation). */
  schemaValidation?: SchemaValidationMode;
  /** Where registry references are loaded from (the resolver chain); absent: references are refused. */
  templateSource?: TemplateSource;
  onWarning?: (message: string) => void;
  /** How messages name the configuration (default: the argument; the service: `configuration.content`). */
  displayName?: string;
  /** Why imports by URL are refused (the manager API; docs/expansion.md "Imports by URL"). */
  refuseUrlImports?: string;
}

type Json = Record<string, unknown>;

function isKubeObject(v: unknown): v is Json {
  return isMapping(v) && typeof v.apiVersion === 'string' && typeof v.kind === 'string';
}

function isLayeredDocument(v: unknown): boolean {
  return isMapping(v) && typeof v.schema === 'string' && isMapping(v.metadata) && 'data' in v;
}

/** Kubernetes objects as primitives: type `<apiVersion>/<Kind>`, name from metadata.name. */
export function primitivesFromObjects(objects: Json[], source: string): Primitive[] {
  const seen = new Set<string>();
  return objects.map((o, i) => {
    const { apiVersion, kind, ...rest } = o;
    const metaName = isMapping(o.metadata) ? o.metadata.name : undefined;
    if (typeof metaName !== 'string' || metaName === '') {
      throw new DmError(
        'INVALID_DOCUMENT',
        `${source}: document ${i + 1} (${String(kind)}) has no metadata.name`,
        {
          category: 'invalid-input',
        },
      );
    }
    let name = metaName;
    if (seen.has(name)) name = `${String(kind).toLowerCase()}-${metaName}`;
    for (let n = 2; seen.has(name); n++) name = `${String(kind).toLowerCase()}-${metaName}-${n}`;
    seen.add(name);
    return { name, type: `${String(apiVersion)}/${String(kind)}`, properties: rest };
  });
}

function objectInput(text: string, path: string, objects: Json[]): DeploymentInput {
  const resources = primitivesFromObjects(objects, path);
  return {
    inputConfig: { config: text, imports: [] },
    config: { resources },
    layout: { resources: resources.map((r) => ({ name: r.name, type: r.type })) },
    references: [],
  };
}

/** How deploy expands a configuration: the deployment's name, properties and options. */
function expandOptions(options: LoadInputOptions) {
  return {
    deployment: options.deployment,
    properties: options.properties,
    ...(options.importsDir ? { importsDir: options.importsDir } : {}),
    ...(options.schemaValidation ? { schemaValidation: options.schemaValidation } : {}),
    ...(options.templateSource ? { sources: [options.templateSource] } : {}),
    ...(options.refuseUrlImports === undefined ? {} : { refuseUrlImports: options.refuseUrlImports }),
    onWarning: (w: { message: string }) => options.onWarning?.(w.message),
  };
}

/** The deployment input of an expanded configuration (`config`: its text as given). */
function expandedInput(
  config: string,
  imports: DeploymentInput['inputConfig']['imports'],
  result: { config: { resources: readonly Primitive[] }; layout: DeploymentInput['layout'] },
  references: DeploymentInput['references'],
): DeploymentInput {
  return {
    inputConfig: { config, imports },
    config: {
      resources: result.config.resources.map((r) => ({
        name: r.name,
        type: r.type,
        ...(r.properties ? { properties: r.properties } : {}),
      })),
    },
    layout: result.layout,
    references,
  };
}

/** The imports a configuration names plus the local files its types name (and their schemas). */
function collectImports(
  text: string,
  path: string,
  types: string[],
  parseImports: (content: string, source: string) => { path: string; name: string }[],
): DeploymentInput['inputConfig']['imports'] {
  const dir = dirname(path);
  const out = new Map<string, { name: string; path?: string; content: string }>();
  const add = (name: string, rel: string) => {
    const file = join(dir, rel);
    if (out.has(name) || !existsSync(file)) return;
    out.set(name, { name, path: rel, content: readFileSync(file, 'utf8') });
  };
  for (const i of parseImports(text, path)) add(i.name, i.path);
  for (const t of types) {
    if (/^[\w./-]+\.(jinja|py|yaml)$/.test(t) && !t.includes('..')) {
      add(t, t);
      add(`${t}.schema`, `${t}.schema`);
    }
  }
  return [...out.values()];
}

function layoutTypes(entries: { type: string; resources?: unknown[] }[]): string[] {
  return entries.flatMap((e) => [e.type, ...layoutTypes((e.resources ?? []) as { type: string }[])]);
}

export const CONFIGURATION_SCHEMA = 'dm/Configuration/v1';

/**
 * A configuration that would deploy nothing, or that has top-level keys DM never had (`resource:`
 * for `resources:`), is refused before anything is contacted (docs/deployments.md "What `dm deploy`
 * accepts"): deploying it would prune the whole deployment.
 */
export function checkConfigurationDocuments(docs: unknown[], where: string): void {
  if (docs.length > 0 && (docs.every(isKubeObject) || docs.some(isLayeredDocument))) return;
  if (docs.length === 0) {
    throw new DmError('NOTHING_TO_DEPLOY', `${where} is empty: there is nothing to deploy`, {
      hint: 'a configuration lists its resources under resources:',
    });
  }
  const doc = docs[0];
  if (docs.length !== 1 || !isMapping(doc)) return;
  checkConfigurationKeys(doc, where);
  if (
    doc.resources === undefined ||
    doc.resources === null ||
    (Array.isArray(doc.resources) && doc.resources.length === 0)
  ) {
    throw new DmError('NOTHING_TO_DEPLOY', `${where} has no resources: there is nothing to deploy`, {
      hint: 'to remove a deployment, run dm deployments delete <name>',
    });
  }
}

/** The expanded configuration must hold at least one resource (templates may render none). */
function checkSomethingToDeploy(input: DeploymentInput, where: string): DeploymentInput {
  if (input.config.resources.length > 0) return input;
  throw new DmError('NOTHING_TO_DEPLOY', `${where} expands to no resources: there is nothing to deploy`, {
    hint: 'to remove a deployment, run dm deployments delete <name>',
  });
}

/**
 * Rendered layered documents to deploy (docs/deployments.md "What `dm deploy` accepts"): documents of schema
 * `dm/Configuration/v1` hold configurations — their resources (and imports) are combined in
 * rendered order and expanded as one configuration beside `path`; otherwise the documents whose
 * `data` is a Kubernetes object are deployed as they are. Mixing the two is refused.
 */
async function renderedInput(
  rendered: readonly Record<string, unknown>[],
  path: string,
  options: LoadInputOptions,
  expand: typeof import('../expand/index.js'),
  text?: string,
): Promise<DeploymentInput> {
  const configurations = rendered.filter((d) => d.schema === CONFIGURATION_SCHEMA);
  const objects = rendered.map((d) => d.data).filter(isKubeObject);
  if (configurations.length === 0) {
    if (objects.length === 0) {
      throw new DmError(
        'NOTHING_TO_DEPLOY',
        `${path}: the rendered documents hold neither a ${CONFIGURATION_SCHEMA} configuration nor Kubernetes objects`,
      );
    }
    return objectInput(text ?? formatYamlDocuments(objects), path, objects);
  }
  if (objects.length > 0) {
    throw new DmError(
      'MIXED_DOCUMENTS',
      `${path}: the rendered documents mix ${CONFIGURATION_SCHEMA} configurations with plain Kubernetes objects; deploy them separately`,
      { category: 'invalid-input' },
    );
  }
  const resources: unknown[] = [];
  const imports: unknown[] = [];
  for (const doc of configurations) {
    const data = doc.data;
    const where = `${CONFIGURATION_SCHEMA} document ${String((doc.metadata as Json | undefined)?.name ?? '?')}`;
    if (!isMapping(data) || !Array.isArray(data.resources)) {
      throw new DmError('INVALID_CONFIGURATION', `${path}: ${where} has no resources list in its data`, {
        category: 'invalid-input',
      });
    }
    resources.push(...data.resources);
    if (Array.isArray(data.imports)) imports.push(...data.imports);
  }
  const config = formatYaml({ ...(imports.length ? { imports } : {}), resources });
  const result = await expand.expandConfiguration({ content: config, path }, expandOptions(options));
  return checkSomethingToDeploy(expandedInput(config, [], result, []), path);
}

/** Reads and expands what `dm deploy` was given (an argument, or what loadInput made of it). */
export async function loadDeploymentInput(
  given: string | Input,
  options: LoadInputOptions,
): Promise<DeploymentInput> {
  const input = typeof given === 'string' ? loadInput(given, { deployment: options.deployment }) : given;
  const arg = input.arg;
  const where = options.displayName ?? arg;
  const expand = await import('../expand/index.js');
  if (input.kind === 'directory') {
    // A directory of layered documents (docs/layering.md): rendered, then deployed.
    const { renderFiles } = await import('../layer/index.js');
    const rendered = await renderFiles([arg]);
    return renderedInput(rendered, join(arg, '(rendered)'), options, expand);
  }
  if (input.kind === 'file') {
    const text = input.text!;
    const docs = parseYamlDocuments(text, { source: arg }).filter((d) => d !== null && d !== undefined);
    if (docs.length > 0 && docs.every(isKubeObject)) return objectInput(text, arg, docs as Json[]);
    if (docs.length > 0 && docs.some(isLayeredDocument)) {
      const { renderDocuments } = await import('../layer/index.js');
      const rendered = renderDocuments(docs, { sources: docs.map(() => arg) });
      return renderedInput(rendered, arg, options, expand, text);
    }
    checkConfigurationDocuments(docs, where);
  }
  if (input.kind === 'reference' && !options.templateSource) {
    throw new DmError(
      'REFERENCE_NOT_SUPPORTED',
      `'${arg}' is a registry reference; deploying references needs the registry template source`,
      {
        category: 'usage',
        hint: 'pull it first (dm pull <ref> --to dir) and deploy the directory’s template or example.yaml',
      },
    );
  }
  // A configuration, a template file, or DM's form `dm --registry o/r/c deploy redis:v1`: the
  // one-resource configuration loadInput built.
  const result = await expand.expandConfiguration(input.configuration!, expandOptions(options));
  const imports =
    input.kind === 'template'
      ? [{ name: basename(arg), path: basename(arg), content: input.text! }]
      : input.kind === 'file'
        ? collectImports(
            input.text!,
            arg,
            layoutTypes(result.layout.resources),
            (c, s) => expand.parseConfiguration(c, s).imports,
          )
        : [];
  return checkSomethingToDeploy(
    expandedInput(
      input.kind === 'reference' ? input.configuration!.content : input.text!,
      imports,
      result,
      input.kind === 'reference' ? [{ reference: arg, resolved: arg }] : [],
    ),
    where,
  );
}

/** The default deployment name for an argument: a file's base name, a reference's template name. */
export function defaultDeploymentName(arg: string): string {
  return defaultInputName(arg, existsSync(arg));
}

/**
 * dm as a KRM function (docs/gitops.md "KRM function"): a ResourceList (`config.kubernetes.io/v1`)
 * in, the same list with the configuration's objects appended to `items` out, and on failure the
 * input's items with one `results` entry (severity `error`, message, file) and exit code 1.
 *
 * The functionConfig says what to expand: a `ConfigMap` whose `data` holds `path` (a configuration
 * file) or `configuration` (its text), or any other kind whose `spec` holds `path` or
 * `configuration` (text or mapping); beside them `namespace` (of objects that set none),
 * `deployment` (env.deployment; default the functionConfig's name) and `properties` (a mapping;
 * in a ConfigMap every other data key is a property).
 */
import { parsePropertyValue } from '../config/properties.js';
import { parseYamlDocuments } from '../document/yaml.js';
import { DmError, isDmError } from '../error.js';

export const RESOURCE_LIST_VERSIONS = ['config.kubernetes.io/v1', 'config.kubernetes.io/v1alpha1'];

export interface ResourceList {
  apiVersion: string;
  kind: 'ResourceList';
  items: unknown[];
  functionConfig?: Record<string, unknown>;
  results?: KrmResult[];
}

export interface KrmResult {
  message: string;
  severity: 'error' | 'warning' | 'info';
  file?: { path: string };
  tags?: Record<string, string>;
}

/** What the functionConfig asks for. */
export interface FunctionRequest {
  /** A configuration file, relative to the working directory. */
  path?: string;
  /** A configuration's text. */
  configuration?: string;
  namespace: string;
  deployment?: string;
  properties: Record<string, unknown>;
  /** Where the functionConfig itself lives, when the orchestrator says (for results). */
  source?: string;
}

const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);

function invalid(message: string): DmError {
  return new DmError('INVALID_RESOURCE_LIST', message, {
    hint: 'see docs/gitops.md "KRM function" for the functionConfig dm fn reads',
  });
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Reads the ResourceList on standard input (YAML or JSON). */
export function parseResourceList(text: string): ResourceList {
  const docs = parseYamlDocuments(text, { source: 'standard input' }).filter(
    (d) => d !== null && d !== undefined,
  );
  if (docs.length !== 1 || !isMapping(docs[0])) {
    throw invalid('standard input must hold one ResourceList (a YAML or JSON mapping)');
  }
  const list = docs[0];
  if (list.kind !== 'ResourceList' || !RESOURCE_LIST_VERSIONS.includes(String(list.apiVersion))) {
    throw invalid(
      `standard input is ${String(list.apiVersion)}/${String(list.kind)}, not a config.kubernetes.io/v1 ResourceList`,
    );
  }
  const items = list.items ?? [];
  if (!Array.isArray(items)) throw invalid("the ResourceList's items is not a list");
  if (list.functionConfig !== undefined && list.functionConfig !== null && !isMapping(list.functionConfig)) {
    throw invalid("the ResourceList's functionConfig is not a mapping");
  }
  return {
    apiVersion: String(list.apiVersion),
    kind: 'ResourceList',
    items,
    ...(isMapping(list.functionConfig) ? { functionConfig: list.functionConfig } : {}),
    // Results of functions run before this one stay (the list's own results are appended to them).
    ...(Array.isArray(list.results) ? { results: list.results as KrmResult[] } : {}),
  };
}

function text(value: unknown, where: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`functionConfig ${where} is not a string`);
  return value;
}

/** What the functionConfig asks for (see the module comment). */
export function functionRequest(functionConfig: Record<string, unknown> | undefined): FunctionRequest {
  if (!functionConfig) throw invalid('the ResourceList has no functionConfig naming a configuration');
  const metadata = isMapping(functionConfig.metadata) ? functionConfig.metadata : {};
  const annotations = isMapping(metadata.annotations) ? metadata.annotations : {};
  const source =
    text(annotations['config.kubernetes.io/path'], 'path annotation') ??
    text(annotations['internal.config.kubernetes.io/path'], 'path annotation');
  const name = typeof metadata.name === 'string' ? metadata.name : undefined;
  const isConfigMap = functionConfig.kind === 'ConfigMap';
  const body = isConfigMap ? functionConfig.data : functionConfig.spec;
  const field = isConfigMap ? 'data' : 'spec';
  if (!isMapping(body)) throw invalid(`functionConfig ${field} is missing: it names the configuration`);
  const path = text(body.path, `${field}.path`);
  let configuration: string | undefined;
  if (isMapping(body.configuration)) configuration = JSON.stringify(body.configuration);
  else configuration = text(body.configuration, `${field}.configuration`);
  if ((path === undefined) === (configuration === undefined)) {
    throw invalid(`functionConfig ${field} must hold either path (a configuration file) or configuration`);
  }
  const properties: Record<string, unknown> = Object.create(null);
  if (isConfigMap) {
    for (const [k, v] of Object.entries(body)) {
      if (['path', 'configuration', 'namespace', 'deployment'].includes(k) || RESERVED.has(k)) continue;
      properties[k] = parsePropertyValue(String(v), `functionConfig data.${k}`);
    }
  } else if (body.properties !== undefined && body.properties !== null) {
    if (!isMapping(body.properties)) throw invalid('functionConfig spec.properties is not a mapping');
    for (const [k, v] of Object.entries(body.properties)) if (!RESERVED.has(k)) properties[k] = v;
  }
  const deployment = text(body.deployment, `${field}.deployment`) ?? name;
  return {
    ...(path !== undefined ? { path } : {}),
    ...(configuration !== undefined ? { configuration } : {}),
    namespace: text(body.namespace, `${field}.namespace`) ?? 'default',
    ...(deployment !== undefined ? { deployment } : {}),
    properties: { ...properties },
    ...(source !== undefined ? { source } : {}),
  };
}

/** The failure as a result entry: one sentence, the file it concerns, dm's error code as a tag. */
export function errorResult(error: unknown, file: string | undefined): KrmResult {
  const message = isDmError(error)
    ? `${error.message}${error.hint ? ` (${error.hint})` : ''}`
    : `internal error: ${error instanceof Error ? error.message : String(error)}`;
  return {
    message,
    severity: 'error',
    ...(file !== undefined ? { file: { path: file } } : {}),
    tags: { code: isDmError(error) ? error.code : 'INTERNAL' },
  };
}

/**
 * What the phases of one installation run share (docs/blueprints.md "How a run works"): the
 * objects of a context (DataObjects and Targets by key), the installation being run, and the
 * run's environment.
 */

import { isMapping } from '../data.js';
import type { BlueprintInputs, BlueprintSource, Files, Installation } from './model.js';
import { generateDataObjectName } from './names.js';
import type { TemplateRenderer } from './sandbox.js';

export type Obj = Record<string, unknown>;

/** Objects of one context by key (DataObjects, Targets, target maps and lists, Secrets, ConfigMaps). */
export interface Context {
  /** `""` for the root context, `Inst.<name>` for the one an installation opens. */
  name: string;
  data: Map<string, unknown>;
  targets: Map<string, Obj>;
  targetMaps: Map<string, Obj>;
  targetLists: Map<string, unknown[]>;
  secrets: Map<string, Obj>;
  configMaps: Map<string, Obj>;
}

export function newContext(name: string): Context {
  return {
    name,
    data: new Map(),
    targets: new Map(),
    targetMaps: new Map(),
    targetLists: new Map(),
    secrets: new Map(),
    configMaps: new Map(),
  };
}

/** The root context: the imports file's `scope`. */
export function rootContext(inputs: BlueprintInputs): Context {
  const ctx = newContext('');
  const scope = inputs.scope ?? {};
  for (const [k, v] of Object.entries(scope.dataObjects ?? {})) ctx.data.set(k, v);
  for (const [k, v] of Object.entries(scope.targets ?? {})) if (isMapping(v)) ctx.targets.set(k, v);
  for (const [k, v] of Object.entries(scope.secrets ?? {})) if (isMapping(v)) ctx.secrets.set(k, v);
  for (const [k, v] of Object.entries(scope.configMaps ?? {})) if (isMapping(v)) ctx.configMaps.set(k, v);
  return ctx;
}

/** A Target copied into context `ctx` under `key` (its object name becomes the context's name). */
export function contextTarget(t: Obj, ctx: string, key: string, namespace: string): Obj {
  const copy = clone(t);
  const meta = isMapping(copy.metadata) ? copy.metadata : {};
  copy.metadata = { ...meta, name: generateDataObjectName(ctx, key), namespace: meta.namespace ?? namespace };
  return copy;
}

/** One installation being run. */
export interface InstallationNode {
  /** `<root name>` or `<parent path>/<template name>`: the key of its result. */
  path: string;
  namespace: string;
  spec: Installation;
  files: Files;
  /** The component descriptor bound as `cd`. */
  cd: unknown;
  /** The context the installation's imports come from and its exports go to. */
  parent: Context;
  /** 0 for the root installation. */
  depth: number;
}

/** What every phase of a run may use. */
export interface RunEnv {
  inputs: BlueprintInputs;
  renderer: TemplateRenderer;
  resolveBlueprintRef?: ((ref: string) => Promise<BlueprintSource | undefined>) | undefined;
  maxDepth: number;
}

/** A deep copy of JSON data. */
export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** A value in a message: strings as they are, everything else as JSON. */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

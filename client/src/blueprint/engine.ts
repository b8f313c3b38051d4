/**
 * One run of a blueprint installation without a cluster (spec/blueprints.md §4): imports,
 * import executions, subinstallations (recursively), deploy executions and exports, with
 * Landscaper's ordering, validation and error phases. Templates render through a
 * TemplateRenderer (the sandbox in sandbox.ts).
 */
import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';
import { BlueprintError, type Phase } from './errors.js';
import {
  allImports,
  type Blueprint,
  type Execution,
  filePath,
  type ImportDefinition,
  isMapping,
  parseBlueprint,
} from './model.js';
import { DNS_LABEL, generateDataObjectName, installationContext } from './names.js';
import { type DependencyNode, findCycleBfs, findCycleDfs, layers } from './order.js';
import { TemplateFailure, type TemplateRenderer } from './sandbox.js';
import { type SchemaScope, validateAgainst } from './schema.js';

export type Files = Record<string, string>;

const LABEL_NAME = '[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?';
const LABEL_KEY = new RegExp(
  `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?${LABEL_NAME}$`,
);
const LABEL_VALUE = new RegExp(`^(${LABEL_NAME})?$`);
/** A Go duration (`10m`, `1h30m`, `500ms`) or `none`. */
const DURATION = /^(none|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$/;
type Obj = Record<string, unknown>;

/** A blueprint and, optionally, the component descriptor it comes with. */
export interface BlueprintSource {
  files: Files;
  componentDescriptor?: unknown;
}

/** The imports file of `dm blueprint render` (= a conformance case's inputs). */
export interface BlueprintInputs {
  /** The Installation spec plus `name` and `namespace`. */
  installation: Obj;
  scope?: {
    dataObjects?: Obj;
    targets?: Obj;
    secrets?: Record<string, Obj>;
    configMaps?: Record<string, Obj>;
  };
  componentDescriptor?: unknown;
  /** Blueprints behind `cd://` references. */
  blueprints?: Record<string, BlueprintSource>;
  /** `{<installation path>: {<deploy item>: exports}}`. */
  deployerExports?: Record<string, Obj>;
  /** dm's addition: the schemas behind `cd://…` schema references (jsonschema resources). */
  jsonSchemas?: Obj;
}

export interface InstallationResult {
  imports?: Obj;
  deployItems?: Obj[];
  deployOrder?: string[][];
  subinstallations?: string[];
  subinstallationOrder?: string[][];
  exports?: Obj;
  exportedDataObjects?: Obj;
  exportedTargets?: Obj;
}

export interface RenderResult {
  installations: Record<string, InstallationResult>;
  error?: { phase: Phase; message: string };
}

export interface RenderOptions {
  renderer: TemplateRenderer;
  /** Blueprints by a reference that is neither in `blueprints` nor inline (registry references). */
  resolveBlueprintRef?: (ref: string) => Promise<BlueprintSource | undefined>;
  /** Subinstallation nesting limit, default 20. */
  maxDepth?: number;
}

/** Objects of one context (spec §1): data objects and targets by key. */
interface Context {
  name: string;
  data: Map<string, unknown>;
  targets: Map<string, Obj>;
  targetMaps: Map<string, Obj>;
  targetLists: Map<string, unknown[]>;
  secrets: Map<string, Obj>;
  configMaps: Map<string, Obj>;
}

function newContext(name: string): Context {
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

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function entries(v: unknown): Obj[] {
  return Array.isArray(v) ? v.filter(isMapping) : [];
}

/** Deep merge for export executions: maps merge, everything else is replaced. */
export function deepMerge(into: Obj, from: Obj): Obj {
  const out: Obj = { ...into };
  for (const [k, v] of Object.entries(from)) {
    const prev = out[k];
    out[k] = isMapping(prev) && isMapping(v) ? deepMerge(prev, v) : v;
  }
  return out;
}

interface Node {
  path: string;
  name: string;
  namespace: string;
  spec: Obj;
  files: Files;
  cd: unknown;
  /** The context the installation's imports come from and its exports go to. */
  parent: Context;
  /** The parent's blueprint import definitions and imports (subinstallations only). */
  depth: number;
}

interface NodeOutcome {
  dataExports: Map<string, unknown>;
  targetExports: Map<string, Obj>;
}

class Run {
  readonly result: RenderResult = { installations: {} };

  constructor(
    private readonly inputs: BlueprintInputs,
    private readonly options: RenderOptions,
  ) {}

  private record(path: string): InstallationResult {
    this.result.installations[path] ??= {};
    return this.result.installations[path];
  }

  // ------------------------------------------------------------------ templates

  private fail(phase: Phase, execution: string, error: unknown): never {
    if (error instanceof TemplateFailure) {
      throw new BlueprintError(
        error.templateFunction ? 'template' : phase,
        `execution ${execution}: ${error.message}`,
        {
          details: error.line ? { execution, line: error.line } : { execution },
        },
      );
    }
    if (error instanceof BlueprintError) throw error;
    if (error instanceof DmError) {
      throw new BlueprintError(phase, `execution ${execution}: ${error.message}`, {
        category: error.category,
        details: { execution },
      });
    }
    throw error;
  }

  private async runExecution(node: Node, exec: Execution, phase: Phase, context: Obj): Promise<Obj> {
    if (exec.type !== 'Jinja') {
      throw new BlueprintError(
        phase,
        `execution ${exec.name}: type '${exec.type}' is not supported; dm renders executions of type Jinja`,
      );
    }
    let source = exec.template;
    if (source === undefined) {
      const path = filePath(exec.file ?? '');
      source = node.files[path];
      if (source === undefined) {
        throw new BlueprintError(phase, `execution ${exec.name}: no file '${exec.file}' in the blueprint`);
      }
    }
    let text: string;
    try {
      text = await this.options.renderer.renderText({
        name: `${node.path}/${exec.name}`,
        source,
        context,
        files: node.files,
      });
    } catch (error) {
      this.fail(phase, exec.name, error);
    }
    let out: unknown;
    try {
      out = parseYaml(text, { source: `${node.path}/${exec.name}` });
    } catch (error) {
      throw new BlueprintError(
        phase,
        `execution ${exec.name}: its output is not YAML: ${(error as Error).message}`,
      );
    }
    if (out === null || out === undefined) return {};
    if (!isMapping(out))
      throw new BlueprintError(phase, `execution ${exec.name}: its output must be a YAML mapping`);
    return out;
  }

  /** Import/export data mappings (spec §7): `{{ expr }}` strings are values, other templates text. */
  private async evalMapping(
    value: unknown,
    bindings: Obj,
    node: Node,
    what: string,
    phase: Phase,
  ): Promise<unknown> {
    if (typeof value === 'string') {
      const single = /^\s*\{\{([\s\S]*)\}\}\s*$/.exec(value);
      const render = this.options.renderer;
      try {
        if (single?.[1] !== undefined && !single[1].includes('}}') && !single[1].includes('{{')) {
          return await render.renderValue({
            name: `${node.path}/${what}`,
            expression: single[1],
            context: bindings,
            files: node.files,
          });
        }
        if (value.includes('{{') || value.includes('{%')) {
          return await render.renderText({
            name: `${node.path}/${what}`,
            source: value,
            context: bindings,
            files: node.files,
          });
        }
      } catch (error) {
        this.fail(phase, what, error);
      }
      return value;
    }
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (const [i, v] of value.entries())
        out.push(await this.evalMapping(v, bindings, node, `${what}[${i}]`, phase));
      return out;
    }
    if (isMapping(value)) {
      const out: Obj = {};
      for (const [k, v] of Object.entries(value))
        out[k] = await this.evalMapping(v, bindings, node, `${what}.${k}`, phase);
      return out;
    }
    return value;
  }

  // ------------------------------------------------------------------ imports

  private lookupData(ctx: Context, key: string): { found: boolean; value?: unknown } {
    const k = key.startsWith('#') ? key.slice(1) : key;
    return ctx.data.has(k) ? { found: true, value: ctx.data.get(k) } : { found: false };
  }

  private lookupTarget(ctx: Context, key: string, node: Node, importName: string): Obj {
    const k = key.startsWith('#') ? key.slice(1) : key;
    const t = ctx.targets.get(k);
    if (!t) {
      throw new BlueprintError(
        'imports',
        `${node.path}: target import '${importName}': Target '${key}' not found${ctx.name ? ` in context ${ctx.name}` : ''}`,
      );
    }
    return clone(t);
  }

  /** Step 2: the installation's import objects, by installation import name. */
  private loadInstallationImports(node: Node): { values: Obj; data: Obj; targets: Obj } {
    const imports = isMapping(node.spec.imports) ? node.spec.imports : {};
    const data: Obj = {};
    const targets: Obj = {};
    const names = new Set<string>();
    const isRoot = node.depth === 0;
    for (const d of entries(imports.data)) {
      const name = String(d.name ?? '');
      if (!name) throw new BlueprintError('imports', `${node.path}: a data import has no name`);
      if (names.has(name))
        throw new BlueprintError('imports', `${node.path}: duplicate installation import '${name}'`);
      names.add(name);
      const sources = ['dataRef', 'secretRef', 'configMapRef'].filter((k) => d[k] !== undefined);
      if (sources.length !== 1) {
        throw new BlueprintError(
          'imports',
          `${node.path}: data import '${name}' needs exactly one of dataRef, secretRef, configMapRef`,
        );
      }
      if (typeof d.dataRef === 'string') {
        const got = this.lookupData(node.parent, d.dataRef);
        if (!got.found) {
          throw new BlueprintError(
            'imports',
            `${node.path}: data import '${name}': DataObject '${d.dataRef}' not found${node.parent.name ? ` in context ${node.parent.name}` : ''}`,
          );
        }
        data[name] = clone(got.value);
      } else {
        const kind = d.secretRef !== undefined ? 'secretRef' : 'configMapRef';
        if (!isRoot)
          throw new BlueprintError(
            'subinstallations',
            `${node.path}: ${kind} is not allowed in installation templates`,
          );
        const ref = isMapping(d[kind]) ? (d[kind] as Obj) : {};
        const store = kind === 'secretRef' ? node.parent.secrets : node.parent.configMaps;
        const obj = store.get(String(ref.name));
        if (!obj)
          throw new BlueprintError(
            'imports',
            `${node.path}: data import '${name}': ${kind === 'secretRef' ? 'Secret' : 'ConfigMap'} '${String(ref.name)}' not found`,
          );
        const decode = (v: unknown) =>
          kind === 'secretRef' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v;
        if (ref.key !== undefined) {
          if (!Object.hasOwn(obj, String(ref.key))) {
            throw new BlueprintError(
              'imports',
              `${node.path}: data import '${name}': key '${String(ref.key)}' not found`,
            );
          }
          data[name] = decode(obj[String(ref.key)]);
        } else {
          data[name] = Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, decode(v)]));
        }
      }
    }
    for (const t of entries(imports.targets)) {
      const name = String(t.name ?? '');
      if (!name) throw new BlueprintError('imports', `${node.path}: a target import has no name`);
      if (names.has(name))
        throw new BlueprintError('imports', `${node.path}: duplicate installation import '${name}'`);
      names.add(name);
      const forms = ['target', 'targets', 'targetMap', 'targetMapRef', 'targetListRef'].filter(
        (k) => t[k] !== undefined,
      );
      if (forms.length !== 1) {
        throw new BlueprintError(
          'imports',
          `${node.path}: target import '${name}' needs exactly one of target, targets, targetMap, targetMapRef, targetListRef`,
        );
      }
      if (typeof t.target === 'string') targets[name] = this.lookupTarget(node.parent, t.target, node, name);
      else if (Array.isArray(t.targets))
        targets[name] = t.targets.map((k) => this.lookupTarget(node.parent, String(k), node, name));
      else if (isMapping(t.targetMap)) {
        const map: Obj = {};
        for (const [k, v] of Object.entries(t.targetMap)) {
          if (!DNS_LABEL.test(k))
            throw new BlueprintError(
              'imports',
              `${node.path}: target import '${name}': invalid targetMap key '${k}'`,
            );
          map[k] = this.lookupTarget(node.parent, String(v), node, name);
        }
        targets[name] = map;
      } else if (t.targetMapRef !== undefined) {
        const m = node.parent.targetMaps.get(String(t.targetMapRef));
        if (!m)
          throw new BlueprintError(
            'imports',
            `${node.path}: target import '${name}': targetMap '${str(t.targetMapRef)}' not found`,
          );
        targets[name] = clone(m);
      } else {
        const l = node.parent.targetLists.get(String(t.targetListRef));
        if (!l)
          throw new BlueprintError(
            'imports',
            `${node.path}: target import '${name}': targetList '${str(t.targetListRef)}' not found`,
          );
        targets[name] = clone(l);
      }
    }
    return { values: { ...data, ...targets }, data, targets };
  }

  private checkTargetType(node: Node, def: ImportDefinition, target: unknown, what: string): void {
    const type = isMapping(target) && isMapping(target.spec) ? target.spec.type : undefined;
    if (type !== def.targetType) {
      throw new BlueprintError(
        'imports',
        `${node.path}: import '${def.name}'${what}: target type is '${str(type)}', expected '${def.targetType}'`,
      );
    }
  }

  /** Step 4: constructs the blueprint imports in order (mapping > direct import > default). */
  private constructImports(
    node: Node,
    defs: readonly ImportDefinition[],
    mapped: Obj,
    loaded: { data: Obj; targets: Obj },
    scope: SchemaScope,
    into: Obj,
  ): void {
    for (const def of defs) {
      let value: unknown;
      let has = false;
      if (def.type === 'data') {
        if (Object.hasOwn(mapped, def.name)) {
          value = mapped[def.name];
          has = true;
        } else if (Object.hasOwn(loaded.data, def.name)) {
          value = loaded.data[def.name];
          has = true;
        } else if (!def.required && def.default) {
          value = clone(def.default.value);
          has = true;
        }
        if (has) {
          const problems = validateAgainst(value, def.schema, scope, `import ${def.name}`);
          if (problems.length > 0) {
            throw new BlueprintError('schema', `${node.path}: import ${def.name}: ${problems.join('; ')}`);
          }
        }
      } else if (Object.hasOwn(loaded.targets, def.name)) {
        value = loaded.targets[def.name];
        has = true;
        if (def.type === 'target') {
          if (!isMapping(value))
            throw new BlueprintError('imports', `${node.path}: import '${def.name}' expects one target`);
          this.checkTargetType(node, def, value, '');
        } else if (def.type === 'targetMap') {
          if (!isMapping(value) || 'spec' in value) {
            throw new BlueprintError('imports', `${node.path}: import '${def.name}' expects a targetMap`);
          }
          for (const [k, t] of Object.entries(value)) this.checkTargetType(node, def, t, `[${k}]`);
        } else {
          if (!Array.isArray(value))
            throw new BlueprintError('imports', `${node.path}: import '${def.name}' expects a target list`);
          for (const [i, t] of value.entries()) this.checkTargetType(node, def, t, `[${i}]`);
        }
      }
      if (!has) {
        if (def.required) {
          throw new BlueprintError(
            'imports',
            `blueprint defines import '${def.name}' of type ${def.type}, which is not satisfied`,
            { details: { installation: node.path } },
          );
        }
        continue;
      }
      into[def.name] = value;
      if (def.imports.length > 0) this.constructImports(node, def.imports, mapped, loaded, scope, into);
    }
  }

  // ------------------------------------------------------------------ one installation

  private standardBinding(node: Node, imports: Obj): Obj {
    const cd = node.cd ?? null;
    return {
      imports,
      cd,
      components: cd === null ? [] : [cd],
      blueprintDef: node.spec.blueprint ?? null,
      blueprint: node.spec.blueprint ?? null,
      componentDescriptorDef: node.spec.componentDescriptor ?? null,
    };
  }

  async runInstallation(node: Node): Promise<NodeOutcome> {
    if (node.depth > (this.options.maxDepth ?? 20)) {
      throw new BlueprintError(
        'subinstallations',
        `${node.path}: subinstallations nested deeper than ${this.options.maxDepth ?? 20}`,
      );
    }
    const out = this.record(node.path);
    const bp = parseBlueprint(node.files, node.path);
    const scope: SchemaScope = {
      localTypes: bp.localTypes,
      files: node.files,
      cdSchemas: this.inputs.jsonSchemas ?? {},
    };
    const ctx = newContext(installationContext(node.name));

    // 2. load the installation's imports; 3. import data mappings
    const loaded = this.loadInstallationImports(node);
    const mapped: Obj = {};
    const mappings = isMapping(node.spec.importDataMappings) ? node.spec.importDataMappings : {};
    const mappingBindings: Obj = { ...loaded.values, imports: loaded.values };
    for (const [k, v] of Object.entries(mappings)) {
      mapped[k] = await this.evalMapping(v, mappingBindings, node, `importDataMappings.${k}`, 'imports');
    }

    // 4. construct imports
    const imports: Obj = {};
    this.constructImports(node, bp.imports, mapped, loaded, scope, imports);

    // 5. import executions
    for (const exec of bp.importExecutions) {
      const result = await this.runExecution(
        node,
        exec,
        'importExecutions',
        this.standardBinding(node, imports),
      );
      const errors = result.errors;
      if (Array.isArray(errors) ? errors.length > 0 : errors !== undefined && errors !== null) {
        const list = Array.isArray(errors) ? errors.map(str) : [str(errors)];
        throw new BlueprintError('importExecutions', `import validation failed: ${list.join(', ')}`, {
          details: { execution: exec.name },
        });
      }
      if (isMapping(result.bindings)) Object.assign(imports, result.bindings);
    }

    // 6. store the declared imports in the installation's own context
    const declared = allImports(bp.imports);
    for (const def of declared) {
      if (!Object.hasOwn(imports, def.name)) continue;
      const v = imports[def.name];
      if (def.type === 'data') ctx.data.set(def.name, clone(v));
      else if (def.type === 'target' && isMapping(v))
        ctx.targets.set(def.name, this.storedTarget(v, ctx.name, def.name, node));
      else if (def.type === 'targetMap' && isMapping(v)) ctx.targetMaps.set(def.name, clone(v));
      else if (Array.isArray(v)) ctx.targetLists.set(def.name, clone(v));
    }
    out.imports = imports;

    // 7. subinstallations
    const templates = await this.subinstallationTemplates(node, bp, imports);
    const subs = this.validateSubinstallations(node, bp, templates, imports);
    const order = layers(
      subs.map((s) => ({ name: String(s.name), dependsOn: this.siblingDependencies(s, subs) })),
    );
    if (subs.length > 0) {
      out.subinstallations = subs.map((s) => String(s.name));
      out.subinstallationOrder = order;
    }

    // 8. deploy executions
    const items: Obj[] = [];
    for (const exec of bp.deployExecutions) {
      const result = await this.runExecution(
        node,
        exec,
        'deployExecutions',
        this.standardBinding(node, imports),
      );
      if (result.deployItems === undefined || result.deployItems === null) continue;
      if (!Array.isArray(result.deployItems)) {
        throw new BlueprintError('deployExecutions', `execution ${exec.name}: deployItems must be a list`);
      }
      items.push(...(result.deployItems as Obj[]));
    }
    const deployItems = this.validateDeployItems(node, bp, items, imports);
    out.deployItems = deployItems;
    out.deployOrder = layers(
      deployItems.map((d) => ({ name: String(d.name), dependsOn: (d.dependsOn as string[]) ?? [] })),
    );

    // 9. subinstallations in order
    const byName = new Map(subs.map((s) => [String(s.name), s]));
    for (const layer of order) {
      for (const name of layer) {
        const tmpl = byName.get(name) as Obj;
        const source = await this.subBlueprint(node, tmpl);
        const outcome = await this.runInstallation({
          path: `${node.path}/${name}`,
          name,
          namespace: node.namespace,
          spec: tmpl,
          files: source.files,
          cd: source.componentDescriptor ?? node.cd,
          parent: ctx,
          depth: node.depth + 1,
        });
        for (const [k, v] of outcome.dataExports) ctx.data.set(k, v);
        for (const [k, v] of outcome.targetExports) ctx.targets.set(k, v);
      }
    }

    // 10. export executions and exports
    return this.exports(node, bp, imports, deployItems, ctx, scope, out);
  }

  private storedTarget(t: Obj, ctxName: string, key: string, node: Node): Obj {
    const copy = clone(t);
    const meta = isMapping(copy.metadata) ? copy.metadata : {};
    copy.metadata = {
      ...meta,
      name: generateDataObjectName(ctxName, key),
      namespace: meta.namespace ?? node.namespace,
    };
    return copy;
  }

  // ------------------------------------------------------------------ subinstallations

  private async subinstallationTemplates(node: Node, bp: Blueprint, imports: Obj): Promise<Obj[]> {
    const out: Obj[] = [];
    for (const exec of bp.subinstallationExecutions) {
      const result = await this.runExecution(
        node,
        exec,
        'subinstallationExecutions',
        this.standardBinding(node, imports),
      );
      const subs = result.subinstallations;
      if (subs === undefined || subs === null) continue;
      if (!Array.isArray(subs)) {
        throw new BlueprintError(
          'subinstallationExecutions',
          `execution ${exec.name}: subinstallations must be a list`,
        );
      }
      for (const s of subs) {
        if (!isMapping(s))
          throw new BlueprintError(
            'subinstallations',
            `execution ${exec.name}: a subinstallation is not a mapping`,
          );
        out.push(s);
      }
    }
    for (const s of bp.subinstallations) {
      if (typeof s.file === 'string') {
        const text = node.files[filePath(s.file)];
        if (text === undefined)
          throw new BlueprintError('subinstallations', `${node.path}: no file '${s.file}' in the blueprint`);
        let doc: unknown;
        try {
          doc = parseYaml(text, { source: `${node.path}/${filePath(s.file)}` });
        } catch (error) {
          throw new BlueprintError('subinstallations', (error as Error).message);
        }
        if (!isMapping(doc))
          throw new BlueprintError(
            'subinstallations',
            `${node.path}: ${s.file} is not an installation template`,
          );
        out.push(doc);
      } else {
        out.push(clone(s));
      }
    }
    return out;
  }

  private validateSubinstallations(node: Node, bp: Blueprint, templates: Obj[], imports: Obj): Obj[] {
    const declared = allImports(bp.imports);
    const declaredNames = new Set(declared.map((d) => d.name));
    const parentData = new Set(declared.filter((d) => d.type === 'data').map((d) => d.name));
    const parentTargets = new Set(
      declared.filter((d) => d.type === 'target' && Object.hasOwn(imports, d.name)).map((d) => d.name),
    );
    const parentTargetMaps = new Set(
      declared.filter((d) => d.type === 'targetMap' && Object.hasOwn(imports, d.name)).map((d) => d.name),
    );
    const parentTargetLists = new Set(
      declared.filter((d) => d.type === 'targetList' && Object.hasOwn(imports, d.name)).map((d) => d.name),
    );
    const names = new Set<string>();
    const dataExporter = new Map<string, string>();
    const targetExporter = new Map<string, string>();
    const fail = (message: string): never => {
      throw new BlueprintError('subinstallations', message, { details: { installation: node.path } });
    };
    // Drop wiring to unsatisfied optional/conditional parent imports.
    for (const t of templates) {
      const imp = isMapping(t.imports) ? t.imports : undefined;
      if (imp && Array.isArray(imp.data)) {
        imp.data = imp.data.filter(
          (d) =>
            !(
              isMapping(d) &&
              typeof d.dataRef === 'string' &&
              parentData.has(d.dataRef) &&
              !Object.hasOwn(imports, d.dataRef)
            ),
        );
      }
    }
    for (const t of templates) {
      const name = t.name;
      if (typeof name !== 'string' || name === '') fail(`${node.path}: a subinstallation has no name`);
      const n = name as string;
      if (!DNS_LABEL.test(n)) fail(`${n}: the subinstallation name is not a DNS label`);
      if (names.has(n)) fail(`${n}: duplicate subinstallation name`);
      names.add(n);
      const blueprint = isMapping(t.blueprint) ? t.blueprint : {};
      if (blueprint.ref === undefined && blueprint.filesystem === undefined && !isMapping(blueprint.inline)) {
        fail(`${n}: the subinstallation needs blueprint.ref or blueprint.filesystem`);
      }
      const exp = isMapping(t.exports) ? t.exports : {};
      for (const d of entries(exp.data)) {
        const ref = d.dataRef;
        if (typeof ref !== 'string' || ref === '') fail(`${n}: data export '${str(d.name)}' has no dataRef`);
        const r = ref as string;
        const other = dataExporter.get(r);
        if (other !== undefined) fail(`${n}: data export '${r}' is already exported by ${other}`);
        if (declaredNames.has(r)) fail(`${n}: data export '${r}' is imported by the parent`);
        dataExporter.set(r, n);
      }
      for (const d of entries(exp.targets)) {
        const ref = d.target;
        if (typeof ref !== 'string' || ref === '') fail(`${n}: target export '${str(d.name)}' has no target`);
        const r = ref as string;
        const other = targetExporter.get(r);
        if (other !== undefined) fail(`${n}: target export '${r}' is already exported by ${other}`);
        if (declaredNames.has(r)) fail(`${n}: target export '${r}' is imported by the parent`);
        targetExporter.set(r, n);
      }
    }
    for (const t of templates) {
      const n = String(t.name);
      const imp = isMapping(t.imports) ? t.imports : {};
      for (const d of entries(imp.data)) {
        if (d.secretRef !== undefined || d.configMapRef !== undefined)
          fail(`${n}: secretRef and configMapRef are not allowed in installation templates`);
        const ref = d.dataRef;
        if (typeof ref !== 'string' || ref === '') fail(`${n}: data import '${str(d.name)}' has no dataRef`);
        const r = ref as string;
        const exporter = dataExporter.get(r);
        if (!(Object.hasOwn(imports, r) && parentData.has(r)) && (exporter === undefined || exporter === n)) {
          fail(
            `${n}: data import '${str(d.name)}' (dataRef '${r}') is satisfied neither by a parent import nor by a sibling export`,
          );
        }
      }
      for (const d of entries(imp.targets)) {
        const refs: string[] = [];
        if (typeof d.target === 'string') refs.push(d.target);
        if (Array.isArray(d.targets)) refs.push(...d.targets.map(String));
        if (isMapping(d.targetMap)) refs.push(...Object.values(d.targetMap).map(String));
        for (const r of refs) {
          const exporter = targetExporter.get(r);
          if (!parentTargets.has(r) && (exporter === undefined || exporter === n)) {
            fail(
              `${n}: target import '${str(d.name)}' (target '${r}') is satisfied neither by a parent import nor by a sibling export`,
            );
          }
        }
        if (d.targetMapRef !== undefined && !parentTargetMaps.has(String(d.targetMapRef))) {
          fail(
            `${n}: target import '${str(d.name)}': targetMapRef '${str(d.targetMapRef)}' is not a parent import`,
          );
        }
        if (d.targetListRef !== undefined && !parentTargetLists.has(String(d.targetListRef))) {
          fail(
            `${n}: target import '${str(d.name)}': targetListRef '${str(d.targetListRef)}' is not a parent import`,
          );
        }
      }
    }
    const graph: DependencyNode[] = templates.map((t) => ({
      name: String(t.name),
      dependsOn: this.siblingDependencies(t, templates),
    }));
    const cycle = findCycleBfs(graph);
    if (cycle) fail(`the subinstallations have a cycle: ${cycle.join(' -{depends_on}-> ')}`);
    return templates;
  }

  /** Siblings `t` imports from (spec §5.2). */
  private siblingDependencies(t: Obj, siblings: readonly Obj[]): string[] {
    const imp = isMapping(t.imports) ? t.imports : {};
    const dataRefs = new Set(
      entries(imp.data)
        .map((d) => d.dataRef)
        .filter((r): r is string => typeof r === 'string'),
    );
    const targetRefs = new Set<string>();
    for (const d of entries(imp.targets)) {
      if (typeof d.target === 'string') targetRefs.add(d.target);
      if (Array.isArray(d.targets)) for (const x of d.targets) targetRefs.add(String(x));
      if (isMapping(d.targetMap)) for (const x of Object.values(d.targetMap)) targetRefs.add(String(x));
    }
    const deps: string[] = [];
    for (const s of siblings) {
      if (s === t || s.name === t.name) continue;
      const exp = isMapping(s.exports) ? s.exports : {};
      const exportsData = entries(exp.data).some(
        (d) => typeof d.dataRef === 'string' && dataRefs.has(d.dataRef),
      );
      const exportsTargets = entries(exp.targets).some(
        (d) => typeof d.target === 'string' && targetRefs.has(d.target),
      );
      if (exportsData || exportsTargets) deps.push(String(s.name));
    }
    return deps;
  }

  private async subBlueprint(node: Node, tmpl: Obj): Promise<BlueprintSource> {
    const bp = isMapping(tmpl.blueprint) ? tmpl.blueprint : {};
    const fs = isMapping(bp.filesystem)
      ? bp.filesystem
      : isMapping(bp.inline) && isMapping(bp.inline.filesystem)
        ? bp.inline.filesystem
        : undefined;
    if (fs)
      return {
        files: Object.fromEntries(
          Object.entries(fs).map(([k, v]) => [filePath(k), typeof v === 'string' ? v : JSON.stringify(v)]),
        ),
      };
    const ref = isMapping(bp.ref) ? bp.ref.resourceName : bp.ref;
    const key = typeof ref === 'string' ? ref : '';
    const known = this.inputs.blueprints ?? {};
    const candidates = [key, key.startsWith('cd://') ? key : `cd://resources/${key}`];
    for (const c of candidates) if (Object.hasOwn(known, c)) return known[c] as BlueprintSource;
    if (key && this.options.resolveBlueprintRef) {
      const found = await this.options.resolveBlueprintRef(key);
      if (found) return found;
    }
    throw new BlueprintError(
      'subinstallations',
      `${node.path}/${str(tmpl.name)}: blueprint '${key}' not found`,
      {
        category: 'not-found',
      },
    );
  }

  // ------------------------------------------------------------------ deploy items

  private resolveTarget(node: Node, bp: Blueprint, item: string, target: unknown, imports: Obj): Obj {
    const fail = (message: string): never => {
      throw new BlueprintError('deployItems', `deploy item ${item}: ${message}`);
    };
    if (!isMapping(target)) return fail('target must be a mapping');
    const toRef = (t: unknown): Obj => {
      const meta = isMapping(t) && isMapping(t.metadata) ? t.metadata : {};
      return { name: meta.name, namespace: meta.namespace ?? node.namespace };
    };
    if (typeof target.import === 'string' && target.import !== '') {
      const def = allImports(bp.imports).find((d) => d.name === target.import);
      if (!def || def.type === 'data')
        fail(`target import '${target.import}' is not a target import of the blueprint`);
      const value = imports[target.import];
      if (value === undefined) fail(`target import '${target.import}' is not satisfied`);
      if (target.key !== undefined) {
        if (def?.type !== 'targetMap') fail(`target import '${target.import}' is not a targetMap`);
        const key = String(target.key);
        if (!isMapping(value) || !Object.hasOwn(value, key))
          fail(`targetMap '${target.import}' has no key '${key}'`);
        return toRef((value as Obj)[key]);
      }
      if (target.index !== undefined) {
        if (def?.type !== 'targetList') fail(`target import '${target.import}' is not a targetList`);
        const i = Number(target.index);
        if (!Array.isArray(value) || !Number.isInteger(i) || i < 0 || i >= value.length) {
          fail(`index ${str(target.index)} is out of range for targetList '${target.import}'`);
        }
        return toRef((value as unknown[])[i]);
      }
      if (def?.type !== 'target') fail(`target import '${target.import}' needs a key or an index`);
      return toRef(value);
    }
    if (typeof target.name === 'string' && target.name !== '')
      return { name: target.name, namespace: node.namespace };
    return fail('the target reference is empty');
  }

  private validateDeployItems(node: Node, bp: Blueprint, items: Obj[], imports: Obj): Obj[] {
    const fail = (message: string): never => {
      throw new BlueprintError('deployItems', message, { details: { installation: node.path } });
    };
    const names = new Set<string>();
    for (const [i, item] of items.entries()) {
      if (!isMapping(item)) fail(`deployItems[${i}] is not a mapping`);
      if (typeof item.name !== 'string' || item.name === '') fail(`deployItems[${i}].name is required`);
      if (typeof item.type !== 'string' || item.type === '')
        fail(`deploy item ${str(item.name)}: type is required`);
      if (names.has(item.name as string)) fail(`duplicate deploy item name '${str(item.name)}'`);
      names.add(item.name as string);
      if (item.labels !== undefined && item.labels !== null) {
        if (!isMapping(item.labels)) fail(`deploy item ${str(item.name)}: labels must be a mapping`);
        for (const [k, v] of Object.entries(item.labels as Obj)) {
          if (!LABEL_KEY.test(k) || typeof v !== 'string' || !LABEL_VALUE.test(v)) {
            fail(`deploy item ${str(item.name)}: label ${k}=${str(v)} is not a valid Kubernetes label`);
          }
        }
      }
      if (item.timeout !== undefined && item.timeout !== null && !DURATION.test(String(item.timeout))) {
        fail(`deploy item ${str(item.name)}: timeout '${str(item.timeout)}' is neither a duration nor none`);
      }
    }
    const out = items.map((item) => {
      const copy: Obj = { ...item };
      if (item.target !== undefined && item.target !== null) {
        copy.target = this.resolveTarget(node, bp, String(item.name), item.target, imports);
      }
      if (item.dependsOn !== undefined && item.dependsOn !== null) {
        if (!Array.isArray(item.dependsOn)) fail(`deploy item ${str(item.name)}: dependsOn must be a list`);
        for (const dep of item.dependsOn as unknown[]) {
          if (!names.has(String(dep))) fail(`${str(item.name)} depends on undefined deploy item ${str(dep)}`);
        }
      }
      return copy;
    });
    const cycle = findCycleDfs(
      out.map((d) => ({ name: String(d.name), dependsOn: ((d.dependsOn as unknown[]) ?? []).map(String) })),
    );
    if (cycle) fail(`cycle found in dependencies: ${cycle.join(' -> ')}`);
    return out;
  }

  // ------------------------------------------------------------------ exports

  private async exports(
    node: Node,
    bp: Blueprint,
    imports: Obj,
    deployItems: Obj[],
    ctx: Context,
    scope: SchemaScope,
    out: InstallationResult,
  ): Promise<NodeOutcome> {
    const reported = isMapping(this.inputs.deployerExports?.[node.path])
      ? (this.inputs.deployerExports?.[node.path] as Obj)
      : {};
    const deployitems: Obj = {};
    for (const d of deployItems) {
      const name = String(d.name);
      deployitems[name] = Object.hasOwn(reported, name) ? clone(reported[name]) : null;
    }
    const dataobjects = Object.fromEntries([...ctx.data].map(([k, v]) => [k, clone(v)]));
    const targets = Object.fromEntries([...ctx.targets].map(([k, v]) => [k, clone(v)]));
    let exports: Obj = {};
    for (const exec of bp.exportExecutions) {
      const binding = {
        ...this.standardBinding(node, imports),
        deployitems,
        dataobjects,
        targets,
        values: { deployitems, dataobjects, targets },
      };
      const result = await this.runExecution(node, exec, 'exportExecutions', binding);
      if (isMapping(result.exports)) exports = deepMerge(exports, result.exports);
    }
    const declared = new Map(bp.exports.map((e) => [e.name, e]));
    const kept: Obj = {};
    for (const [k, v] of Object.entries(exports)) {
      const def = declared.get(k);
      if (!def) continue;
      if (def.type === 'data') {
        const problems = validateAgainst(v, def.schema, scope, `export ${k}`);
        if (problems.length > 0)
          throw new BlueprintError('exports', `${node.path}: export ${k}: ${problems.join('; ')}`);
      } else {
        const type = isMapping(v) ? v.type : undefined;
        if (type !== def.targetType) {
          throw new BlueprintError(
            'exports',
            `${node.path}: target export ${k} has type '${str(type)}', expected '${def.targetType}'`,
          );
        }
      }
      kept[k] = v;
    }
    let final = kept;
    const mappings = isMapping(node.spec.exportDataMappings) ? node.spec.exportDataMappings : {};
    if (Object.keys(mappings).length > 0) {
      const bindings: Obj = { ...kept, exports: kept };
      final = { ...kept };
      for (const [k, v] of Object.entries(mappings)) {
        final[k] = await this.evalMapping(v, bindings, node, `exportDataMappings.${k}`, 'exports');
      }
    }
    out.exports = kept;
    const specExports = isMapping(node.spec.exports) ? node.spec.exports : {};
    const dataExports = new Map<string, unknown>();
    const targetExports = new Map<string, Obj>();
    const dataEntries = entries(specExports.data);
    const targetEntries = entries(specExports.targets);
    for (const d of dataEntries) {
      const name = String(d.name);
      if (!Object.hasOwn(final, name)) {
        throw new BlueprintError('exports', `${node.path}: data export is not defined: '${name}'`);
      }
      dataExports.set(String(d.dataRef), clone(final[name]));
    }
    for (const d of targetEntries) {
      const name = String(d.name);
      if (!Object.hasOwn(final, name)) {
        throw new BlueprintError('exports', `${node.path}: target export is not defined: '${name}'`);
      }
      const key = String(d.target);
      const plain = key.startsWith('#') ? key.slice(1) : key;
      targetExports.set(plain, {
        apiVersion: 'landscaper.gardener.cloud/v1alpha1',
        kind: 'Target',
        metadata: { name: generateDataObjectName(node.parent.name, key), namespace: node.namespace },
        spec: clone(final[name]),
      });
    }
    if (dataEntries.length > 0) out.exportedDataObjects = Object.fromEntries(dataExports);
    if (targetEntries.length > 0) out.exportedTargets = Object.fromEntries(targetExports);
    return { dataExports, targetExports };
  }
}

function rootContext(inputs: BlueprintInputs): Context {
  const ctx = newContext('');
  const scope = inputs.scope ?? {};
  for (const [k, v] of Object.entries(scope.dataObjects ?? {})) ctx.data.set(k, v);
  for (const [k, v] of Object.entries(scope.targets ?? {})) if (isMapping(v)) ctx.targets.set(k, v);
  for (const [k, v] of Object.entries(scope.secrets ?? {})) if (isMapping(v)) ctx.secrets.set(k, v);
  for (const [k, v] of Object.entries(scope.configMaps ?? {})) if (isMapping(v)) ctx.configMaps.set(k, v);
  return ctx;
}

/**
 * Renders one installation of the blueprint in `files` (spec/blueprints.md "How this fits dm").
 * Blueprint errors are returned in `error` with everything computed before them; other
 * failures (a template time limit…) also end up there, with the phase in which they happened.
 */
export async function renderBlueprint(
  files: Files,
  inputs: BlueprintInputs,
  options: RenderOptions,
): Promise<RenderResult> {
  const run = new Run(inputs, options);
  const installation = isMapping(inputs.installation) ? inputs.installation : {};
  const name =
    typeof installation.name === 'string' && installation.name ? installation.name : 'installation';
  const namespace = typeof installation.namespace === 'string' ? installation.namespace : 'default';
  try {
    await run.runInstallation({
      path: name,
      name,
      namespace,
      spec: installation,
      files,
      cd: inputs.componentDescriptor,
      parent: rootContext(inputs),
      depth: 0,
    });
  } catch (error) {
    if (!(error instanceof BlueprintError)) throw error;
    run.result.error = { phase: error.phase, message: error.message };
  }
  return run.result;
}

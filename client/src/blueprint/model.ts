/**
 * The typed inputs of a run: blueprint.yaml and Installation specs as dm reads them
 * (docs/blueprints.md "Blueprints", "Installations"), with Landscaper's defaulting and static
 * validation (`ValidateBlueprint`), and the imports file's shape.
 */
import { isMapping } from '../data.js';
import { parseYaml } from '../document/yaml.js';
import { BlueprintError, type Phase } from './errors.js';
import { DNS_LABEL } from './names.js';

/** A blueprint filesystem: path (no leading `/`) → content. */
export type Files = Record<string, string>;

/** A blueprint and, optionally, the component descriptor it comes with. */
export interface BlueprintSource {
  files: Files;
  componentDescriptor?: unknown;
}

type Obj = Record<string, unknown>;

/** The imports file of `dm blueprint render` (= a conformance case's inputs, docs/blueprints.md). */
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

export type ImportType = 'data' | 'target' | 'targetMap' | 'targetList';

export interface ImportDefinition {
  name: string;
  type: ImportType;
  required: boolean;
  default?: { value: unknown };
  schema?: unknown;
  targetType?: string;
  imports: ImportDefinition[];
}

export interface ExportDefinition {
  name: string;
  type: 'data' | 'target';
  schema?: unknown;
  targetType?: string;
}

export interface Execution {
  name: string;
  type: string;
  file?: string;
  template?: string;
}

export interface Blueprint {
  localTypes: Record<string, unknown>;
  imports: ImportDefinition[];
  exports: ExportDefinition[];
  importExecutions: Execution[];
  deployExecutions: Execution[];
  exportExecutions: Execution[];
  subinstallationExecutions: Execution[];
  /** Static subinstallations: `{file}` or an inline InstallationTemplate. */
  subinstallations: Record<string, unknown>[];
  annotations: Record<string, unknown>;
}

function list(v: unknown, what: string, phase: Phase): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new BlueprintError(phase, `blueprint.yaml: ${what} must be a list`);
  return v;
}

const TARGET_PREFIX = 'landscaper.gardener.cloud/';

function importDefinition(raw: unknown, where: string, seen: Set<string>): ImportDefinition {
  if (!isMapping(raw)) throw new BlueprintError('imports', `blueprint.yaml: ${where} must be a mapping`);
  const name = raw.name;
  if (typeof name !== 'string' || name === '') {
    throw new BlueprintError('imports', `blueprint.yaml: ${where}.name is required`);
  }
  if (seen.has(name)) throw new BlueprintError('imports', `blueprint.yaml: duplicate import '${name}'`);
  seen.add(name);
  const { type, hasSchema, hasTargetType } = declaredType(raw, 'imports', name);
  if (!['data', 'target', 'targetMap', 'targetList'].includes(type)) {
    throw new BlueprintError('imports', `blueprint.yaml: import '${name}' has unknown type '${type}'`);
  }
  if (type === 'data' ? !hasSchema || hasTargetType : !hasTargetType || hasSchema) {
    throw new BlueprintError(
      'imports',
      `blueprint.yaml: import '${name}' of type ${type} must set ${type === 'data' ? 'schema' : 'targetType'} and not ${type === 'data' ? 'targetType' : 'schema'}`,
    );
  }
  let targetType = hasTargetType ? String(raw.targetType) : undefined;
  if (targetType !== undefined && !targetType.includes('/') && (type === 'target' || type === 'targetList')) {
    targetType = TARGET_PREFIX + targetType;
  }
  const required = raw.required === undefined ? true : raw.required === true;
  const nested = list(raw.imports, `import '${name}'.imports`, 'imports');
  if (nested.length > 0 && required) {
    throw new BlueprintError(
      'imports',
      `blueprint.yaml: import '${name}' has conditional imports but is required (only optional imports may have them)`,
    );
  }
  const def: ImportDefinition = {
    name,
    type: type as ImportType,
    required,
    imports: nested.map((n, i) => importDefinition(n, `import '${name}'.imports[${i}]`, seen)),
  };
  if (isMapping(raw.default) && 'value' in raw.default) def.default = { value: raw.default.value };
  if (hasSchema) def.schema = raw.schema;
  if (targetType !== undefined) def.targetType = targetType;
  return def;
}

function exportDefinition(raw: unknown, i: number, seen: Set<string>): ExportDefinition {
  if (!isMapping(raw) || typeof raw.name !== 'string' || raw.name === '') {
    throw new BlueprintError('exports', `blueprint.yaml: exports[${i}].name is required`);
  }
  const name = raw.name;
  if (seen.has(name)) throw new BlueprintError('exports', `blueprint.yaml: duplicate export '${name}'`);
  seen.add(name);
  const { type, hasSchema, hasTargetType } = declaredType(raw, 'exports', name);
  if (type !== 'data' && type !== 'target') {
    throw new BlueprintError('exports', `blueprint.yaml: export '${name}' has unknown type '${type}'`);
  }
  if (type === 'data' ? !hasSchema || hasTargetType : !hasTargetType || hasSchema) {
    throw new BlueprintError(
      'exports',
      `blueprint.yaml: export '${name}' of type ${type} must set ${type === 'data' ? 'schema' : 'targetType'} only`,
    );
  }
  const def: ExportDefinition = { name, type };
  if (hasSchema) def.schema = raw.schema;
  if (hasTargetType) {
    const t = String(raw.targetType);
    def.targetType = t.includes('/') ? t : TARGET_PREFIX + t;
  }
  return def;
}

function executions(raw: unknown, key: string, phase: Phase): Execution[] {
  const seen = new Set<string>();
  return list(raw, key, phase).map((e, i) => {
    if (!isMapping(e)) throw new BlueprintError(phase, `blueprint.yaml: ${key}[${i}] must be a mapping`);
    if (typeof e.name !== 'string' || e.name === '') {
      throw new BlueprintError(phase, `blueprint.yaml: ${key}[${i}].name is required`);
    }
    if (typeof e.type !== 'string' || e.type === '') {
      throw new BlueprintError(phase, `blueprint.yaml: ${key}[${i}].type is required`);
    }
    if (seen.has(e.name))
      throw new BlueprintError(phase, `blueprint.yaml: duplicate ${key} name '${e.name}'`);
    seen.add(e.name);
    const out: Execution = { name: e.name, type: e.type };
    if (typeof e.file === 'string') out.file = e.file;
    if (typeof e.template === 'string') out.template = e.template;
    if (out.file === undefined && out.template === undefined) {
      throw new BlueprintError(phase, `blueprint.yaml: ${key} '${e.name}' needs file or template`);
    }
    return out;
  });
}

/** Parses and validates blueprint.yaml from a blueprint filesystem. */
export function parseBlueprint(files: Record<string, string>, where: string): Blueprint {
  const text = files['blueprint.yaml'];
  if (text === undefined) throw new BlueprintError('imports', `${where}: no blueprint.yaml in the blueprint`);
  let doc: unknown;
  try {
    doc = parseYaml(text, { source: `${where}/blueprint.yaml` });
  } catch (error) {
    throw new BlueprintError('imports', (error as Error).message);
  }
  if (!isMapping(doc)) throw new BlueprintError('imports', `${where}/blueprint.yaml must be a mapping`);
  const importNames = new Set<string>();
  const imports = list(doc.imports, 'imports', 'imports').map((d, i) =>
    importDefinition(d, `imports[${i}]`, importNames),
  );
  const exportNames = new Set<string>();
  const exports = list(doc.exports, 'exports', 'exports').map((d, i) => exportDefinition(d, i, exportNames));
  const bp: Blueprint = {
    localTypes: isMapping(doc.localTypes) ? doc.localTypes : {},
    imports,
    exports,
    importExecutions: executions(doc.importExecutions, 'importExecutions', 'importExecutions'),
    deployExecutions: executions(doc.deployExecutions, 'deployExecutions', 'deployExecutions'),
    exportExecutions: executions(doc.exportExecutions, 'exportExecutions', 'exportExecutions'),
    subinstallationExecutions: executions(
      doc.subinstallationExecutions,
      'subinstallationExecutions',
      'subinstallationExecutions',
    ),
    subinstallations: list(doc.subinstallations, 'subinstallations', 'subinstallations').map((s, i) => {
      if (!isMapping(s))
        throw new BlueprintError(
          'subinstallations',
          `blueprint.yaml: subinstallations[${i}] must be a mapping`,
        );
      const hasFile = typeof s.file === 'string';
      const inline = Object.keys(s).some((k) => k !== 'file');
      if (hasFile === inline) {
        throw new BlueprintError(
          'subinstallations',
          `blueprint.yaml: subinstallations[${i}] must be either {file} or an inline installation template`,
        );
      }
      return s;
    }),
    annotations: isMapping(doc.annotations) ? doc.annotations : {},
  };
  return bp;
}

/** Every import definition, nested ones included, in order. */
export function allImports(defs: readonly ImportDefinition[]): ImportDefinition[] {
  return defs.flatMap((d) => [d, ...allImports(d.imports)]);
}

/** A path inside a blueprint filesystem, without the leading `/`. */
export function filePath(path: string): string {
  return path.replace(/^\/+/, '');
}

// ---------------------------------------------------------------- installations

/** `{name, key?}` of a `secretRef`/`configMapRef` data import. */
export interface ObjectKeyRef {
  name: string;
  key?: string;
}

/** A data import of an installation: exactly one source. */
export interface DataImport {
  name: string;
  dataRef?: string;
  secretRef?: ObjectKeyRef;
  configMapRef?: ObjectKeyRef;
}

/** A target import of an installation: exactly one of the five forms. */
export interface TargetImport {
  name: string;
  target?: string;
  targets?: string[];
  targetMap?: Record<string, string>;
  targetMapRef?: string;
  targetListRef?: string;
}

export interface DataExport {
  name: string;
  dataRef: string;
}

export interface TargetExport {
  name: string;
  target: string;
}

/**
 * An Installation spec or an InstallationTemplate (docs/blueprints.md "Installations"), read
 * once and not changed afterwards.
 */
export interface Installation {
  name: string;
  /** `spec.blueprint` as written (bound as `blueprintDef`; for templates: ref or filesystem). */
  blueprint: unknown;
  /** `spec.componentDescriptor` as written (bound as `componentDescriptorDef`). */
  componentDescriptor: unknown;
  imports: { data: DataImport[]; targets: TargetImport[] };
  importDataMappings: Obj;
  exports: { data: DataExport[]; targets: TargetExport[] };
  exportDataMappings: Obj;
}

const TARGET_FORMS = ['target', 'targets', 'targetMap', 'targetMapRef', 'targetListRef'] as const;

/**
 * Reads an Installation spec (`template: false`, the root installation) or an
 * InstallationTemplate (`template: true`, a subinstallation) with Landscaper's structural rules:
 * import names required and unique over data and targets, exactly one source per data import,
 * exactly one form per target import, targetMap keys are DNS labels, exports name their
 * `dataRef`/`target`; templates may not use `secretRef`/`configMapRef`. Problems of a root
 * installation are in phase `imports` (`exports` for its exports), those of a template in phase
 * `subinstallations`. `where` names the installation in messages.
 */
export function parseInstallation(raw: Obj, name: string, where: string, template: boolean): Installation {
  const importPhase: Phase = template ? 'subinstallations' : 'imports';
  const exportPhase: Phase = template ? 'subinstallations' : 'exports';
  const fail = (phase: Phase, message: string): never => {
    throw new BlueprintError(phase, `${where}: ${message}`);
  };
  /** A reference to an object: a string (numbers and booleans as YAML wrote them). */
  const ref = (v: unknown, what: string, phase: Phase): string => {
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    if (typeof v !== 'string' || v === '') return fail(phase, `${what} must be a non-empty string`);
    return v;
  };
  const imports = isMapping(raw.imports) ? raw.imports : {};
  const names = new Set<string>();
  const importName = (entry: Obj, kind: string): string => {
    if (typeof entry.name !== 'string' || entry.name === '')
      return fail(importPhase, `a ${kind} import has no name`);
    if (names.has(entry.name)) fail(importPhase, `duplicate installation import '${entry.name}'`);
    names.add(entry.name);
    return entry.name;
  };
  const data = entries(imports.data).map((d): DataImport => {
    const n = importName(d, 'data');
    const sources = ['dataRef', 'secretRef', 'configMapRef'].filter((k) => d[k] !== undefined);
    if (template && sources.some((k) => k !== 'dataRef')) {
      fail(
        importPhase,
        `data import '${n}': secretRef and configMapRef are not allowed in installation templates`,
      );
    }
    if (template && d.dataRef === undefined) fail(importPhase, `data import '${n}' has no dataRef`);
    if (sources.length !== 1) {
      fail(importPhase, `data import '${n}' needs exactly one of dataRef, secretRef, configMapRef`);
    }
    if (d.dataRef !== undefined)
      return { name: n, dataRef: ref(d.dataRef, `data import '${n}': dataRef`, importPhase) };
    const kind = sources[0] as 'secretRef' | 'configMapRef';
    const object = isMapping(d[kind]) ? (d[kind] as Obj) : {};
    const out: ObjectKeyRef = { name: ref(object.name, `data import '${n}': ${kind}.name`, importPhase) };
    if (object.key !== undefined) out.key = ref(object.key, `data import '${n}': ${kind}.key`, importPhase);
    return { name: n, [kind]: out };
  });
  const targets = entries(imports.targets).map((t): TargetImport => {
    const n = importName(t, 'target');
    const forms = TARGET_FORMS.filter((k) => t[k] !== undefined);
    if (forms.length !== 1) {
      fail(importPhase, `target import '${n}' needs exactly one of ${TARGET_FORMS.join(', ')}`);
    }
    const what = `target import '${n}': ${forms[0]}`;
    if (t.targets !== undefined) {
      if (!Array.isArray(t.targets)) return fail(importPhase, `${what} must be a list`);
      return { name: n, targets: t.targets.map((k, i) => ref(k, `${what}[${i}]`, importPhase)) };
    }
    if (t.targetMap !== undefined) {
      if (!isMapping(t.targetMap)) return fail(importPhase, `${what} must be a mapping`);
      const map: Record<string, string> = {};
      for (const [k, v] of Object.entries(t.targetMap)) {
        if (!DNS_LABEL.test(k)) fail(importPhase, `target import '${n}': invalid targetMap key '${k}'`);
        map[k] = ref(v, `${what}.${k}`, importPhase);
      }
      return { name: n, targetMap: map };
    }
    const form = forms[0] as 'target' | 'targetMapRef' | 'targetListRef';
    return { name: n, [form]: ref(t[form], what, importPhase) };
  });
  const exports = isMapping(raw.exports) ? raw.exports : {};
  const exported = <K extends 'dataRef' | 'target'>(list: unknown, key: K, kind: string) => {
    const seen = new Set<string>();
    return entries(list).map((e) => {
      if (typeof e.name !== 'string' || e.name === '')
        return fail(exportPhase, `a ${kind} export has no name`);
      if (seen.has(e.name)) fail(exportPhase, `duplicate ${kind} export '${e.name}'`);
      seen.add(e.name);
      if (e[key] === undefined || e[key] === '')
        fail(exportPhase, `${kind} export '${e.name}' has no ${key}`);
      return { name: e.name, [key]: ref(e[key], `${kind} export '${e.name}': ${key}`, exportPhase) } as {
        name: string;
      } & Record<K, string>;
    });
  };
  return {
    name,
    blueprint: raw.blueprint,
    componentDescriptor: raw.componentDescriptor,
    imports: { data, targets },
    importDataMappings: isMapping(raw.importDataMappings) ? raw.importDataMappings : {},
    exports: {
      data: exported(exports.data, 'dataRef', 'data'),
      targets: exported(exports.targets, 'target', 'target'),
    },
    exportDataMappings: isMapping(raw.exportDataMappings) ? raw.exportDataMappings : {},
  };
}

/** The mappings of a list (other entries are ignored, as Landscaper's decoder drops them). */
function entries(v: unknown): Obj[] {
  return Array.isArray(v) ? v.filter(isMapping) : [];
}

/**
 * An import's or export's `type`, or, when it has none, the one its `schema` (data) or `targetType`
 * (target) implies — exactly one of the two must be set then.
 */
function declaredType(
  raw: Record<string, unknown>,
  phase: 'imports' | 'exports',
  name: unknown,
): { type: string; hasSchema: boolean; hasTargetType: boolean } {
  const hasSchema = raw.schema !== undefined;
  const hasTargetType = raw.targetType !== undefined;
  if (raw.type !== undefined) return { type: raw.type as string, hasSchema, hasTargetType };
  if (hasSchema === hasTargetType) {
    throw new BlueprintError(
      phase,
      `blueprint.yaml: ${phase === 'imports' ? 'import' : 'export'} '${String(name)}' has no type and must set exactly one of schema and targetType`,
    );
  }
  return { type: hasSchema ? 'data' : 'target', hasSchema, hasTargetType };
}

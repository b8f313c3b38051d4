/**
 * blueprint.yaml and Installation specs as dm reads them (spec/blueprints.md §2, §3), with
 * Landscaper's defaulting and static validation (`ValidateBlueprint`).
 */
import { parseYaml } from '../document/yaml.js';
import { BlueprintError, type Phase } from './errors.js';

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

export function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
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
  const hasSchema = raw.schema !== undefined;
  const hasTargetType = raw.targetType !== undefined;
  let type = raw.type as string | undefined;
  if (type === undefined) {
    if (hasSchema === hasTargetType) {
      throw new BlueprintError(
        'imports',
        `blueprint.yaml: import '${name}' has no type and must set exactly one of schema and targetType`,
      );
    }
    type = hasSchema ? 'data' : 'target';
  }
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
  const hasSchema = raw.schema !== undefined;
  const hasTargetType = raw.targetType !== undefined;
  let type = raw.type as string | undefined;
  if (type === undefined) {
    if (hasSchema === hasTargetType) {
      throw new BlueprintError(
        'exports',
        `blueprint.yaml: export '${name}' has no type and must set exactly one of schema and targetType`,
      );
    }
    type = hasSchema ? 'data' : 'target';
  }
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

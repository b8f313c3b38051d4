/**
 * The subinstallations of one installation (docs/blueprints.md "How a run works", step 7): the
 * templates the subinstallation executions render followed by the static ones, read as
 * InstallationTemplates, their wiring to unsatisfied optional parent imports dropped, validated
 * as Landscaper does, and ordered by what they import from each other. The templates read are
 * never changed: dropping wiring gives new templates.
 */

import { isMapping } from '../data.js';
import { parseYaml } from '../document/yaml.js';
import { BlueprintError } from './errors.js';
import { listOutput, runExecutions, standardBinding } from './executions.js';
import {
  allImports,
  type Blueprint,
  type BlueprintSource,
  filePath,
  type Installation,
  parseInstallation,
} from './model.js';
import { DNS_LABEL } from './names.js';
import { findCycleBfs, layers } from './order.js';
import { clone, type InstallationNode, type Obj, type RunEnv } from './scope.js';

export interface SubinstallationsResult {
  /** The templates in creation order. */
  templates: Installation[];
  /** Run order: layers of template names (siblings a template imports from come first). */
  order: string[][];
}

/** The raw templates: rendered by the subinstallation executions, then the static ones. */
async function collectTemplates(
  env: RunEnv,
  node: InstallationNode,
  bp: Blueprint,
  imports: Obj,
): Promise<Obj[]> {
  const out: Obj[] = [];
  const binding = () => standardBinding(node, imports);
  const phase = 'subinstallationExecutions';
  for await (const { execution, output } of runExecutions(
    env,
    node,
    phase,
    bp.subinstallationExecutions,
    binding,
  )) {
    for (const s of listOutput(output, 'subinstallations', execution, phase)) {
      if (!isMapping(s)) {
        throw new BlueprintError(
          'subinstallations',
          `execution ${execution.name}: a subinstallation is not a mapping`,
        );
      }
      out.push(s);
    }
  }
  for (const s of bp.subinstallations) {
    if (typeof s.file !== 'string') {
      out.push(clone(s));
      continue;
    }
    const path = filePath(s.file);
    const text = node.files[path];
    if (text === undefined)
      throw new BlueprintError('subinstallations', `${node.path}: no file '${s.file}' in the blueprint`);
    let doc: unknown;
    try {
      doc = parseYaml(text, { source: `${node.path}/${path}` });
    } catch (error) {
      throw new BlueprintError('subinstallations', (error as Error).message);
    }
    if (!isMapping(doc))
      throw new BlueprintError('subinstallations', `${node.path}: ${s.file} is not an installation template`);
    out.push(doc);
  }
  return out;
}

/** Object keys a template imports: data (`dataRef`) and targets (`target`, `targets`, `targetMap`). */
function importedKeys(t: Installation): { data: Set<string>; targets: Set<string> } {
  const targets = new Set<string>();
  for (const d of t.imports.targets) {
    if (d.target !== undefined) targets.add(d.target);
    for (const x of d.targets ?? []) targets.add(x);
    for (const x of Object.values(d.targetMap ?? {})) targets.add(x);
  }
  const data = new Set(t.imports.data.flatMap((d) => (d.dataRef === undefined ? [] : [d.dataRef])));
  return { data, targets };
}

/** The siblings `t` imports from (targetMapRef/targetListRef never make an edge). */
function siblingDependencies(t: Installation, siblings: readonly Installation[]): string[] {
  const wanted = importedKeys(t);
  return siblings
    .filter(
      (s) =>
        s.name !== t.name &&
        (s.exports.data.some((d) => wanted.data.has(d.dataRef)) ||
          s.exports.targets.some((d) => wanted.targets.has(d.target))),
    )
    .map((s) => s.name);
}

/**
 * Validates the raw templates (names, blueprint, imports and exports, the wiring between
 * siblings and to the parent, cycles) and returns them as InstallationTemplates, with data
 * imports wired to an unsatisfied optional or conditional parent import left out.
 */
export function validateTemplates(
  node: InstallationNode,
  bp: Blueprint,
  raw: readonly Obj[],
  imports: Obj,
): Installation[] {
  const fail = (message: string): never => {
    throw new BlueprintError('subinstallations', message, { details: { installation: node.path } });
  };
  const declared = allImports(bp.imports);
  const declaredNames = new Set(declared.map((d) => d.name));
  const satisfied = (type: string) =>
    new Set(declared.filter((d) => d.type === type && Object.hasOwn(imports, d.name)).map((d) => d.name));
  const parentData = new Set(declared.filter((d) => d.type === 'data').map((d) => d.name));
  const parentTargets = satisfied('target');
  const parentTargetMaps = satisfied('targetMap');
  const parentTargetLists = satisfied('targetList');

  const names = new Set<string>();
  const dataExporter = new Map<string, string>();
  const targetExporter = new Map<string, string>();
  const templates = raw.map((t): Installation => {
    if (typeof t.name !== 'string' || t.name === '')
      return fail(`${node.path}: a subinstallation has no name`);
    const n = t.name;
    if (!DNS_LABEL.test(n)) fail(`${n}: the subinstallation name is not a DNS label`);
    if (names.has(n)) fail(`${n}: duplicate subinstallation name`);
    names.add(n);
    const blueprint = isMapping(t.blueprint) ? t.blueprint : {};
    if (blueprint.ref === undefined && blueprint.filesystem === undefined && !isMapping(blueprint.inline)) {
      fail(`${n}: the subinstallation needs blueprint.ref or blueprint.filesystem`);
    }
    const template = parseInstallation(t, n, n, true);
    for (const [kind, exporter, refs] of [
      ['data', dataExporter, template.exports.data.map((d) => d.dataRef)],
      ['target', targetExporter, template.exports.targets.map((d) => d.target)],
    ] as const) {
      for (const r of refs) {
        const other = exporter.get(r);
        if (other !== undefined) fail(`${n}: ${kind} export '${r}' is already exported by ${other}`);
        if (declaredNames.has(r)) fail(`${n}: ${kind} export '${r}' is imported by the parent`);
        exporter.set(r, n);
      }
    }
    // Wiring to an optional or conditional parent import without a value is dropped.
    const data = template.imports.data.filter(
      (d) => !(d.dataRef !== undefined && parentData.has(d.dataRef) && !Object.hasOwn(imports, d.dataRef)),
    );
    return { ...template, imports: { ...template.imports, data } };
  });

  for (const t of templates) {
    const n = t.name;
    for (const d of t.imports.data) {
      const r = d.dataRef as string; // templates always import data by dataRef
      const exporter = dataExporter.get(r);
      if (!(Object.hasOwn(imports, r) && parentData.has(r)) && (exporter === undefined || exporter === n)) {
        fail(
          `${n}: data import '${d.name}' (dataRef '${r}') is satisfied neither by a parent import nor by a sibling export`,
        );
      }
    }
    for (const d of t.imports.targets) {
      const refs = [
        ...(d.target === undefined ? [] : [d.target]),
        ...(d.targets ?? []),
        ...Object.values(d.targetMap ?? {}),
      ];
      for (const r of refs) {
        const exporter = targetExporter.get(r);
        if (!parentTargets.has(r) && (exporter === undefined || exporter === n)) {
          fail(
            `${n}: target import '${d.name}' (target '${r}') is satisfied neither by a parent import nor by a sibling export`,
          );
        }
      }
      if (d.targetMapRef !== undefined && !parentTargetMaps.has(d.targetMapRef)) {
        fail(`${n}: target import '${d.name}': targetMapRef '${d.targetMapRef}' is not a parent import`);
      }
      if (d.targetListRef !== undefined && !parentTargetLists.has(d.targetListRef)) {
        fail(`${n}: target import '${d.name}': targetListRef '${d.targetListRef}' is not a parent import`);
      }
    }
  }
  const cycle = findCycleBfs(
    templates.map((t) => ({ name: t.name, dependsOn: siblingDependencies(t, templates) })),
  );
  if (cycle) fail(`the subinstallations have a cycle: ${cycle.join(' -{depends_on}-> ')}`);
  return templates;
}

/** Step 7 for one installation. */
export async function subinstallationsPhase(
  env: RunEnv,
  node: InstallationNode,
  bp: Blueprint,
  imports: Obj,
): Promise<SubinstallationsResult> {
  const templates = validateTemplates(node, bp, await collectTemplates(env, node, bp, imports), imports);
  const order = layers(
    templates.map((t) => ({ name: t.name, dependsOn: siblingDependencies(t, templates) })),
  );
  return { templates, order };
}

/**
 * The blueprint of a subinstallation: its inline filesystem, else its `blueprint.ref` looked up
 * in the imports file's `blueprints` (as written, then as `cd://resources/<ref>`), else through
 * `resolveBlueprintRef` (registry references).
 */
export async function subinstallationBlueprint(
  env: RunEnv,
  node: InstallationNode,
  template: Installation,
): Promise<BlueprintSource> {
  const bp = isMapping(template.blueprint) ? template.blueprint : {};
  const fs = isMapping(bp.filesystem)
    ? bp.filesystem
    : isMapping(bp.inline) && isMapping(bp.inline.filesystem)
      ? bp.inline.filesystem
      : undefined;
  if (fs) {
    return {
      files: Object.fromEntries(
        Object.entries(fs).map(([k, v]) => [filePath(k), typeof v === 'string' ? v : JSON.stringify(v)]),
      ),
    };
  }
  const ref = isMapping(bp.ref) ? bp.ref.resourceName : bp.ref;
  const key = typeof ref === 'string' ? ref : '';
  const known = env.inputs.blueprints ?? {};
  for (const c of [key, key.startsWith('cd://') ? key : `cd://resources/${key}`]) {
    if (Object.hasOwn(known, c)) return known[c] as BlueprintSource;
  }
  if (key && env.resolveBlueprintRef) {
    const found = await env.resolveBlueprintRef(key);
    if (found) return found;
  }
  throw new BlueprintError(
    'subinstallations',
    `${node.path}/${template.name}: blueprint '${key}' not found`,
    {
      category: 'not-found',
    },
  );
}

/**
 * Comparison of `dm blueprint render` results with a conformance case's `expected`
 * (conformance/README.md, `blueprints/`): maps deeply; deployOrder/subinstallationOrder as
 * ordered lists of unordered layers; getResourceKey values base64-decoded and parsed as YAML;
 * `error.phase` exactly, `error.message` not compared.
 */
import { parseYaml } from '../../client/src/document/yaml.js';

type Obj = Record<string, unknown>;

function isMapping(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function decodeResourceRefs(items: unknown): unknown {
  if (!Array.isArray(items)) return items;
  return items.map((item) => {
    if (!isMapping(item) || !isMapping(item.config) || !isMapping(item.config.chart)) return item;
    const ref = item.config.chart.resourceRef;
    if (typeof ref !== 'string') return item;
    let decoded: unknown = ref;
    try {
      decoded = parseYaml(Buffer.from(ref, 'base64').toString('utf8'));
    } catch {
      decoded = ref;
    }
    return { ...item, config: { ...item.config, chart: { ...item.config.chart, resourceRef: decoded } } };
  });
}

function normaliseLayers(layers: unknown): unknown {
  if (!Array.isArray(layers)) return layers;
  return layers.map((l) => (Array.isArray(l) ? [...l].map(String).sort() : l));
}

/** The installation results in the comparable form. */
export function normaliseInstallations(installations: unknown): unknown {
  if (!isMapping(installations)) return installations;
  const out: Obj = {};
  for (const [path, inst] of Object.entries(installations)) {
    if (!isMapping(inst)) {
      out[path] = inst;
      continue;
    }
    const copy: Obj = { ...inst };
    if ('deployItems' in copy) copy.deployItems = decodeResourceRefs(copy.deployItems);
    if ('deployOrder' in copy) copy.deployOrder = normaliseLayers(copy.deployOrder);
    if ('subinstallationOrder' in copy)
      copy.subinstallationOrder = normaliseLayers(copy.subinstallationOrder);
    out[path] = copy;
  }
  return out;
}

/** JSON round trip: drops `undefined`, the form both sides are compared in. */
export function plain(v: unknown): unknown {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

/**
 * Argo CD's config management plugin contract (docs/gitops.md "Argo CD"): the application's
 * parameters as the repo server passes them, `ARGOCD_APP_PARAMETERS` (a JSON list of
 * `{name, string | array | map}`) or, in the same run, `PARAM_<NAME>` variables (the name
 * upper-cased, other characters than letters and digits as `_`; arrays as `_<index>`, maps as
 * `_<KEY>`). Each parameter is a property of its name; a map parameter named `properties` sets
 * its entries as properties. Values read as `--properties` values do.
 */
import { parsePropertyValue } from '../config/properties.js';
import { DmError } from '../error.js';

export type Properties = Record<string, unknown>;

const PARAMETERS = 'ARGOCD_APP_PARAMETERS';
const PREFIX = 'PARAM_';
/** Largest ARGOCD_APP_PARAMETERS read (the repo server passes far less). */
const MAX_PARAMETERS_CHARS = 1024 * 1024;
const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);

function bad(message: string): DmError {
  return new DmError('INVALID_PLUGIN_PARAMETERS', `${PARAMETERS}: ${message}`, {
    hint: 'Argo CD writes it as [{"name": "replicas", "string": "3"}, {"name": "properties", "map": {"k": "v"}}]',
  });
}

function set(target: Properties, name: string, value: unknown): void {
  if (RESERVED.has(name)) throw bad(`parameter name '${name}' is reserved`);
  target[name] = value;
}

function typed(raw: unknown, where: string): unknown {
  if (typeof raw !== 'string') throw bad(`${where} is not a string`);
  return parsePropertyValue(raw, `${PARAMETERS} ${where}`);
}

/** The properties `ARGOCD_APP_PARAMETERS` sets. */
export function propertiesFromParameters(text: string): Properties {
  if (text.length > MAX_PARAMETERS_CHARS) throw bad(`longer than ${MAX_PARAMETERS_CHARS} characters`);
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    throw bad('is not JSON');
  }
  if (!Array.isArray(list)) throw bad('is not a JSON list');
  const out: Properties = Object.create(null);
  list.forEach((p, i) => {
    if (p === null || typeof p !== 'object' || Array.isArray(p)) throw bad(`entry ${i} is not an object`);
    const { name, string, array, map } = p as Record<string, unknown>;
    if (typeof name !== 'string' || name === '') throw bad(`entry ${i} has no name`);
    if (string !== undefined) set(out, name, typed(string, name));
    else if (array !== undefined) {
      if (!Array.isArray(array)) throw bad(`'${name}': array is not a list`);
      set(
        out,
        name,
        array.map((v, j) => typed(v, `${name}[${j}]`)),
      );
    } else if (map !== undefined) {
      if (map === null || typeof map !== 'object' || Array.isArray(map))
        throw bad(`'${name}': map is not an object`);
      const entries: Properties = Object.create(null);
      for (const [k, v] of Object.entries(map)) set(entries, k, typed(v, `${name}.${k}`));
      if (name === 'properties') Object.assign(out, entries);
      else set(out, name, { ...entries });
    } else throw bad(`'${name}' has no string, array or map`);
  });
  return { ...out };
}

/** How Argo CD spells a parameter name in a `PARAM_` variable. */
export function paramVariableName(name: string): string {
  return `${PREFIX}${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/**
 * The properties `PARAM_*` variables set, when `ARGOCD_APP_PARAMETERS` is absent. The variables
 * lose the names' case: a variable takes the name of a property the configuration already sets
 * (`known`) that Argo CD would spell the same, else its own name in lower case.
 */
export function propertiesFromParamVariables(
  env: Record<string, string | undefined>,
  known: readonly string[],
): Properties {
  const byVariable = new Map(known.map((k) => [paramVariableName(k), k]));
  const out: Properties = Object.create(null);
  for (const variable of Object.keys(env).sort()) {
    const value = env[variable];
    if (!variable.startsWith(PREFIX) || variable === PREFIX || value === undefined) continue;
    const name = byVariable.get(variable) ?? variable.slice(PREFIX.length).toLowerCase();
    if (RESERVED.has(name)) continue;
    out[name] = parsePropertyValue(value, variable);
  }
  return { ...out };
}

/** The plugin's properties: ARGOCD_APP_PARAMETERS when set (it holds every parameter), else PARAM_*. */
export function pluginProperties(
  env: Record<string, string | undefined>,
  known: readonly string[],
): Properties {
  const text = env[PARAMETERS];
  if (text !== undefined && text.trim() !== '') return propertiesFromParameters(text);
  return propertiesFromParamVariables(env, known);
}

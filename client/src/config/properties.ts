/**
 * `--properties k=v,k2=v2` and `--env k=v` (docs/client.md "Values and properties"): values read as YAML scalars, as Helm's
 * `--set` does (`replicas=3` is a number, `debug=true` a boolean, `tag='3'` a string), nested keys
 * with dots (`db.port=5432`).
 */
import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';

export type PropertyMap = Record<string, unknown>;

function splitAssignments(text: string): string[] {
  // Commas separate assignments, except inside quotes or brackets.
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let current = '';
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '[' || ch === '{') depth++;
    else if (ch === ']' || ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  parts.push(current);
  return parts.filter((p) => p.trim() !== '');
}

const KEY = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** One property value as text, read as a YAML scalar (`3` a number, `'3'` a string); unparsable text stays text. */
export function parsePropertyValue(raw: string, source: string): unknown {
  try {
    return raw === '' ? '' : parseYaml(raw, { source });
  } catch {
    return raw;
  }
}

/** Parses and merges the assignments of one or more `--properties` flags into one object. */
export function parsePropertyAssignments(flags: readonly string[], flagName = '--properties'): PropertyMap {
  const result: PropertyMap = {};
  for (const flag of flags) {
    for (const assignment of splitAssignments(flag)) {
      const eq = assignment.indexOf('=');
      if (eq <= 0) {
        throw new DmError('INVALID_PROPERTY', `${flagName} '${assignment}' is not of the form key=value`, {
          category: 'usage',
        });
      }
      const key = assignment.slice(0, eq).trim();
      if (!KEY.test(key)) {
        throw new DmError(
          'INVALID_PROPERTY',
          `${flagName} key '${key}' is not a valid key (letters, digits, _ - and dots)`,
          {
            category: 'usage',
          },
        );
      }
      setPath(
        result,
        key.split('.'),
        parsePropertyValue(assignment.slice(eq + 1), `${flagName} ${key}`),
        flagName,
      );
    }
  }
  return result;
}

function setPath(target: PropertyMap, path: string[], value: unknown, flagName: string): void {
  let node = target;
  for (const [i, part] of path.entries()) {
    if (part === '__proto__' || part === 'constructor' || part === 'prototype') {
      throw new DmError(
        'INVALID_PROPERTY',
        `${flagName} key '${path.join('.')}' uses the reserved name '${part}'`,
        {
          category: 'usage',
        },
      );
    }
    if (i === path.length - 1) {
      node[part] = value;
      return;
    }
    const next = node[part];
    if (next === undefined || next === null || typeof next !== 'object' || Array.isArray(next)) {
      node[part] = {};
    }
    node = node[part] as PropertyMap;
  }
}

/**
 * `registry.yaml` (docs/registry-layout.md "registry.yaml"): an optional file at the repository root that maps
 * collection names to directories anywhere in the tree,
 *
 *   name: github.com/dm-samples/templates     # optional: the name references use for this registry
 *   collections:
 *     big-data: teams/data/templates
 *
 * Parsing is pure and never throws: every problem becomes a finding, and only the entries that
 * are sound are returned. Whether a path exists is checked by the scanner, which has the tree.
 */
import { isMapping } from '../data.js';
import { parseYaml } from '../document/yaml.js';
import { isDmError } from '../error.js';
import { formatRegistryName, isValidName, parseDefaultRegistry } from '../reference/reference.js';
import type { FindingCode } from './finding-codes.js';
import { FINDING_CODES } from './finding-codes.js';
import type { Finding } from './types.js';

export const REGISTRY_YAML = 'registry.yaml';

/** Largest registry.yaml read, in bytes; it maps names to paths and has no business being big. */
const MAX_REGISTRY_YAML_BYTES = 1024 * 1024;

export interface CollectionMapping {
  name: string;
  /** Normalized: no `.` or empty segments, no leading or trailing slash. */
  path: string;
}

export interface RegistryYaml {
  /** `name:`, normalized to `host/owner/repo`, when registry.yaml declares a sound one. */
  name?: string;
  /** Sound entries, sorted by name. */
  collections: CollectionMapping[];
  /** Every name registry.yaml lists, sound or not: none of them falls back to a top-level directory. */
  listedNames: Set<string>;
  /**
   * Every well-formed path registry.yaml lists, even under a bad name or twice: meant as collection
   * roots, so never scanned as anything else.
   */
  claimedPaths: Set<string>;
  findings: Finding[];
}

function finding(code: FindingCode, message: string): Finding {
  return { code, severity: FINDING_CODES[code].severity, path: REGISTRY_YAML, message };
}

/**
 * Normalizes a mapped path, or says why it cannot be one: `./a//b/` → `a/b`; absolute paths and
 * `..` segments escape; the root itself is not a collection directory.
 */
export function normalizeCollectionPath(
  raw: string,
): { path: string } | { code: 'REGISTRY_YAML_PATH_ESCAPES' | 'REGISTRY_YAML_INVALID'; why: string } {
  if (raw.startsWith('/')) return { code: 'REGISTRY_YAML_PATH_ESCAPES', why: 'is absolute' };
  const segments = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) {
    return { code: 'REGISTRY_YAML_PATH_ESCAPES', why: "has a '..' segment" };
  }
  if (segments.length === 0) {
    return { code: 'REGISTRY_YAML_INVALID', why: 'names the repository root, not a directory below it' };
  }
  if (segments.some((s) => s.includes('\0'))) return { code: 'REGISTRY_YAML_INVALID', why: 'has a NUL byte' };
  return { path: segments.join('/') };
}

/** `github.com/o/r` or `o/r` → `github.com/o/r`; undefined for anything else (a collection included). */
function registryName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const registry = parseDefaultRegistry(value);
    return registry.collection === '' ? formatRegistryName(registry) : undefined;
  } catch {
    return undefined;
  }
}

/** Reads registry.yaml's text; `undefined` (no file) is an empty mapping. */
export function parseRegistryYaml(text: string | undefined): RegistryYaml {
  const result: RegistryYaml = {
    collections: [],
    listedNames: new Set(),
    claimedPaths: new Set(),
    findings: [],
  };
  if (text === undefined) return result;
  let doc: unknown;
  try {
    doc = parseYaml(text, { source: REGISTRY_YAML, maxBytes: MAX_REGISTRY_YAML_BYTES });
  } catch (error) {
    const message = isDmError(error) ? error.message : `${REGISTRY_YAML}: ${String(error)}`;
    result.findings.push(finding('REGISTRY_YAML_INVALID', message));
    return result;
  }
  if (doc === null || doc === undefined) return result;
  if (!isMapping(doc)) {
    result.findings.push(
      finding('REGISTRY_YAML_INVALID', `${REGISTRY_YAML} must be a mapping with a 'collections' key`),
    );
    return result;
  }
  for (const key of Object.keys(doc).sort()) {
    if (key !== 'collections' && key !== 'name') {
      result.findings.push(
        finding('REGISTRY_YAML_UNKNOWN_KEY', `${REGISTRY_YAML}: unknown key '${key}' is ignored`),
      );
    }
  }
  if (doc.name !== undefined) {
    const name = registryName(doc.name);
    if (name === undefined) {
      result.findings.push(
        finding(
          'REGISTRY_YAML_INVALID',
          `${REGISTRY_YAML}: name ${JSON.stringify(doc.name)} is not a registry name like github.com/<owner>/<repo>`,
        ),
      );
    } else {
      result.name = name;
    }
  }
  const collections = doc.collections;
  if (collections === undefined || collections === null) return result;
  if (!isMapping(collections)) {
    result.findings.push(
      finding(
        'REGISTRY_YAML_INVALID',
        `${REGISTRY_YAML}: 'collections' must be a mapping of collection names to paths`,
      ),
    );
    return result;
  }

  const sound: CollectionMapping[] = [];
  for (const name of Object.keys(collections).sort()) {
    result.listedNames.add(name);
    const value = collections[name];
    const normalized = typeof value === 'string' ? normalizeCollectionPath(value) : undefined;
    if (normalized && 'path' in normalized) result.claimedPaths.add(normalized.path);
    if (!isValidName(name)) {
      const why = name.includes('/')
        ? 'has a slash (a collection is one path segment)'
        : 'does not match [A-Za-z0-9][A-Za-z0-9._-]*';
      result.findings.push(
        finding('REGISTRY_YAML_INVALID_NAME', `${REGISTRY_YAML}: collection name '${name}' ${why}`),
      );
      continue;
    }
    if (typeof value !== 'string') {
      result.findings.push(
        finding(
          'REGISTRY_YAML_INVALID',
          `${REGISTRY_YAML}: collections.${name} must be a path string, not ${value === null ? 'null' : typeof value}`,
        ),
      );
      continue;
    }
    if (normalized === undefined) continue;
    if ('code' in normalized) {
      result.findings.push(
        finding(
          normalized.code,
          `${REGISTRY_YAML}: path '${value}' of collection '${name}' ${normalized.why}`,
        ),
      );
      continue;
    }
    sound.push({ name, path: normalized.path });
  }

  const byPath = new Map<string, string[]>();
  for (const m of sound) byPath.set(m.path, [...(byPath.get(m.path) ?? []), m.name]);
  for (const [path, names] of [...byPath].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (names.length > 1) {
      result.findings.push({
        ...finding(
          'REGISTRY_YAML_DUPLICATE_PATH',
          `${REGISTRY_YAML}: path '${path}' is mapped by ${names.map((n) => `'${n}'`).join(' and ')}; ${names.length > 2 ? 'none of them' : 'neither'} is served`,
        ),
        related: [path],
      });
    }
  }
  result.collections = sound.filter((m) => byPath.get(m.path)?.length === 1);
  return result;
}

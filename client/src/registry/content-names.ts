/**
 * The one rule for the names and paths content may have, whichever way it enters: a registry's
 * tree (git, GitHub, a directory: the scanner reports a finding), a pull-through mirror's upstream
 * answer and a bundle's manifest (refused whole). docs/registry-layout.md, "Paths and names".
 * And `printable`, how a name is shown where a terminal or a page could be fooled by it.
 */
import { isValidName } from '../reference/reference.js';
import { tryParseVersion } from '../reference/version.js';

/** C0 controls, DEL and C1 controls: never in a name a person or a terminal should read. */
function isControl(code: number): boolean {
  return code <= 0x1f || (code >= 0x7f && code <= 0x9f);
}

/** Bidirectional marks, embeddings, overrides and isolates: they reorder what is shown. */
function isBidiControl(code: number): boolean {
  return (
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (isControl(text.charCodeAt(i))) return true;
  return false;
}
/** Longest path accepted (git has no limit; file systems stop near 4,096 bytes). */
export const MAX_CONTENT_PATH = 4096;

/**
 * Why `path` cannot name a file of a template version, or undefined when it can: a relative,
 * `/`-separated path of non-empty segments, none `.` or `..`, without backslashes (a separator
 * elsewhere) or control characters, at most MAX_CONTENT_PATH characters.
 */
export function pathProblem(path: unknown): string | undefined {
  if (typeof path !== 'string' || path === '') return 'it is empty';
  if (path.length > MAX_CONTENT_PATH) return `it is longer than ${MAX_CONTENT_PATH} characters`;
  if (path.startsWith('/')) return 'it is absolute';
  if (path.includes('\\')) return 'it has a backslash';
  if (hasControl(path)) return 'it has a control character';
  for (const segment of path.split('/')) {
    if (segment === '') return 'it has an empty segment';
    if (segment === '.' || segment === '..') return `it has a '${segment}' segment`;
  }
  return undefined;
}

/** A registry name as this project writes them: `<host>[:port]/<owner>/<repo>`. */
const REGISTRY_NAME = /^[a-z0-9][a-z0-9.-]*(?::\d+)?\/[A-Za-z0-9][A-Za-z0-9-]*\/[A-Za-z0-9._-]+$/i;

/** Why `name` cannot be a registry's name, or undefined when it can. */
export function registryNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length > 300 || !REGISTRY_NAME.test(name)) {
    return 'a registry name looks like <host>/<owner>/<repo>';
  }
  const repo = name.slice(name.lastIndexOf('/') + 1);
  if (repo === '.' || repo === '..') return `its repository part is '${repo}'`;
  return undefined;
}

/** Whether `name` is a registry name (registryNameProblem finds nothing). */
export function isRegistryName(name: unknown): name is string {
  return registryNameProblem(name) === undefined;
}

/**
 * Why a version's identity (collection, template, version directory) cannot be served, or
 * undefined: the names the scanner accepts (isValidName, a collection may be '' for the root)
 * and a version directory name that parses.
 */
export function versionNameProblem(v: {
  collection: unknown;
  template: unknown;
  version: unknown;
}): string | undefined {
  if (typeof v.collection !== 'string' || (v.collection !== '' && !isValidName(v.collection))) {
    return `collection '${printable(String(v.collection))}' is not a valid name`;
  }
  if (typeof v.template !== 'string' || !isValidName(v.template)) {
    return `template '${printable(String(v.template))}' is not a valid name`;
  }
  if (typeof v.version !== 'string' || !tryParseVersion(v.version)) {
    return `version '${printable(String(v.version))}' is not a valid version directory name`;
  }
  return undefined;
}

/**
 * `text` with control characters and bidirectional controls (which reorder or hide what a
 * terminal or a page shows) as `\u{…}` escapes, safe to print or show; a backslash stays as it is.
 */
export function printable(text: string): string {
  let out: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isControl(code) || isBidiControl(code)) {
      out ??= text.slice(0, i);
      out += `\\u{${code.toString(16)}}`;
    } else if (out !== undefined) {
      out += text[i];
    }
  }
  return out ?? text;
}

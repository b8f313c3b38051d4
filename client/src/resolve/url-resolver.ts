/**
 * Plain URL references (docs/references.md "References"): `https://…/redis.jinja`. The template is the URL's
 * file, its schema `<url>.schema` (optional), and the files the schema imports come from
 * `<base path>/<import path>` (relative paths inside the base only). The resolution has no version
 * or commit: the lock file pins it by digest.
 */

import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';
import { readBounded } from '../fetch/read-bounded.js';
import { httpSignal, noAnswer } from '../http-limit.js';
import type { RegistryReference, UrlReference } from '../reference/reference.js';
import { sha256Hex, versionDigest } from '../registry/digest.js';
import type { TemplateKind } from '../registry/types.js';
import type { Resolution, Resolver } from './resolver.js';
import type { ResolvedFile, ResolvedVersion } from './types.js';

export interface UrlResolution {
  resolved: ResolvedVersion;
  contents: Map<string, Buffer>;
}

export interface UrlResolverOptions {
  onRequest?: (method: string, url: string) => void;
  /** Largest file accepted, bytes. Default 4 MiB. */
  maxBytes?: number;
  /** The HTTP time limit (docs/client.md "Configuration"). */
  timeoutMs?: number | undefined;
}

function kindOf(file: string): TemplateKind {
  return file.endsWith('.py') ? 'python' : file === 'blueprint.yaml' ? 'blueprint' : 'jinja';
}

/**
 * Whether a schema's import path names a file inside the template's directory, as a URL resolves
 * it: no scheme, no leading `/`, no empty, `.` or `..` segment, and none of backslash, `%`, `?`, `#`
 * (a URL reads `%2e%2e` and `..` before a backslash as `..`; the rest change what is fetched), no
 * control character, no leading or trailing space.
 */
export function isSafeImportPath(path: string, templateUrl: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:/i.test(path) || /[\\%?#]/.test(path) || path.startsWith('/')) return false;
  if (path.split('/').some((s) => s === '' || s === '.' || s === '..')) return false;
  // A URL drops control characters and leading or trailing spaces.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: they are what is refused
  if (/[\x00-\x1f\x7f]|^ | $/.test(path)) return false;
  return new URL(path, templateUrl).href.startsWith(new URL('.', templateUrl).href);
}

/** The URL of a file relative to the template's directory; a path leading elsewhere is refused. */
export function fileUrl(templateUrl: string, path: string, source = `${templateUrl}.schema`): string {
  if (!isSafeImportPath(path, templateUrl)) {
    throw new DmError(
      'UNSAFE_IMPORT_PATH',
      `${source}: import '${path}' must be a relative path inside the template's directory`,
      { category: 'invalid-input' },
    );
  }
  return new URL(path, templateUrl).href;
}

/** Most redirects one URL may take (docs/expansion.md "Imports by URL"). */
export const MAX_URL_REDIRECTS = 5;

/** Whether a host is this machine's loopback (where plain http is accepted, for stand-ins). */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Refuses a URL dm does not fetch templates from: https only, plain http only from a loopback
 * address (docs/expansion.md "Imports by URL").
 */
export function checkTemplateUrl(url: string, redirectedFrom?: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DmError('URL_NOT_HTTPS', `'${url}' is not a URL`, { category: 'invalid-input' });
  }
  if (parsed.protocol === 'https:' || (parsed.protocol === 'http:' && isLoopback(parsed.hostname))) return;
  throw new DmError(
    'URL_NOT_HTTPS',
    `${url}${redirectedFrom ? ` (redirected from ${redirectedFrom})` : ''} is not an https URL: dm fetches templates over https only`,
    { category: 'invalid-input', hint: 'use the https:// address of the file' },
  );
}

async function get(url: string, options: UrlResolverOptions, optional: boolean): Promise<Buffer | undefined> {
  checkTemplateUrl(url);
  const max = options.maxBytes ?? 4 * 1024 * 1024;
  // One time limit for the whole fetch, redirects included.
  const signal = httpSignal(options.timeoutMs);
  let at = url;
  let response: Response;
  for (let hops = 0; ; hops++) {
    options.onRequest?.('GET', at);
    try {
      response = await fetch(at, { signal, redirect: 'manual' });
    } catch (error) {
      throw noAnswer('URL_UNREACHABLE', at, error, { timeoutMs: options.timeoutMs });
    }
    const location =
      response.status >= 300 && response.status < 400 ? response.headers.get('location') : null;
    if (location === null) break;
    await response.body?.cancel();
    if (hops >= MAX_URL_REDIRECTS) {
      throw new DmError('URL_FETCH_FAILED', `${url} redirects more than ${MAX_URL_REDIRECTS} times`, {
        category: 'unreachable',
      });
    }
    const next = new URL(location, at).href;
    checkTemplateUrl(next, url);
    at = next;
  }
  if (response.status === 404 && optional) {
    await response.body?.cancel();
    return undefined;
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new DmError(
      response.status === 404 ? 'URL_NOT_FOUND' : 'URL_FETCH_FAILED',
      `GET ${at} answered ${response.status}`,
      {
        category: response.status === 404 ? 'not-found' : 'unreachable',
      },
    );
  }
  try {
    return await readBounded(
      response,
      max,
      () =>
        new DmError('URL_TOO_LARGE', `${url} is larger than the ${max} bytes allowed`, {
          category: 'limit',
        }),
    );
  } catch (error) {
    if (error instanceof DmError) throw error;
    throw noAnswer('URL_UNREACHABLE', at, error, { timeoutMs: options.timeoutMs });
  }
}

/** The import paths of a URL's schema, each checked to stay inside the template's directory. */
function importPaths(schemaText: string, templateUrl: string): string[] {
  const source = `${templateUrl}.schema`;
  const schema = parseYaml(schemaText, { source });
  const imports =
    schema && typeof schema === 'object' ? (schema as Record<string, unknown>).imports : undefined;
  if (!Array.isArray(imports)) return [];
  const paths: string[] = [];
  for (const imp of imports) {
    const path =
      typeof imp === 'string'
        ? imp
        : imp && typeof imp === 'object'
          ? (imp as Record<string, unknown>).path
          : undefined;
    if (typeof path !== 'string') continue;
    fileUrl(templateUrl, path, source);
    paths.push(path);
  }
  return paths;
}

export async function resolveUrl(url: string, options: UrlResolverOptions = {}): Promise<UrlResolution> {
  const templateFile = decodeURIComponent(new URL(url).pathname.split('/').at(-1) ?? '');
  const contents = new Map<string, Buffer>();
  contents.set(templateFile, (await get(url, options, false))!);
  const schemaFile = `${templateFile}.schema`;
  const schema = await get(`${url}.schema`, options, true);
  if (schema) {
    contents.set(schemaFile, schema);
    for (const path of importPaths(schema.toString('utf8'), url)) {
      if (!contents.has(path)) contents.set(path, (await get(fileUrl(url, path), options, false))!);
    }
  }
  const files = [...contents].map(([path, data]) => ({
    path,
    sha256: sha256Hex(data),
    size: data.byteLength,
  }));
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    resolved: {
      reference: url,
      template: url,
      version: '',
      commit: '',
      kind: kindOf(templateFile),
      templateFile,
      schemaFile: schema ? schemaFile : undefined,
      files,
      digest: versionDigest(files),
    },
    contents,
  };
}

/**
 * The chain's end online: resolves plain URL references (their content, fetched once, is kept for
 * the files the caller asks next) and fetches the files of URL entries dm.lock pins.
 */
export class UrlContentResolver implements Resolver {
  readonly name = 'plain URLs';
  /** Content fetched while resolving, by sha256, until the caller fetches it. */
  private readonly fetched = new Map<string, Buffer>();
  constructor(private readonly options: UrlResolverOptions = {}) {}

  async resolve(refs: readonly RegistryReference[]): Promise<Resolution[]> {
    return refs.map(() => null);
  }

  async resolveUrls(refs: readonly UrlReference[]): Promise<Resolution[]> {
    const answers: Resolution[] = [];
    for (const ref of refs) {
      try {
        const { resolved, contents } = await resolveUrl(ref.url, this.options);
        for (const data of contents.values()) this.fetched.set(sha256Hex(data), data);
        answers.push(resolved);
      } catch (error) {
        if (!(error instanceof DmError)) throw error;
        answers.push(error);
      }
    }
    return answers;
  }

  async fetchFile(resolved: ResolvedVersion, file: ResolvedFile): Promise<Buffer | null> {
    if (!/^https?:\/\//i.test(resolved.template)) return null;
    const kept = this.fetched.get(file.sha256);
    if (kept) return kept;
    const url =
      file.path === resolved.templateFile
        ? resolved.template
        : file.path === resolved.schemaFile
          ? `${resolved.template}.schema`
          : fileUrl(resolved.template, file.path);
    return (await get(url, this.options, false)) ?? null;
  }
}

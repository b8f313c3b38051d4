/**
 * Source strings (docs/server.md "Running it", `dm-registry start --index <source>[=<name>]`):
 *   github.com/<owner>/<repo>[@branch][/path]   GitHub (or a configured GitHub Enterprise host)
 *   https://…, ssh://…, git@host:…, file://…    a git URL
 *   ./dir, /abs/dir                             a local git repository (has .git) or a plain directory
 *   <upstream url>/<host>/<owner>/<repo>        a registry of an upstream registry server, mirrored
 *                                               (docs/mirroring.md; the URL must be a configured --upstream)
 * and the registry name references use: GitHub sources default to `host/owner/repo`, git URLs to
 * `host/owner/repo` taken from the URL, local directories (plain or git) to the `name:` of their
 * registry.yaml, as `dm --registry-dir` reads it, else `local.dm/local/<directory name>`. This is
 * the one naming rule of every entry point: `--index`, `dm-registry index`, `POST /api/v1/registries`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { DmError } from '../../../client/src/error.js';
import { parseRegistryYaml } from '../../../client/src/registry/index.js';
import { isRemoteGitLocation } from '../../../client/src/source/index.js';

export type SourceType = 'github' | 'git' | 'directory' | 'upstream';

export interface SourceSpec {
  type: SourceType;
  /** `github.com/owner/repo`, a URL, or an absolute directory. */
  location: string;
  owner?: string;
  repo?: string;
  branch: string | null;
  path: string;
  /** The registry name references use by default. */
  defaultName: string;
}

export const LOCAL_HOST = 'local.dm';

const NAME_PART = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function safePart(text: string): string {
  const cleaned = text
    .replace(/\.git$/, '')
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '');
  return cleaned || 'registry';
}

export interface ParseSourceOptions {
  /** Hosts served by the GitHub API (github.com and configured GitHub Enterprise hosts). */
  githubHosts?: readonly string[];
  /** Base for relative directories (default: the working directory). */
  cwd?: string;
  /** Upstream registry servers (normalised URLs): `<url>/<host>/<owner>/<repo>` mirrors that registry. */
  upstreams?: readonly string[];
}

/** `<upstream url>/<host>/<owner>/<repo>` for a configured upstream, else undefined. */
function upstreamSpec(text: string, upstreams: readonly string[]): SourceSpec | undefined {
  const upstream = upstreams.find((u) => text.startsWith(`${u}/`));
  if (upstream === undefined) return undefined;
  const name = text.slice(upstream.length + 1).replace(/\/+$/, '');
  const parts = name.split('/');
  if (parts.length !== 3 || !parts.every((p) => /^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(p))) {
    throw new DmError(
      'INVALID_SOURCE',
      `'${text}' is not a mirrored registry: expected ${upstream}/<host>/<owner>/<repo>`,
      { category: 'usage' },
    );
  }
  return {
    type: 'upstream',
    location: `${upstream}/${name}`,
    branch: null,
    path: '',
    defaultName: name,
  };
}

export function parseSourceSpec(text: string, options: ParseSourceOptions = {}): SourceSpec {
  const mirrored = upstreamSpec(text, options.upstreams ?? []);
  if (mirrored) return mirrored;
  const hosts = new Set(['github.com', ...(options.githubHosts ?? [])].map((h) => h.toLowerCase()));
  const first = text.split('/')[0]?.toLowerCase() ?? '';
  if (hosts.has(first) && !isRemoteGitLocation(text)) {
    const m = /^([^/]+)\/([^/@]+)\/([^/@]+)(?:@([^/]+))?(?:\/(.+))?$/.exec(text);
    if (!m || !NAME_PART.test(m[2]!) || !NAME_PART.test(m[3]!)) {
      throw new DmError(
        'INVALID_SOURCE',
        `'${text}' is not a GitHub source: expected ${first}/<owner>/<repo>[@branch][/path]`,
        {
          category: 'usage',
        },
      );
    }
    const path = (m[5] ?? '').replace(/\/+$/, '');
    if (path.split('/').some((p) => p === '..')) {
      throw new DmError('INVALID_SOURCE', `'${text}': the path must not contain '..'`, { category: 'usage' });
    }
    return {
      type: 'github',
      location: `${first}/${m[2]}/${m[3]}`,
      owner: m[2]!,
      repo: m[3]!,
      branch: m[4] ?? null,
      path,
      defaultName: `${first}/${m[2]}/${m[3]}`,
    };
  }
  if (isRemoteGitLocation(text)) {
    let host = 'git.local';
    let segments: string[] = [];
    const scp = /^[\w.-]+@([\w.-]+):(.+)$/.exec(text);
    if (scp) {
      host = scp[1]!;
      segments = scp[2]!.split('/');
    } else {
      try {
        const url = new URL(text);
        host = url.hostname || 'git.local';
        segments = url.pathname.split('/').filter(Boolean);
      } catch {
        throw new DmError('INVALID_SOURCE', `'${text}' is not a valid git URL`, { category: 'usage' });
      }
    }
    if (!host.includes('.')) host = `${host}.local`;
    const repo = safePart(segments.at(-1) ?? 'registry');
    const owner = safePart(segments.at(-2) ?? 'git');
    return {
      type: 'git',
      location: text,
      branch: null,
      path: '',
      defaultName: `${host.toLowerCase()}/${owner}/${repo}`,
    };
  }
  const dir = resolve(options.cwd ?? process.cwd(), text);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new DmError('SOURCE_NOT_FOUND', `'${text}' is neither a GitHub source, a git URL nor a directory`, {
      category: 'not-found',
    });
  }
  const type: SourceType = existsSync(resolve(dir, '.git')) ? 'git' : 'directory';
  return {
    type,
    location: dir,
    branch: null,
    path: '',
    defaultName: declaredName(dir) ?? `${LOCAL_HOST}/local/${safePart(basename(dir))}`,
  };
}

/** `name:` declared in a directory's registry.yaml, as the client reads it (parseRegistryYaml). */
function declaredName(dir: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(resolve(dir, 'registry.yaml'), 'utf8');
  } catch {
    return undefined;
  }
  return parseRegistryYaml(text).name; // a broken registry.yaml is the indexer's to report
}

/**
 * Where a registry's files come from (docs/server.md "Sources and names"): the Source of each source type,
 * and a source URL shown without what may carry a credential.
 */
import { join } from 'node:path';
import {
  DEFAULT_SOURCE_LIMITS,
  GitHubSource,
  GitSource,
  isRemoteGitLocation,
  type Source,
} from '../../../client/src/source/index.js';
import { DirectorySource } from '../source/directory.js';
import type { SourceType } from '../source/source-spec.js';

export interface SourceRequest {
  registryId: number;
  type: SourceType;
  location: string;
  branch: string | null;
  path: string;
  /** The decrypted credential, when the registry names one. */
  credential: string | null;
}

/** Builds the Source for a registry (tests pass one pointing at the GitHub stand-in). */
export type SourceFactory = (request: SourceRequest) => Source;

export interface DefaultSourceOptions {
  /** GitHub API base URL (GITHUB_API_URL); default https://api.github.com. */
  githubApiUrl?: string | undefined;
  /** Token for public GitHub sources (GITHUB_TOKEN): higher rate limits. */
  githubToken?: string | undefined;
  /** Where remote git repositories are fetched to. */
  gitCacheDir: string;
  fetch?: typeof fetch;
  onWarning?: (message: string, details: Record<string, unknown>) => void;
  /** How long one GitHub request may wait for its answer to begin, ms (default 30 s; then UPSTREAM_TIMEOUT). */
  githubTimeoutMs?: number | undefined;
}

export function defaultSourceFactory(options: DefaultSourceOptions): SourceFactory {
  return (request) => {
    if (request.type === 'github') {
      const [, owner = '', repo = ''] = request.location.split('/');
      return new GitHubSource({
        owner,
        repo,
        branch: request.branch,
        path: request.path,
        ...(options.githubApiUrl ? { baseUrl: options.githubApiUrl } : {}),
        token: request.credential ?? options.githubToken ?? null,
        limits: {
          maxFileBytes: DEFAULT_SOURCE_LIMITS.maxFileBytes,
          maxTotalBytes: DEFAULT_SOURCE_LIMITS.maxTotalBytes,
          maxEntries: DEFAULT_SOURCE_LIMITS.maxEntries,
        },
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.onWarning ? { onWarning: options.onWarning } : {}),
        ...(options.githubTimeoutMs === undefined ? {} : { requestTimeoutMs: options.githubTimeoutMs }),
      });
    }
    if (request.type === 'git') {
      return new GitSource({
        location: request.location,
        branch: request.branch,
        path: request.path,
        cacheDir: join(options.gitCacheDir, String(request.registryId)),
      });
    }
    return new DirectorySource({ directory: request.location });
  };
}

/**
 * Whether a registry's source is on the server's own disk (a directory, a local git repository, a
 * `file://` URL): where it is is shown to admins only, in the API and the pages alike
 * (docs/server.md, "Choices where the spec is silent").
 */
export function isLocalSource(row: { sourceType: string; source: string }): boolean {
  return (
    row.sourceType === 'directory' ||
    (row.sourceType === 'git' && (!isRemoteGitLocation(row.source) || /^file:/i.test(row.source)))
  );
}

/**
 * A source URL without what may carry a credential: `user:pass@`, the query (`?access_token=…`)
 * and the fragment. scp-like `git@host:path` keeps its user (a login name, not a secret).
 */
export function withoutCredentials(location: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) return location.replace(/[?#].*$/, '');
  try {
    const url = new URL(location);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.toString();
  } catch {
    return location.replace(/\/\/[^@/]*@/, '//').replace(/[?#].*$/, '');
  }
}

/**
 * The GitHub source (docs/server.md "Indexing") through @octokit/rest, throttled and retried by the
 * official plugins (`X-RateLimit-*`, `Retry-After`). Request budget per sync:
 *   1. the branch commit, conditional on the last ETag (a 304 ends an unchanged re-sync: 1 request);
 *   2. the recursive git tree (1 request); when GitHub truncates it, the tarball gives the tree;
 *   3. the content not stored yet: up to 2 blobs one by one, otherwise one tarball (GitHub answers
 *      with a redirect to its download host: 2 requests).
 * So a cold index costs 4 requests whatever the registry's size, a one-file change 3.
 * Every HTTP request (retries and redirect hops included) is counted on the sync's meter.
 *
 * GitHub is an upstream (docs/errors.md): a request whose answer does not start within
 * `requestTimeoutMs` is `UPSTREAM_TIMEOUT`; an answer that is an unexpected error status is
 * `SOURCE_UNREACHABLE` (category upstream), one dm cannot use (not the JSON it should be) is
 * `UPSTREAM_INVALID_ANSWER`; each one sentence naming GitHub, never GitHub's own text.
 */

import { lookup } from 'node:dns/promises';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import { DmError, networkFailure } from '../error.js';
import { noAnswer } from '../http-limit.js';
import type { TreeEntry } from '../registry/types.js';
import {
  entriesUnder,
  gitBlobSha,
  type OpenOptions,
  type OpenResult,
  type Source,
  type SyncMeter,
} from './source.js';
import { readTarball, type TarballLimits } from './tarball.js';

export interface GitHubSourceOptions {
  owner: string;
  repo: string;
  /** Default: the repository's default branch (`HEAD`). */
  branch?: string | null;
  /** Registry root inside the repository. */
  path?: string;
  /** API base URL; default https://api.github.com. GitHub Enterprise: https://host/api/v3. */
  baseUrl?: string;
  token?: string | null;
  /** Retries after a rate limit before giving up (default 3). */
  maxRateLimitRetries?: number;
  /** Longest wait for a rate limit reset, seconds (default 300); longer fails the sync. */
  maxRateLimitWaitSeconds?: number;
  /** Blobs fetched one by one at most; more and the tarball is cheaper (default 2). */
  maxBlobRequests?: number;
  limits?: TarballLimits;
  /** fetch implementation (default globalThis.fetch). */
  fetch?: typeof fetch;
  /** Warnings (rate limits) go here. */
  onWarning?: (message: string, details: Record<string, unknown>) => void;
  /**
   * How long one request may wait for GitHub's answer to begin, ms (default 30 s); the body that
   * follows is bounded by the sync's own deadline (a large tarball takes its time).
   */
  requestTimeoutMs?: number;
}

/**
 * A request past its deadline. Named `AbortError` so that octokit passes it through as it does a
 * cancelled sync: neither wrapped as an HTTP 500 nor retried (which would wait out the deadline
 * four times).
 */
class GitHubDeadline extends Error {
  override readonly name = 'AbortError';
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

interface OctokitError {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, string | undefined> };
}

const ThrottledOctokit = Octokit.plugin(throttling, retry);

export class GitHubSource implements Source {
  readonly kind = 'github' as const;
  readonly description: string;
  private readonly octokit: InstanceType<typeof ThrottledOctokit>;
  private meter: SyncMeter | undefined;

  constructor(private readonly options: GitHubSourceOptions) {
    this.description = `github ${options.owner}/${options.repo}${options.branch ? `@${options.branch}` : ''}${
      options.path ? `/${options.path}` : ''
    }`;
    const baseFetch = options.fetch ?? globalThis.fetch;
    const maxRetries = options.maxRateLimitRetries ?? 3;
    const maxWait = options.maxRateLimitWaitSeconds ?? 300;
    const onLimit =
      (kind: string) =>
      (retryAfter: number, request: { method: string; url: string }, _o: unknown, retryCount: number) => {
        const retrying = retryCount < maxRetries && retryAfter <= maxWait;
        options.onWarning?.(`GitHub ${kind} rate limit hit`, {
          method: request.method,
          url: request.url,
          retryAfterSeconds: retryAfter,
          retrying,
        });
        return retrying;
      };
    this.octokit = new ThrottledOctokit({
      ...(options.token ? { auth: options.token } : {}),
      baseUrl: (options.baseUrl ?? 'https://api.github.com').replace(/\/+$/, ''),
      userAgent: 'dm-registry',
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
      request: { fetch: (url: string | URL, init?: RequestInit) => this.countedFetch(baseFetch, url, init) },
      throttle: { onRateLimit: onLimit('primary'), onSecondaryRateLimit: onLimit('secondary') },
      retry: { doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
    });
  }

  /** fetch that follows redirects itself so every hop is counted, and reads the rate-limit budget. */
  private async countedFetch(
    baseFetch: typeof fetch,
    input: string | URL,
    init?: RequestInit,
  ): Promise<Response> {
    let url = new URL(String(input));
    let current: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const response = await this.fetchBeforeDeadline(baseFetch, url, current);
      if (this.meter) {
        this.meter.requests++;
        const remaining = response.headers.get('x-ratelimit-remaining');
        if (remaining !== null && remaining !== '') this.meter.rateLimitRemaining = Number(remaining);
      }
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || !location || hop >= 5) return response;
      await response.body?.cancel();
      const next = new URL(location, url);
      if (next.origin !== url.origin) {
        // Credentials never follow a redirect to another host.
        const headers = new Headers(current.headers);
        headers.delete('authorization');
        current = { ...current, headers };
      }
      url = next;
    }
  }

  /** One fetch whose answer must begin within the request deadline (the caller's signal still applies). */
  private async fetchBeforeDeadline(baseFetch: typeof fetch, url: URL, init: RequestInit): Promise<Response> {
    const deadline = new AbortController();
    const timeoutMs = this.options.requestTimeoutMs ?? 30_000;
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    try {
      return await baseFetch(url, {
        ...init,
        signal: init.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal,
      });
    } catch (error) {
      if (deadline.signal.aborted && !init.signal?.aborted) {
        throw new GitHubDeadline(`no answer within ${timeoutMs / 1000} s`, { cause: error });
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** An answer that is not what GitHub's API answers there: GitHub's fault (502), named. */
  private unusable(what: string): DmError {
    return new DmError(
      'UPSTREAM_INVALID_ANSWER',
      `GitHub answered something dm cannot use for ${what} of ${this.options.owner}/${this.options.repo}`,
      { category: 'upstream', details: { source: this.description } },
    );
  }

  private fail(error: unknown, what: string): never {
    const e = error as OctokitError;
    const where = `${this.options.owner}/${this.options.repo}`;
    if (error instanceof GitHubDeadline) {
      throw new DmError(
        'UPSTREAM_TIMEOUT',
        `GitHub did not answer for ${what} of ${where} within ${(this.options.requestTimeoutMs ?? 30_000) / 1000} s`,
        { category: 'upstream-timeout', details: { source: this.description } },
      );
    }
    if (e.status === 404) {
      throw new DmError(
        'SOURCE_NOT_FOUND',
        `GitHub ${what} of ${where} not found (or private and not readable with the credential given)`,
        {
          category: 'not-found',
          details: { source: this.description },
        },
      );
    }
    if (e.status === 401) {
      throw new DmError('SOURCE_UNAUTHORIZED', `GitHub refused the credential for ${where}`, {
        category: 'unauthorized',
      });
    }
    if (e.status === 403 || e.status === 429) {
      const headers = e.response?.headers ?? {};
      if (
        e.status === 429 ||
        headers['x-ratelimit-remaining'] === '0' ||
        /rate limit/i.test(e.message ?? '')
      ) {
        throw new DmError(
          'SOURCE_RATE_LIMITED',
          `GitHub rate limit reached while reading ${where}; retry later`,
          {
            category: 'rate-limited',
            details: {
              ...(headers['retry-after'] ? { retryAfter: Number(headers['retry-after']) } : {}),
              ...(headers['x-ratelimit-reset'] ? { reset: Number(headers['x-ratelimit-reset']) } : {}),
            },
          },
        );
      }
      throw new DmError('SOURCE_FORBIDDEN', `GitHub refused access to ${where}`, { category: 'forbidden' });
    }
    // An answer (it has a response): an error status GitHub should not give here. Its text is
    // not passed on.
    if (e.status !== undefined && e.response !== undefined && !networkFailure(error)) {
      throw new DmError('SOURCE_UNREACHABLE', `GitHub answered HTTP ${e.status} for ${what} of ${where}`, {
        category: 'upstream',
        details: { source: this.description, status: e.status },
      });
    }
    throw noAnswer('SOURCE_UNREACHABLE', `GitHub (${this.apiHost()}) for ${what} of ${where}`, error, {
      details: { source: this.description },
    });
  }

  /** The API host, as a URL names it (`api.github.com`, `127.0.0.1:8080`). */
  private apiHost(): string {
    return new URL(this.options.baseUrl ?? 'https://api.github.com').host;
  }

  private hostChecked: Promise<void> | undefined;

  /**
   * Fails at once, in plain words, when the API host's name does not resolve: a network error
   * inside octokit is an HTTP 500 to its retry plugin, which retries it for about 14 s first.
   * Once per source; a failed check is tried again on the next open.
   */
  private checkHost(): Promise<void> {
    this.hostChecked ??= (async () => {
      const host = new URL(this.options.baseUrl ?? 'https://api.github.com').hostname.replace(/^\[|\]$/g, '');
      try {
        await lookup(host);
      } catch (error) {
        this.hostChecked = undefined;
        throw noAnswer('SOURCE_UNREACHABLE', `GitHub (${this.apiHost()})`, error, {
          details: { source: this.description },
        });
      }
    })();
    return this.hostChecked;
  }

  async open(options: OpenOptions): Promise<OpenResult> {
    this.meter = options.meter;
    await this.checkHost();
    const { owner, repo } = this.options;
    const ref = this.options.branch ?? 'HEAD';
    let commit: string;
    let treeSha: string;
    let etag: string | null = null;
    try {
      const response = await this.octokit.rest.repos.getCommit({
        owner,
        repo,
        ref,
        per_page: 1,
        headers: options.etag ? { 'if-none-match': options.etag } : {},
        request: { signal: options.signal },
      });
      const data = response.data as { sha?: unknown; commit?: { tree?: { sha?: unknown } } } | string;
      if (
        typeof data !== 'object' ||
        typeof data.sha !== 'string' ||
        typeof data.commit?.tree?.sha !== 'string'
      ) {
        throw this.unusable(`branch ${ref}`);
      }
      commit = data.sha;
      treeSha = data.commit.tree.sha;
      etag = response.headers.etag ?? null;
    } catch (error) {
      if (error instanceof DmError) throw error;
      if ((error as OctokitError).status === 304 && options.commit)
        return { status: 'unchanged', commit: options.commit };
      this.fail(error, `branch ${ref}`);
    }
    if (commit === options.commit) return { status: 'unchanged', commit };

    let tree: { truncated: boolean; tree: { path?: string; type?: string; size?: number; sha?: string }[] };
    try {
      const response = await this.octokit.rest.git.getTree({
        owner,
        repo,
        tree_sha: treeSha,
        recursive: '1',
        request: { signal: options.signal },
      });
      tree = response.data;
      if (typeof tree !== 'object' || tree === null || !Array.isArray(tree.tree)) throw this.unusable('tree');
    } catch (error) {
      if (error instanceof DmError) throw error;
      this.fail(error, 'tree');
    }

    const root = (this.options.path ?? '').replace(/^\/+|\/+$/g, '');
    let cache: Map<string, Buffer> | undefined;
    let entries: TreeEntry[];
    if (tree.truncated) {
      cache = await this.tarball(commit, root, options.signal);
      entries = treeFromFiles(cache);
    } else {
      const all: TreeEntry[] = [];
      for (const t of tree.tree) {
        if (!t.path || (t.type !== 'blob' && t.type !== 'tree')) continue;
        all.push({
          path: t.path,
          type: t.type,
          ...(t.size !== undefined ? { size: t.size } : {}),
          ...(t.sha ? { gitSha: t.sha } : {}),
        });
      }
      entries = entriesUnder(all, root);
    }
    const maxBlobs = this.options.maxBlobRequests ?? 2;
    const read = async (wanted: readonly TreeEntry[]): Promise<Map<string, Buffer>> => {
      const out = new Map<string, Buffer>();
      const missing = wanted.filter((e) => {
        const hit = cache?.get(e.path);
        if (hit) out.set(e.path, hit);
        return !hit;
      });
      if (missing.length === 0) return out;
      if (missing.length > maxBlobs) {
        cache = await this.tarball(commit, root, options.signal);
        for (const e of missing) {
          const content = cache.get(e.path);
          if (content) out.set(e.path, content);
        }
        return out;
      }
      for (const e of missing) {
        if (!e.gitSha) continue;
        try {
          const response = await this.octokit.rest.git.getBlob({
            owner,
            repo,
            file_sha: e.gitSha,
            request: { signal: options.signal },
          });
          if (typeof response.data !== 'object' || typeof response.data?.content !== 'string') {
            throw this.unusable(`blob ${e.path}`);
          }
          out.set(
            e.path,
            Buffer.from(response.data.content, response.data.encoding === 'base64' ? 'base64' : 'utf8'),
          );
        } catch (error) {
          if (error instanceof DmError) throw error;
          this.fail(error, `blob ${e.path}`);
        }
      }
      return out;
    };
    return { status: 'changed', commit, etag, entries, read };
  }

  private async tarball(commit: string, root: string, signal?: AbortSignal): Promise<Map<string, Buffer>> {
    let data: ArrayBuffer;
    try {
      const response = await this.octokit.rest.repos.downloadTarballArchive({
        owner: this.options.owner,
        repo: this.options.repo,
        ref: commit,
        request: { signal },
      });
      if (!(response.data instanceof ArrayBuffer)) throw this.unusable('tarball');
      data = response.data;
    } catch (error) {
      if (error instanceof DmError) throw error;
      this.fail(error, 'tarball');
    }
    let files: Map<string, Buffer>;
    try {
      ({ files } = await readTarball(Buffer.from(data), {
        ...this.options.limits,
        stripFirst: true,
        source: `tarball of ${this.options.owner}/${this.options.repo}@${commit.slice(0, 12)}`,
      }));
    } catch (error) {
      // Bytes that are no tar archive are GitHub's answer gone wrong; what a readable archive
      // holds (unsafe paths, sizes) is the repository's, and says so itself.
      if (error instanceof DmError && error.code === 'INVALID_ARCHIVE') throw this.unusable('tarball');
      throw error;
    }
    if (root === '') return files;
    const out = new Map<string, Buffer>();
    for (const [path, content] of files)
      if (path.startsWith(`${root}/`)) out.set(path.slice(root.length + 1), content);
    return out;
  }
}

/** Tree entries (blobs and their directories) for files read from an archive or a directory. */
export function treeFromFiles(files: Map<string, Buffer>): TreeEntry[] {
  const dirs = new Set<string>();
  const entries: TreeEntry[] = [];
  for (const [path, content] of files) {
    entries.push({ path, type: 'blob', size: content.length, gitSha: gitBlobSha(content) });
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  for (const d of dirs) entries.push({ path: d, type: 'tree' });
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return entries;
}

/**
 * GitHub directly (no registry server): for each registry referenced, the branch commit, one
 * recursive tree and the content actually needed — the same cheap listing the server's indexer
 * uses (the GitHub source in client/src/source/github.ts, throttled and retried by octokit's
 * plugins). github.com and the GitHub Enterprise hosts configured under `registries:` are served;
 * any other host is not mine.
 */

import type { DmConfig } from '../config/config.js';
import type { ContentCache } from '../fetch/content-cache.js';
import { httpSignal } from '../http-limit.js';
import { formatRegistryName, type RegistryName, type RegistryReference } from '../reference/reference.js';
import { scanRegistryTree } from '../registry/scan-tree.js';
import type { TreeEntry } from '../registry/types.js';
import type { Source } from '../source/source.js';
import type { Resolution, Resolver } from './resolver.js';
import { type RegistrySnapshot, SnapshotResolver } from './snapshot-resolver.js';
import { snapshotFromOpened, snapshotFromSource } from './source-snapshot.js';
import type { ResolvedFile, ResolvedVersion } from './types.js';

/** What is remembered of a registry's last full read, to revalidate it with one conditional request. */
interface RememberedSnapshot {
  commit: string;
  etag: string | null;
  entries: TreeEntry[];
  registryYaml: string | undefined;
  /** repo path → sha256 hex of the content (in the content cache). */
  sha256: Record<string, string>;
}

type GitHubSourceLike = Source;

export interface GitHubResolverOptions {
  config: DmConfig;
  /** Where remembered trees and content live; without it every run reads GitHub afresh. */
  cache?: ContentCache;
  onRequest?: (method: string, url: string) => void;
  onWarning?: (message: string) => void;
}

function apiFor(config: DmConfig, host: string): { baseUrl: string; token: string | undefined } | undefined {
  if (host === 'github.com') return { baseUrl: config.githubApiUrl, token: config.githubToken };
  const entry = config.hosts[host];
  return entry
    ? { baseUrl: entry.apiUrl, token: entry.tokenEnv ? undefined : config.githubToken }
    : undefined;
}

export class GitHubResolver implements Resolver {
  readonly name = 'GitHub';
  private readonly registries = new Map<string, SnapshotResolver>();

  constructor(private readonly options: GitHubResolverOptions) {}

  private resolverFor(registry: RegistryName): SnapshotResolver | undefined {
    const key = formatRegistryName(registry).toLowerCase();
    const existing = this.registries.get(key);
    if (existing) return existing;
    const api = apiFor(this.options.config, registry.host);
    if (!api) return undefined;
    const resolver = new SnapshotResolver({
      name: `GitHub ${formatRegistryName(registry)}`,
      registry,
      load: async () => {
        const { GitHubSource } = await import('../source/github.js');
        const counting: typeof fetch = (input, init) => {
          this.options.onRequest?.(init?.method ?? 'GET', String(input));
          // Every call under the one HTTP time limit (docs/client.md "Configuration").
          return fetch(input, {
            ...init,
            signal: init?.signal ?? httpSignal(this.options.config.httpTimeoutMs),
          });
        };
        const source = new GitHubSource({
          owner: registry.owner,
          repo: registry.repo,
          baseUrl: api.baseUrl,
          token: api.token ?? null,
          fetch: counting,
          ...(this.options.onWarning ? { onWarning: (m: string) => this.options.onWarning!(m) } : {}),
        });
        return this.revalidated(registry, source);
      },
    });
    this.registries.set(key, resolver);
    return resolver;
  }

  /**
   * Opens the registry conditionally on the ETag of the last run: when GitHub answers 304 (one
   * request, not counted against the rate limit) the remembered tree is used and content comes from
   * the content cache by digest. Otherwise a full open, whose tree and digests are remembered.
   */
  private async revalidated(registry: RegistryName, source: GitHubSourceLike): Promise<RegistrySnapshot> {
    const cache = this.options.cache;
    const key = `github-snapshot:${formatRegistryName(registry).toLowerCase()}`;
    const { createMeter } = await import('../source/source.js');
    const previous = cache ? await cache.readMeta<RememberedSnapshot>(key) : undefined;
    const opened = await source.open({
      meter: createMeter(),
      etag: previous?.value.etag ?? null,
      commit: previous?.value.commit ?? null,
    });
    if (opened.status === 'unchanged' && previous && cache) {
      const remembered = previous.value;
      const scan = scanRegistryTree(remembered.entries, { registryYaml: remembered.registryYaml });
      let full: Promise<RegistrySnapshot> | undefined;
      return {
        commit: remembered.commit,
        scan,
        read: async (repoPath) => {
          const sha = remembered.sha256[repoPath];
          const data = sha ? await cache.read(sha) : undefined;
          if (data) return data;
          // Not cached (cleaned, or corrupted): read this commit's content after all.
          full ??= snapshotFromSource(source);
          return (await full).read(repoPath);
        },
      };
    }
    if (opened.status !== 'changed') return snapshotFromSource(source);
    const snapshot = await snapshotFromOpened(opened, source.description);
    if (cache) {
      const sha256: Record<string, string> = {};
      for (const v of snapshot.scan.versions) {
        for (const f of v.files) {
          const data = await snapshot.read(f.repoPath);
          sha256[f.repoPath] = (await cache.write(Buffer.from(data))).slice('sha256:'.length);
        }
      }
      const registryYaml = opened.entries.some((e) => e.path === 'registry.yaml')
        ? Buffer.from(await snapshot.read('registry.yaml')).toString('utf8')
        : undefined;
      await cache.writeMeta<RememberedSnapshot>(key, {
        commit: opened.commit,
        etag: opened.etag ?? null,
        entries: opened.entries,
        registryYaml,
        sha256,
      });
    }
    return snapshot;
  }

  async resolve(refs: readonly RegistryReference[]): Promise<Resolution[]> {
    const out: Resolution[] = [];
    for (const ref of refs) {
      const resolver = this.resolverFor(ref);
      out.push(resolver ? ((await resolver.resolve([ref]))[0] ?? null) : null);
    }
    return out;
  }

  async versions(ref: RegistryReference): Promise<string[] | null> {
    return (await this.resolverFor(ref)?.versions(ref)) ?? null;
  }

  async fetchFile(resolved: ResolvedVersion, file: ResolvedFile): Promise<Buffer | null> {
    const [host, owner, repo] = resolved.template.split('/');
    if (!host || !owner || !repo) return null;
    return (await this.resolverFor({ host, owner, repo })?.fetchFile(resolved, file)) ?? null;
  }
}

/**
 * GitHub directly (no registry server): for each registry referenced, the branch commit, one
 * recursive tree and the content actually needed — the same cheap listing the server's indexer
 * uses (the GitHub source in server/src/source/github.ts, throttled and retried by octokit's
 * plugins). github.com and the GitHub Enterprise hosts configured under `registries:` are served;
 * any other host is not mine.
 */
import type { DmConfig } from '../config/config.js';
import { formatRegistryName, type RegistryName, type RegistryReference } from '../reference/reference.js';
import type { Resolution, Resolver } from './resolver.js';
import { SnapshotResolver } from './snapshot-resolver.js';
import { snapshotFromSource } from './source-snapshot.js';
import type { ResolvedFile, ResolvedVersion } from './types.js';

export interface GitHubResolverOptions {
  config: DmConfig;
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
        const { GitHubSource } = await import('../../../server/src/source/github.js');
        const counting: typeof fetch = (input, init) => {
          this.options.onRequest?.(init?.method ?? 'GET', String(input));
          return fetch(input, init);
        };
        const source = new GitHubSource({
          owner: registry.owner,
          repo: registry.repo,
          baseUrl: api.baseUrl,
          token: api.token ?? null,
          fetch: counting,
          ...(this.options.onWarning ? { onWarning: (m: string) => this.options.onWarning!(m) } : {}),
        });
        return snapshotFromSource(source);
      },
    });
    this.registries.set(key, resolver);
    return resolver;
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

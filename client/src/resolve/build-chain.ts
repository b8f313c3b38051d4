/**
 * Builds the resolver chain from configuration — the one place (docs/client.md "The resolver
 * chain"), used by install/update/outdated/pull, resolve/versions, the registry template source
 * (expand, deploy, lint) and blueprints: lock file → cache → registry directories
 * (`--registry-dir`) → registry server (`--registry-url`) → git sources → GitHub (github.com and
 * configured Enterprise hosts) → the end: plain URLs' content online, or, offline, an end that
 * answers every reference nobody took with OFFLINE_MISSING. Plain URL references are resolved by
 * `setup.resolveUrl`, which is offline-aware the same way. Nothing else in the client knows which
 * resolvers there are.
 */
import type { DmConfig } from '../config/config.js';
import { DmError } from '../error.js';
import { ContentCache } from '../fetch/content-cache.js';
import {
  type DefaultRegistry,
  formatReference,
  parseDefaultRegistry,
  type RegistryReference,
} from '../reference/reference.js';
import { CacheResolver } from './cache-resolver.js';
import { gitSourceResolver } from './git-resolver.js';
import { GitHubResolver } from './github-resolver.js';
import { localDirectoryResolver, nameRegistryDirectory, type RegistryDirectory } from './local-directory.js';
import type { Resolution, Resolver } from './resolver.js';
import { ServerResolver } from './server-resolver.js';
import { resolveUrl, UrlContentResolver, type UrlResolution } from './url-resolver.js';

export interface ResolverSetup {
  chain: Resolver[];
  /** The cache resolver of the chain (remembers what sources answered), when asked for. */
  cache: CacheResolver | undefined;
  /** Names of resolvers whose answers are not remembered in the cache (registry directories). */
  unremembered: ReadonlySet<string>;
  /** A plain URL reference: fetched and pinned by digest; offline, OFFLINE_MISSING (exit 5). */
  resolveUrl(url: string): Promise<UrlResolution>;
  /** The registry short references resolve against, if any. */
  defaultRegistry: DefaultRegistry | undefined;
  directories: RegistryDirectory[];
}

export interface BuildChainOptions {
  config: DmConfig;
  /** `--registry-dir dir[=name]` flags. */
  registryDirs?: readonly string[];
  /** Resolvers to put first (the lock file's). */
  first?: readonly Resolver[];
  /** Answer from resolutions remembered in the cache (after `first`), keyed by the sources configured. */
  cache?: boolean;
  /** Called for every HTTP request a network resolver makes. */
  onRequest?: (method: string, url: string) => void;
  onWarning?: (message: string) => void;
}

export async function buildResolverChain(options: BuildChainOptions): Promise<ResolverSetup> {
  const directories: RegistryDirectory[] = [];
  const flags = options.registryDirs ?? [];
  // The only registry directory, with no --registry: short references resolve against it, named or not.
  const only = flags.length === 1 && !options.config.registry;
  for (const flag of flags) {
    directories.push(await nameRegistryDirectory(flag, options.config.registry, { only }));
  }
  let defaultRegistry = options.config.registry ? parseDefaultRegistry(options.config.registry) : undefined;
  if (!defaultRegistry && directories.length === 1) {
    defaultRegistry = { ...directories[0]!.registry, collection: '' };
  }
  // Registry directories come before network sources: a directory named for a registry is the
  // user's explicit local override of it (as `npm link` is), and works offline.
  const sources: Resolver[] = directories.map(localDirectoryResolver);
  const unremembered = new Set(sources.map((r) => r.name));
  if (options.config.registryUrl && !options.config.offline) {
    sources.push(
      new ServerResolver({
        url: options.config.registryUrl,
        token: options.config.registryToken,
        ...(options.onRequest ? { onRequest: options.onRequest } : {}),
      }),
    );
  }
  for (const [name, location] of Object.entries(options.config.sources)) {
    // A configured git source is explicit, so it comes before GitHub for the same registry.
    // Offline, only local repositories are read.
    if (options.config.offline && /^(https?|ssh|git):\/\/|^[\w.-]+@[\w.-]+:/.test(location)) continue;
    sources.push(gitSourceResolver(name, location, options.config));
  }
  if (!options.config.offline) {
    sources.push(
      new GitHubResolver({
        config: options.config,
        cache: new ContentCache({ root: options.config.dirs.cache }),
        ...(options.onRequest ? { onRequest: options.onRequest } : {}),
        ...(options.onWarning ? { onWarning: options.onWarning } : {}),
      }),
    );
  }
  // Remembered resolutions are keyed by the sources that could answer (docs/client.md "Cache"): a
  // resolution made against one set of sources is never reused against another.
  const cache = options.cache
    ? new CacheResolver(new ContentCache({ root: options.config.dirs.cache }), {
        offline: options.config.offline,
        scope: sources.map((r) => r.name).join('\n'),
      })
    : undefined;
  const offline = options.config.offline;
  const chain: Resolver[] = [
    ...(options.first ?? []),
    ...(cache ? [cache] : []),
    ...sources,
    offline ? new OfflineEnd() : new UrlContentResolver(),
  ];
  return {
    chain,
    cache,
    unremembered,
    defaultRegistry,
    directories,
    resolveUrl: async (url) => {
      if (offline) {
        throw new DmError('OFFLINE_MISSING', `${url} is a URL, and --offline forbids fetching it`, {
          category: 'unreachable',
          hint: 'run dm install once with network access (dm.lock then pins it)',
        });
      }
      return resolveUrl(url, options.onRequest ? { onRequest: options.onRequest } : {});
    },
  };
}

/** Ends the chain offline: everything not yet answered is missing, said precisely. */
export class OfflineEnd implements Resolver {
  readonly name = 'offline';
  async resolve(refs: readonly RegistryReference[]): Promise<Resolution[]> {
    return refs.map(
      (ref) =>
        new DmError(
          'OFFLINE_MISSING',
          `${formatReference(ref)} is not in dm.lock or the cache, and --offline forbids fetching it`,
          { category: 'unreachable', hint: 'run dm install once with network access' },
        ),
    );
  }
}

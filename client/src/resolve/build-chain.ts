/**
 * Builds the resolver chain from configuration — the one place (docs/client.md "The resolver
 * chain"), used by install/update/outdated/pull, resolve/versions, the registry template source
 * (expand, deploy, lint) and blueprints: lock file → cache → registry directories
 * (`--registry-dir`) → registry server (`--registry-url`) → git sources → OCI registries (`oci://`
 * references only) → GitHub (github.com and
 * configured Enterprise hosts) → the end: plain URL references and their content online, or,
 * offline, an end that answers every reference nobody took, URLs included, with OFFLINE_MISSING.
 * Nothing else in the client knows which resolvers there are.
 */
import type { DmConfig } from '../config/config.js';
import { DmError } from '../error.js';
import { ContentCache } from '../fetch/content-cache.js';
import { OciResolver } from '../oci/oci-resolver.js';
import {
  type DefaultRegistry,
  formatReference,
  parseDefaultRegistry,
  type Reference,
  type RegistryReference,
  type UrlReference,
} from '../reference/reference.js';
import { CacheResolver } from './cache-resolver.js';
import { gitSourceResolver } from './git-resolver.js';
import { GitHubResolver } from './github-resolver.js';
import { localDirectoryResolver, nameRegistryDirectory, type RegistryDirectory } from './local-directory.js';
import type { Resolution, Resolver } from './resolver.js';
import { ServerResolver } from './server-resolver.js';
import { UrlContentResolver } from './url-resolver.js';

export interface ResolverSetup {
  chain: Resolver[];
  /** The cache resolver of the chain (remembers what sources answered), when asked for. */
  cache: CacheResolver | undefined;
  /** Names of resolvers whose answers are not remembered in the cache (registry directories). */
  unremembered: ReadonlySet<string>;
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
        timeoutMs: options.config.httpTimeoutMs,
        ...(options.onWarning ? { onWarning: options.onWarning } : {}),
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
    // Asked only about oci:// references (resolver.ts `asks`), which no other source is asked about.
    sources.push(
      new OciResolver({
        plainHttp: options.config.oci?.plainHttp ?? false,
        authFiles: options.config.oci?.authFiles ?? [],
        timeoutMs: options.config.httpTimeoutMs,
        onRequest: options.onRequest,
      }),
    );
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
  // The end: plain URLs online (pinned by dm.lock's digests, never remembered in the cache), or
  // OFFLINE_MISSING for everything nobody took.
  const end = offline
    ? new OfflineEnd()
    : new UrlContentResolver({
        timeoutMs: options.config.httpTimeoutMs,
        ...(options.onRequest ? { onRequest: options.onRequest } : {}),
      });
  unremembered.add(end.name);
  const chain: Resolver[] = [...(options.first ?? []), ...(cache ? [cache] : []), ...sources, end];
  return { chain, cache, unremembered, defaultRegistry, directories };
}

/** Ends the chain offline: everything not yet answered is missing, said precisely. */
export class OfflineEnd implements Resolver {
  readonly name = 'offline';
  readonly acceptsOci = true;
  async resolve(refs: readonly RegistryReference[]): Promise<Resolution[]> {
    return refs.map(missing);
  }
  async resolveUrls(refs: readonly UrlReference[]): Promise<Resolution[]> {
    return refs.map(missing);
  }
}

function missing(ref: Reference): DmError {
  return new DmError(
    'OFFLINE_MISSING',
    ref.kind === 'url'
      ? `${ref.url} is a URL not in dm.lock, and --offline forbids fetching it`
      : `${formatReference(ref)} is not in dm.lock or the cache, and --offline forbids fetching it`,
    {
      category: 'unreachable',
      hint: `run dm install once with network access${ref.kind === 'url' ? ' (dm.lock then pins it)' : ''}`,
    },
  );
}

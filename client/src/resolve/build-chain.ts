/**
 * Builds the resolver chain from configuration (spec/registry.md §5-6): lock file → cache →
 * registry directories (`--registry-dir`) → registry server (`--registry-url`) → GitHub (github.com
 * and configured Enterprise hosts). Nothing else in the client knows which resolvers there are.
 */
import type { DmConfig } from '../config/config.js';
import { ContentCache } from '../fetch/content-cache.js';
import { type DefaultRegistry, parseDefaultRegistry } from '../reference/reference.js';
import { gitSourceResolver } from './git-resolver.js';
import { GitHubResolver } from './github-resolver.js';
import { localDirectoryResolver, nameRegistryDirectory, type RegistryDirectory } from './local-directory.js';
import type { Resolver } from './resolver.js';
import { ServerResolver } from './server-resolver.js';

export interface ResolverSetup {
  chain: Resolver[];
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
  /** Called for every HTTP request a network resolver makes. */
  onRequest?: (method: string, url: string) => void;
  onWarning?: (message: string) => void;
}

export async function buildResolverChain(options: BuildChainOptions): Promise<ResolverSetup> {
  const directories: RegistryDirectory[] = [];
  for (const flag of options.registryDirs ?? []) {
    directories.push(await nameRegistryDirectory(flag, options.config.registry));
  }
  let defaultRegistry = options.config.registry ? parseDefaultRegistry(options.config.registry) : undefined;
  if (!defaultRegistry && directories.length === 1) {
    defaultRegistry = { ...directories[0]!.registry, collection: '' };
  }
  // Registry directories come before network sources: a directory named for a registry is the
  // user's explicit local override of it (as `npm link` is), and works offline.
  const chain: Resolver[] = [...(options.first ?? []), ...directories.map(localDirectoryResolver)];
  if (options.config.registryUrl && !options.config.offline) {
    chain.push(
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
    chain.push(gitSourceResolver(name, location, options.config));
  }
  if (!options.config.offline) {
    chain.push(
      new GitHubResolver({
        config: options.config,
        cache: new ContentCache({ root: options.config.dirs.cache }),
        ...(options.onRequest ? { onRequest: options.onRequest } : {}),
        ...(options.onWarning ? { onWarning: options.onWarning } : {}),
      }),
    );
  }
  return { chain, defaultRegistry, directories };
}

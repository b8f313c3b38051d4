/**
 * Blueprints by registry reference (docs/blueprints.md "Commands"): a registry version
 * directory holding `blueprint.yaml` (kind `blueprint`), resolved through the resolver chain
 * and fetched through the content cache (verified by digest), as the registry template source
 * does for templates.
 */
import type { DmConfig } from '../config/config.js';
import { DmError } from '../error.js';
import type { BlueprintSource } from './engine.js';

export interface RegistryBlueprintOptions {
  config: DmConfig;
  registryDirs?: readonly string[];
  warn?: (message: string) => void;
}

export interface RegistryBlueprintLoader {
  load(reference: string): Promise<BlueprintSource & { resolved: string }>;
}

export async function createRegistryBlueprintLoader(
  options: RegistryBlueprintOptions,
): Promise<RegistryBlueprintLoader> {
  const { buildResolverChain } = await import('../resolve/build-chain.js');
  const { ResolutionSession } = await import('../resolve/resolution-session.js');
  const { ContentCache } = await import('../fetch/content-cache.js');
  const { parseReference } = await import('../reference/reference.js');
  const setup = await buildResolverChain({
    config: options.config,
    registryDirs: options.registryDirs ?? [],
    ...(options.warn ? { onWarning: options.warn } : {}),
  });
  const session = new ResolutionSession({
    chain: setup.chain,
    cache: new ContentCache({ root: options.config.dirs.cache, warn: options.warn }),
    offline: options.config.offline,
  });
  return {
    async load(reference: string) {
      const ref = parseReference(reference, { defaultRegistry: setup.defaultRegistry });
      if (ref.kind !== 'registry') {
        throw new DmError(
          'NOT_A_BLUEPRINT',
          `${reference}: blueprints are loaded from registries, not URLs`,
          {
            category: 'invalid-input',
          },
        );
      }
      const resolved = (await session.resolve([ref]))[0]!;
      if (resolved.kind !== 'blueprint') {
        throw new DmError(
          'NOT_A_BLUEPRINT',
          `${reference} is a ${resolved.kind}, not a blueprint (no blueprint.yaml)`,
          {
            category: 'invalid-input',
            hint: 'use dm expand or dm deploy for templates',
          },
        );
      }
      const files: Record<string, string> = {};
      for (const [path, data] of await session.contents(resolved)) files[path] = data.toString('utf8');
      return { files, resolved: `${resolved.template}:=${resolved.version}` };
    },
  };
}

/**
 * Resolutions remembered in the cache's metadata: a floating reference is answered from the cache
 * while its record is fresh (TTL), an exact pin whenever it is there; offline, any record will do.
 */
import type { ContentCache } from '../fetch/content-cache.js';
import { formatReference, type RegistryReference } from '../reference/reference.js';
import { sha256Hex } from '../registry/digest.js';
import type { Resolution, Resolver } from './resolver.js';
import type { ResolvedVersion } from './types.js';

export const DEFAULT_RESOLUTION_TTL_MS = 10 * 60 * 1000;

/** The cache key of a remembered resolution: the reference, and the sources it was resolved against. */
export function resolutionKey(reference: string, scope = ''): string {
  return scope === '' ? `resolution:${reference}` : `resolution:${sha256Hex(scope)}:${reference}`;
}

export class CacheResolver implements Resolver {
  readonly name = 'cache';
  readonly acceptsOci = true;
  constructor(
    private readonly cache: ContentCache,
    private readonly options: { ttlMs?: number; offline?: boolean; now?: () => number; scope?: string } = {},
  ) {}

  async resolve(refs: readonly RegistryReference[]): Promise<Resolution[]> {
    const now = (this.options.now ?? Date.now)();
    const ttl = this.options.ttlMs ?? DEFAULT_RESOLUTION_TTL_MS;
    return Promise.all(
      refs.map(async (ref) => {
        const record = await this.cache.readMeta<ResolvedVersion>(
          resolutionKey(formatReference(ref), this.options.scope),
        );
        if (!record) return null;
        const fresh = this.options.offline || ref.version?.exact || now - record.fetchedAt < ttl;
        return fresh ? record.value : null;
      }),
    );
  }

  /** Remembers resolutions made by other resolvers. */
  async remember(resolved: readonly ResolvedVersion[]): Promise<void> {
    await Promise.all(
      resolved.map((r) => this.cache.writeMeta(resolutionKey(r.reference, this.options.scope), r)),
    );
  }
}

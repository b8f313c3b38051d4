/**
 * The lock file as the first resolver: a reference written in the lock — a registry reference or a
 * plain URL — resolves to exactly what the lock says, without asking any source (docs/client.md
 * "dm.lock").
 */
import { DmError } from '../error.js';
import {
  formatReference,
  type Reference,
  type RegistryReference,
  type UrlReference,
} from '../reference/reference.js';
import { type LockFile, resolvedFromLock } from './lock-file.js';
import type { Resolution, Resolver } from './resolver.js';

export class LockResolver implements Resolver {
  readonly name = 'lock file';
  readonly acceptsOci = true;
  constructor(
    private readonly lock: LockFile,
    private readonly options: { frozen?: boolean } = {},
  ) {}

  async resolve(refs: readonly RegistryReference[]): Promise<Resolution[]> {
    return refs.map((ref) => this.answer(ref));
  }

  async resolveUrls(refs: readonly UrlReference[]): Promise<Resolution[]> {
    return refs.map((ref) => this.answer(ref));
  }

  private answer(ref: Reference): Resolution {
    const key = formatReference(ref);
    const entry = this.lock.references[key];
    if (entry) return resolvedFromLock(key, entry);
    if (this.options.frozen) {
      return new DmError(
        'LOCKFILE_OUTDATED',
        `${key} is needed but not in dm.lock, and --frozen-lockfile forbids changing it`,
        {
          category: 'validation',
          hint: 'run dm install without --frozen-lockfile and commit dm.lock',
        },
      );
    }
    return null;
  }
}

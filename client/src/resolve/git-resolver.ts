/**
 * Registries served from git repositories (the config file's `sources:`, `host/owner/repo` →
 * a local repository path or a git URL, `@branch` optional), read with the `git` binary through
 * the shared git source (client/src/source/git.ts): the committed tree of the branch, not the
 * working tree (that is what `--registry-dir` is for). Remote repositories are fetched into the
 * cache directory.
 */
import { join } from 'node:path';
import type { DmConfig } from '../config/config.js';
import { parseDefaultRegistry } from '../reference/reference.js';
import { SnapshotResolver } from './snapshot-resolver.js';
import { snapshotFromSource } from './source-snapshot.js';

/** Splits `location@branch`; an `@` inside `user@host:` of an scp-style URL is not a branch. */
export function splitBranch(location: string): { location: string; branch: string | null } {
  const at = location.lastIndexOf('@');
  if (at <= 0 || location.slice(at).includes(':') || location.slice(at).includes('/'))
    return { location, branch: null };
  return { location: location.slice(0, at), branch: location.slice(at + 1) };
}

export function gitSourceResolver(name: string, spec: string, config: DmConfig): SnapshotResolver {
  const registry = parseDefaultRegistry(name);
  const { location, branch } = splitBranch(spec);
  return new SnapshotResolver({
    name: `git ${location}${branch ? `@${branch}` : ''}`,
    registry: { host: registry.host, owner: registry.owner, repo: registry.repo },
    load: async () => {
      const { GitSource } = await import('../source/git.js');
      return snapshotFromSource(
        new GitSource({ location, branch, cacheDir: join(config.dirs.cache, 'git') }),
      );
    },
  });
}

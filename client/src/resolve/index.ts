/** Resolution, locking and installing (docs/references.md, docs/client.md). */
export { type BuildChainOptions, buildResolverChain, type ResolverSetup } from './build-chain.js';
export { CacheResolver } from './cache-resolver.js';
export { referencesInDocument, referencesInText, urlsInDocument } from './discover-references.js';
export { gitSourceResolver } from './git-resolver.js';
export { GitHubResolver } from './github-resolver.js';
export {
  type InstalledReference,
  type InstallOptions,
  type InstallResult,
  install,
  type OutdatedEntry,
  outdated,
  type PullResult,
  pull,
} from './install.js';
export { localDirectoryResolver, nameRegistryDirectory, type RegistryDirectory } from './local-directory.js';
export {
  emptyLockFile,
  formatLockFile,
  LOCKFILE_NAME,
  type LockEntry,
  type LockFile,
  parseLockFile,
  readLockFile,
  writeLockFile,
} from './lock-file.js';
export { LockResolver } from './lock-resolver.js';
export { RegistryTemplateSource } from './registry-template-source.js';
export { ResolutionSession, type ResolutionSessionOptions } from './resolution-session.js';
export { listVersions, type ResolveResult, resolveReferences } from './resolve-references.js';
export {
  type ChainResult,
  fetchThroughChain,
  type Resolution,
  type Resolver,
  resolveThroughChain,
} from './resolver.js';
export { searchTemplates } from './search.js';
export { resolvedFromServer } from './server-resolution.js';
export { ServerResolver } from './server-resolver.js';
export { type RegistrySnapshot, SnapshotResolver } from './snapshot-resolver.js';
export { pinnedReference, type ResolvedFile, type ResolvedVersion } from './types.js';
export { resolveUrl } from './url-resolver.js';
export { HttpChecksumLog } from './verify-checksums.js';

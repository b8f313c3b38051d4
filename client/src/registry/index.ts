/** The registry layout (docs/registry-layout.md): scanner, registry.yaml, digests, lint. */
export * from './compare-paths.js';
export * from './content-names.js';
export * from './digest.js';
export * from './finding-codes.js';
export * from './lint-registry.js';
export * from './read-directory-tree.js';
export * from './registry-yaml.js';
export * from './scan-tree.js';
export * from './types.js';
export * from './version-tar.js';

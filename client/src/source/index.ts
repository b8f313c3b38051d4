/**
 * Where a registry's files are read from (docs/client.md): the Source interface and its GitHub,
 * git and tarball implementations. An entry the server imports (docs/server.md "Where things are").
 */
export * from './git.js';
export * from './github.js';
export * from './source.js';
export * from './tarball.js';

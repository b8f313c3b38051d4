/**
 * dm's library: the whole public surface. The CLI (`cli/`) and the registry server (`server/`) are
 * built on these; other programs can use them the same way.
 */
export * as blueprint from './blueprint/index.js';
export * from './config/config.js';
export * from './config/properties.js';
export * from './deploy/index.js';
export * from './document/yaml.js';
export * from './error.js';
export * from './expand/index.js';
export * from './fetch/content-cache.js';
// The checksum log (docs/integrity.md), as a namespace: its names (leafHash, Checkpoint) are generic.
export * as integrity from './integrity/index.js';
export * from './layer/index.js';
export * from './merge/index.js';
export * from './reference/index.js';
export * from './registry/index.js';
// Both the registry (jinja | python | blueprint) and the expansion engine (jinja | python) name a
// TemplateKind; the library's is the registry's, the wider one.
export type { TemplateKind } from './registry/types.js';
export * from './resolve/index.js';

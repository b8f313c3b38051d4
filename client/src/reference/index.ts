/** References, versions and the patch float (spec/registry.md §2, §3, §5). */
export * from './pick-version.js';
export * from './reference.js';
export * from './version.js';

/** References, versions and the patch float (docs/references.md). */
export * from './pick-version.js';
export * from './reference.js';
export * from './version.js';

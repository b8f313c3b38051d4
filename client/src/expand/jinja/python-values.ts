/**
 * Kept for importers outside the expansion engine that have not moved yet (blueprint/): Python
 * value semantics live in the leaf module client/src/python/values.ts.
 */
export * from '../../python/values.js';

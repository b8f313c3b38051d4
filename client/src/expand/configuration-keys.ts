/**
 * A configuration's top-level keys (docs/expansion.md "Configurations and expansion"): a leaf module, so that the
 * deploy path can check them without loading the expansion engines.
 */
import { DmError } from '../error.js';
import { nearest } from '../nearest.js';

/** The top-level keys a Deployment Manager configuration has (docs/expansion.md). */
export const CONFIGURATION_KEYS = ['imports', 'resources', 'outputs'] as const;

/**
 * The one decision on a configuration's top-level keys, for `dm expand`, `dm deploy` and the
 * Deployment Manager API alike (docs/deployments.md "What `dm deploy` accepts"): a key DM never had
 * (`resource:` for `resources:`) is refused, naming the key and the file, before anything else.
 */
export function checkConfigurationKeys(doc: Record<string, unknown>, where: string): void {
  const known: readonly string[] = CONFIGURATION_KEYS;
  const unknown = Object.keys(doc).find((k) => !known.includes(k));
  if (unknown === undefined) return;
  const guess = nearest(unknown, known);
  throw new DmError(
    'UNKNOWN_CONFIGURATION_KEY',
    `${where}: unknown top-level key '${unknown}'${guess ? ` (did you mean '${guess}'?)` : ''}; a configuration has only ${known.join(', ')}`,
    { details: { file: where, key: unknown } },
  );
}

/** The keys of a resource DM reads: `metadata` holds `dependsOn`, `accessControl` an IAM policy. */
export const RESOURCE_KEYS = ['name', 'type', 'properties', 'metadata', 'accessControl'] as const;

/**
 * Warnings for the keys of a resource DM does not read (`propeties:` for `properties:`): ignored, as
 * DM ignored them, but said, since the resource then expands with its defaults.
 */
export function unknownResourceKeys(resource: Record<string, unknown>, label: string): string[] {
  const known: readonly string[] = RESOURCE_KEYS;
  return Object.keys(resource)
    .filter((k) => !known.includes(k))
    .map((k) => {
      const guess = nearest(k, known);
      return `unknown key '${k}' in resource ${label}${guess ? ` (did you mean '${guess}'?)` : ''}; ignored (a resource has ${known.join(', ')})`;
    });
}

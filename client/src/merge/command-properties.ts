/**
 * The properties a command runs with — the one place their precedence is decided, as helm's
 * `MergeValues`: the values files (`-f`, in order, later wins, deep), then `--properties` (deep, so
 * `--properties db.port=5432` keeps `db.host` of a values file). Used by expand, deploy, install
 * and update (docs/client.md "Values and properties"). The merging modules load only when there
 * are values files: without them a command's start (a short `dm expand`) does not pay for them.
 */
import { mergeDeep } from '../data.js';

export async function commandProperties(
  valuesFiles: readonly string[],
  properties: Record<string, unknown>,
  options: { cwd?: string } = {},
): Promise<Record<string, unknown>> {
  const values =
    valuesFiles.length === 0 ? {} : (await import('./values.js')).mergeValuesFiles(valuesFiles, options);
  return mergeDeep(values, properties);
}

/**
 * What resolving a reference yields (docs/client.md "The resolver chain"): the exact version, the registry commit,
 * and the sha256 of every file plus one digest of the whole version. The same shape comes from a
 * local directory, a git repository, GitHub, a registry server (its `/api/v1/resolve` answer) and
 * the lock file, so that every resolver is interchangeable.
 */
import type { TemplateKind } from '../registry/types.js';

export interface ResolvedFile {
  /** Relative to the version directory. */
  path: string;
  /** Lowercase hex sha256 of the content (no prefix). */
  sha256: string;
  size: number;
}

export interface ResolvedVersion {
  /** The canonical reference that was asked for, e.g. `github.com/o/r/redis:v1.0`. */
  reference: string;
  /** The template without version, e.g. `github.com/o/r/redis`. */
  template: string;
  /** The exact version directory name, e.g. `v1.0.3`. */
  version: string;
  /** The registry commit the answer is from ('' for a plain directory that is not a git work tree). */
  commit: string;
  kind: TemplateKind;
  /** The top-level template file, relative to the version directory. */
  templateFile: string;
  schemaFile?: string | undefined;
  files: ResolvedFile[];
  /** `sha256:<hex>` over the sorted list of `path\0sha256\n`. */
  digest: string;
  /** For a version from an OCI registry: its manifest's digest (docs/oci.md). */
  manifest?: string | undefined;
}

/** The canonical exact form of a resolution: `github.com/o/r/redis:=v1.0.3`. */
export function pinnedReference(resolved: Pick<ResolvedVersion, 'template' | 'version'>): string {
  return `${resolved.template}:=${resolved.version}`;
}

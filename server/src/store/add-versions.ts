/**
 * The rules of adding versions without a swap (docs/mirroring.md), the same for both dialects:
 * which versions are new, unchanged or in conflict, whether one becomes its template's latest, the
 * search fields of its schema, and the errors. sqlite/add-versions.ts and postgres/add-versions.ts
 * load their inputs and write what these decide.
 */
import { DmError } from '../../../client/src/error.js';
import { compareVersions, tryParseVersion } from '../../../client/src/reference/index.js';
import { schemaInfo } from '../indexer/build-index.js';
import type { AddedFile, AddedVersion } from './contract.js';

export interface VersionConflict {
  reference: string;
  stored: string;
  incoming: string;
}

/** Whether an added version becomes its template's latest (newer, or the latest replaced). */
export function takesLatest(v: AddedVersion, latest: string | null): boolean {
  return newer(v.version, latest) || (v.supersedes !== undefined && v.version === latest);
}

export function newer(a: string, b: string | null): boolean {
  if (b === null) return true;
  const va = tryParseVersion(a);
  const vb = tryParseVersion(b);
  if (!va || !vb) return a > b;
  return compareVersions(va, vb) > 0;
}

export function schemaInfoOf(schemaJson: string | null): ReturnType<typeof schemaInfo> {
  if (!schemaJson) return schemaInfo(null);
  try {
    return schemaInfo(JSON.parse(schemaJson));
  } catch {
    return schemaInfo(null);
  }
}

/**
 * Splits versions to add into new ones and ones stored with the same digest; throws
 * `VERSION_CONFLICT` when any is stored with another digest (`stored` answers the stored digest).
 */
export function sortAdded(
  registry: string,
  versions: readonly AddedVersion[],
  stored: (v: AddedVersion) => string | undefined,
): { todo: AddedVersion[]; unchanged: number } {
  const conflicts: VersionConflict[] = [];
  const todo: AddedVersion[] = [];
  let unchanged = 0;
  for (const v of versions) {
    const digest = stored(v);
    if (digest === undefined) todo.push(v);
    else if (digest === v.digest) unchanged++;
    else if (v.supersedes === digest)
      todo.push(v); // accepted upstream: replaces the stored one
    else conflicts.push({ reference: exactName(registry, v), stored: digest, incoming: v.digest });
  }
  if (conflicts.length > 0) throw conflictError(conflicts);
  return { todo, unchanged };
}

/** Nothing is written when a stored version would change (docs/mirroring.md). */
export function conflictError(conflicts: readonly VersionConflict[]): DmError {
  const first = conflicts[0]!;
  return new DmError(
    'VERSION_CONFLICT',
    `${first.reference} is stored with digest ${first.stored} and would become ${first.incoming}; published versions never change, so nothing was written${conflicts.length > 1 ? ` (${conflicts.length} versions conflict)` : ''}`,
    { category: 'conflict', details: { conflicts } },
  );
}

/** `registry/collection/template:=version`, as conflicts name a version. */
export function exactName(registry: string, v: { collection: string; template: string; version: string }) {
  return `${[registry, v.collection, v.template].filter(Boolean).join('/')}:=${v.version}`;
}

/** The content a version needs that is neither stored nor supplied. */
export function contentMissing(v: AddedVersion, f: AddedFile): DmError {
  return new DmError(
    'CONTENT_MISSING',
    `the content of ${v.template}:${v.version} file ${f.path} (${f.sha256}) is not available`,
    { category: 'invalid-input' },
  );
}

/** The key of a version within its registry, as `flagRemovedUpstream` takes it. */
export function versionKey(v: { collection: string; template: string; version: string }): string {
  return `${v.collection}\0${v.template}\0${v.version}`;
}

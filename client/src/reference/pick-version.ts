/**
 * DM's patch float (docs/references.md "Patch float"): the highest released version with the same MAJOR.MINOR
 * whose PATCH is at least the requested one; never a higher minor or major; pre-releases only when
 * the request names one (then like npm's `~`: later pre-releases of the same MAJOR.MINOR.PATCH, or
 * any release above it in the same MAJOR.MINOR); an exact pin `=v1.1.2` matches that version only.
 */
import { DmError } from '../error.js';
import {
  compareVersions,
  isPrerelease,
  newestFirst,
  parseVersion,
  tryParseVersion,
  type Version,
} from './version.js';

export interface VersionRequest {
  version: Version;
  /** `=v1.1.2`: that version only. */
  exact: boolean;
}

/** Parses `v1.1`, `v2.0.0-rc.1` or `=v1.1.2`. */
export function parseVersionRequest(text: string): VersionRequest {
  const exact = text.startsWith('=');
  return { version: parseVersion(exact ? text.slice(1) : text), exact };
}

export function formatVersionRequest(request: VersionRequest): string {
  return `${request.exact ? '=' : ''}${request.version.raw}`;
}

function matches(candidate: Version, request: VersionRequest): boolean {
  const r = request.version;
  if (request.exact) return compareVersions(candidate, r) === 0;
  if (candidate.major !== r.major || candidate.minor !== r.minor) return false;
  if (compareVersions(candidate, r) < 0) return false;
  if (!isPrerelease(candidate)) return true;
  // A pre-release only when asked for, and only of the same MAJOR.MINOR.PATCH.
  return isPrerelease(r) && candidate.patch === r.patch;
}

/** Whether the version name `name` is one that `request` may float to (the patch float, above). */
export function admits(name: string, request: VersionRequest): boolean {
  const v = tryParseVersion(name);
  return v !== undefined && matches(v, request);
}

/**
 * Picks among `available` version names (as the registry's directories name them) for `requested`.
 * Names that are not versions are ignored. Ties (same version, different build metadata) go to the
 * name that sorts last, so the answer is deterministic. Throws VERSION_NOT_FOUND listing what exists.
 */
export function pickVersion(
  available: readonly string[],
  requested: string | VersionRequest,
  options: { subject?: string } = {},
): string {
  const request = typeof requested === 'string' ? parseVersionRequest(requested) : requested;
  const r = request.version;
  let best: Version | undefined;
  // Cheap prefix check first: only names of the requested MAJOR.MINOR are parsed in full.
  const prefix = request.exact
    ? undefined
    : new RegExp(`^v${r.major}(?:\\.${r.minor}(?:[.+-]|$)|(?:[+-]|$))`);
  for (const name of available) {
    if (prefix && !prefix.test(name)) continue;
    const v = tryParseVersion(name);
    if (!v || !matches(v, request)) continue;
    if (!best) {
      best = v;
      continue;
    }
    const c = compareVersions(v, best);
    if (c > 0 || (c === 0 && v.raw > best.raw)) best = v;
  }
  if (best) return best.raw;

  const { sameMinor, sameMinorCount, newest } = whatThereIs(available, r);
  const subject = options.subject ?? 'the template';
  const have = !sameMinor.length
    ? `no versions v${r.major}.${r.minor}.x`
    : sameMinorCount > sameMinor.length
      ? `have ${sameMinorCount} for v${r.major}.${r.minor}, the highest: ${sameMinor.join(', ')}`
      : `have for v${r.major}.${r.minor}: ${sameMinor.join(', ')}`;
  throw new DmError(
    'VERSION_NOT_FOUND',
    `no version of ${subject} matches ${formatVersionRequest(request)} (${have}; newest: ${newest ?? 'none'})`,
    {
      category: 'not-found',
      details: { requested: formatVersionRequest(request), sameMinor, newest: newest ?? null },
      ...(newest && !request.exact && sameMinor.length === 0 ? { hint: `ask for ${newest} explicitly` } : {}),
    },
  );
}

/**
 * For a not-found answer, in one pass over `available` (a template may hold very many versions:
 * nothing is sorted whole): the highest NEAREST_VERSIONS versions of `r`'s MAJOR.MINOR in
 * ascending order, how many there are, and the newest release (the newest version when there is
 * no release). Equal versions (build metadata) keep the order of `available`, the later one higher.
 */
function whatThereIs(
  available: readonly string[],
  r: Version,
): { sameMinor: string[]; sameMinorCount: number; newest: string | undefined } {
  const top: Version[] = [];
  let sameMinorCount = 0;
  let newestRelease: Version | undefined;
  let newestAny: Version | undefined;
  for (const name of available) {
    const v = tryParseVersion(name);
    if (!v) continue;
    if (!newestAny || compareVersions(v, newestAny) >= 0) newestAny = v;
    if (!isPrerelease(v) && (!newestRelease || compareVersions(v, newestRelease) >= 0)) newestRelease = v;
    if (v.major !== r.major || v.minor !== r.minor) continue;
    sameMinorCount++;
    // Kept ascending; a version goes after those equal to it.
    let at = top.length;
    while (at > 0 && compareVersions(top[at - 1] as Version, v) > 0) at--;
    if (at === 0 && top.length === NEAREST_VERSIONS) continue;
    top.splice(at, 0, v);
    if (top.length > NEAREST_VERSIONS) top.shift();
  }
  return { sameMinor: top.map((v) => v.raw), sameMinorCount, newest: (newestRelease ?? newestAny)?.raw };
}

/** How many versions a not-found answer names at most: those nearest to the one asked for. */
export const NEAREST_VERSIONS = 10;

export interface NearestVersions {
  /** At most NEAREST_VERSIONS versions around where the one asked for would sort, newest first. */
  versions: string[];
  /** The one to suggest: what the request floats to, else the nearest below it, else above it. */
  closest: string | undefined;
  /** How many versions there are in all. */
  total: number;
}

/**
 * The versions nearest to `requested` (a version, `v1.0`, `=v1.0.3`, or any text someone typed;
 * none: the newest),
 * for a not-found answer that names a few instead of every version (docs/server.md "HTTP API"):
 * as many just below as just above where it would sort, fewer on the side that runs out; the newest
 * when `requested` is not a version. The one path the API's and the pages' 404s take.
 */
export function nearestVersions(
  available: readonly string[],
  requested: string | VersionRequest | undefined,
): NearestVersions {
  const sorted = available
    .flatMap((name) => {
      const v = tryParseVersion(name);
      return v ? [v] : [];
    })
    .sort((a, b) => compareVersions(b, a) || (a.raw < b.raw ? 1 : a.raw > b.raw ? -1 : 0));
  const target =
    typeof requested === 'string'
      ? tryParseVersion(requested.startsWith('=') ? requested.slice(1) : requested)
      : requested?.version;
  // Where `requested` sorts: the first version not newer than it (newest-first order).
  let at = 0;
  if (target) {
    let high = sorted.length;
    while (at < high) {
      const mid = (at + high) >>> 1;
      if (compareVersions(sorted[mid]!, target) > 0) at = mid + 1;
      else high = mid;
    }
  }
  const start = Math.max(
    0,
    Math.min(at - Math.floor(NEAREST_VERSIONS / 2), sorted.length - NEAREST_VERSIONS),
  );
  let closest: string | undefined;
  if (target) {
    try {
      closest = pickVersion(available, requested!);
    } catch {
      closest = (sorted[at] ?? sorted[at - 1])?.raw;
    }
  } else closest = sorted[0]?.raw;
  return {
    versions: sorted.slice(start, start + NEAREST_VERSIONS).map((v) => v.raw),
    closest,
    total: sorted.length,
  };
}

/** The highest released version (no pre-releases unless nothing else exists), for references without a version. */
export function pickLatest(available: readonly string[], options: { subject?: string } = {}): string {
  const sorted = newestFirst(available);
  const latest = sorted.find((name) => !isPrerelease(parseVersion(name))) ?? sorted[0];
  if (!latest) {
    throw new DmError('VERSION_NOT_FOUND', `${options.subject ?? 'the template'} has no versions`, {
      category: 'not-found',
      details: { sameMinor: [], newest: null },
    });
  }
  return latest;
}

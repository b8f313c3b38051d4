/**
 * Template versions (docs/references.md "Versions"): `v` + MAJOR[.MINOR[.PATCH]] with optional semver
 * pre-release and build parts. Omitted parts default to zero (`v1.1` ≡ `v1.1.0`). Leading zeros,
 * empty parts, a missing `v` and more than three numeric parts are invalid. Ordering is semver's
 * (the `semver` package underneath); build metadata is ignored for ordering.
 */
import { SemVer } from 'semver';
import { DmError } from '../error.js';

export interface Version {
  major: number;
  minor: number;
  patch: number;
  prerelease: readonly (string | number)[];
  build: readonly string[];
  /** The version as written, e.g. `v1.1`. */
  raw: string;
  /** The semver form used for ordering, e.g. `1.1.0`. */
  semver: SemVer;
}

const NUMBER = '(0|[1-9]\\d*)';
const IDENTIFIER = '(?:0|[1-9]\\d*|\\d*[A-Za-z-][0-9A-Za-z-]*)';
const BUILD_IDENTIFIER = '[0-9A-Za-z-]+';
const VERSION_RE = new RegExp(
  `^v${NUMBER}(?:\\.${NUMBER})?(?:\\.${NUMBER})?` +
    `(?:-(${IDENTIFIER}(?:\\.${IDENTIFIER})*))?` +
    `(?:\\+(${BUILD_IDENTIFIER}(?:\\.${BUILD_IDENTIFIER})*))?$`,
);
const MAX_VERSION_LENGTH = 256;

/** Why `text` is not a version, or undefined when it is one. */
function explainInvalid(text: string): string {
  if (text.length > MAX_VERSION_LENGTH) return `longer than ${MAX_VERSION_LENGTH} characters`;
  if (!text.startsWith('v')) return "it must start with 'v', e.g. v1.2.3";
  const core = text.slice(1).split(/[-+]/, 1)[0] ?? '';
  const parts = core.split('.');
  if (parts.length > 3) return 'it has more than three numeric parts';
  if (parts.some((p) => p === '')) return 'it has an empty numeric part';
  if (parts.some((p) => !/^\d+$/.test(p))) return 'its numeric parts must be digits';
  if (parts.some((p) => p.length > 1 && p.startsWith('0'))) return 'a numeric part has a leading zero';
  if (parts.some((p) => !Number.isSafeInteger(Number(p)))) return 'a numeric part is too large';
  return 'its pre-release or build part is malformed';
}

/** Parses a version or returns undefined. Never throws. */
export function tryParseVersion(text: string): Version | undefined {
  if (typeof text !== 'string' || text.length > MAX_VERSION_LENGTH) return undefined;
  const m = VERSION_RE.exec(text);
  if (!m) return undefined;
  const major = Number(m[1]);
  const minor = m[2] === undefined ? 0 : Number(m[2]);
  const patch = m[3] === undefined ? 0 : Number(m[3]);
  if (!Number.isSafeInteger(major) || !Number.isSafeInteger(minor) || !Number.isSafeInteger(patch))
    return undefined;
  const pre = m[4] === undefined ? '' : `-${m[4]}`;
  const build = m[5] === undefined ? '' : `+${m[5]}`;
  let semver: SemVer;
  try {
    semver = new SemVer(`${major}.${minor}.${patch}${pre}${build}`);
  } catch {
    return undefined;
  }
  return { major, minor, patch, prerelease: semver.prerelease, build: semver.build, raw: text, semver };
}

/** Parses a version; throws DmError INVALID_VERSION naming the bad value and why. */
export function parseVersion(text: string): Version {
  const v = tryParseVersion(text);
  if (!v) {
    throw new DmError(
      'INVALID_VERSION',
      `'${text}' is not a valid version: ${explainInvalid(String(text))}`,
      {
        category: 'invalid-input',
        hint: 'versions look like v1, v1.2, v1.2.3 or v2.0.0-rc.1',
      },
    );
  }
  return v;
}

/** Semver ordering; build metadata ignored. */
export function compareVersions(a: Version, b: Version): number {
  return a.semver.compare(b.semver);
}

/**
 * Version names newest first in semver order — the one order of `dm versions`, `latest` and the
 * server's version lists. Equal versions (`v1` and `v1.0.0`, build metadata) go by name, the name
 * that sorts last first, so the order is deterministic. Names that are not versions are left out.
 */
export function newestFirst(names: readonly string[]): string[] {
  return names
    .flatMap((name) => {
      const v = tryParseVersion(name);
      return v ? [v] : [];
    })
    .sort((a, b) => compareVersions(b, a) || (a.raw < b.raw ? 1 : a.raw > b.raw ? -1 : 0))
    .map((v) => v.raw);
}

/** Whether two versions denote the same version (`v1` and `v1.0.0`; build metadata ignored). */
export function sameVersion(a: Version, b: Version): boolean {
  return compareVersions(a, b) === 0;
}

/** The version as written. */
export function formatVersion(v: Version): string {
  return v.raw;
}

/** The full form with all three numeric parts, e.g. `v1.1` → `v1.1.0`; pre-release and build kept. */
export function canonicalVersion(v: Version): string {
  const pre = v.prerelease.length ? `-${v.prerelease.join('.')}` : '';
  const build = v.build.length ? `+${v.build.join('.')}` : '';
  return `v${v.major}.${v.minor}.${v.patch}${pre}${build}`;
}

export function isPrerelease(v: Version): boolean {
  return v.prerelease.length > 0;
}

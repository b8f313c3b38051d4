/**
 * The versions a not-found answer names (docs/server.md "HTTP API"): client/src/reference's
 * `nearestVersions` (the ten nearest to the one asked for, the one to suggest, how many there
 * are), fed a template's version strings a step at a time. Only the NEAREST_VERSIONS nearest on
 * each side of the one asked for and the best match of its float are kept between steps, and
 * `nearestVersions` answers from those, so a template of 100,000 versions is neither held nor
 * sorted whole (that sort alone was 370–520 ms of one turn of the event loop), and from the store
 * only its version strings are read, a step of VERSION_NAMES_STEP at a time.
 */
import {
  compareVersions,
  NEAREST_VERSIONS,
  type NearestVersions,
  nearestVersions,
  pickVersion,
  tryParseVersion,
  type Version,
  type VersionRequest,
} from '../../../client/src/reference/index.js';
import type { ReadStore } from '../store/contract.js';
import { nextTurn } from '../store/slices.js';

/** Version strings read per statement, and looked at between two turns of the event loop. */
export const VERSION_NAMES_STEP = 1000;

/** Newest first, as `nearestVersions` orders (then by the string, last first). */
const newestFirst = (a: Version, b: Version): number =>
  compareVersions(b, a) || (a.raw < b.raw ? 1 : a.raw > b.raw ? -1 : 0);

/** Puts `v` into `kept` (newest first), keeping its first `most` (`end` 'newest') or last ones. */
function keep(kept: Version[], v: Version, most: number, end: 'newest' | 'oldest'): void {
  let at = kept.length;
  while (at > 0 && newestFirst(v, kept[at - 1]!) < 0) at--;
  if (end === 'newest' && at >= most) return;
  kept.splice(at, 0, v);
  if (kept.length > most) {
    if (end === 'newest') kept.pop();
    else kept.shift();
  }
}

/** `nearestVersions` over version strings given in steps (`add`), holding a bounded few. */
export class NearestVersionsFinder {
  private readonly target: Version | undefined;
  /** The nearest newer than the target, newest first. */
  private readonly newer: Version[] = [];
  /** The nearest not newer than it (all when there is no target: the newest), newest first. */
  private readonly older: Version[] = [];
  /** What the request floats to among the strings seen so far. */
  private pick: string | undefined;
  private total = 0;

  constructor(private readonly requested: string | VersionRequest | undefined) {
    this.target =
      typeof requested === 'string'
        ? tryParseVersion(requested.startsWith('=') ? requested.slice(1) : requested)
        : requested?.version;
  }

  add(names: readonly string[]): void {
    const target = this.target;
    // What the request may float to: its MAJOR.MINOR, not below it (pickVersion decides).
    const floatable: string[] = [];
    for (const name of names) {
      const v = tryParseVersion(name);
      if (!v) continue;
      this.total++;
      const c = target ? compareVersions(v, target) : 0;
      if (c > 0) keep(this.newer, v, NEAREST_VERSIONS, 'oldest');
      else keep(this.older, v, NEAREST_VERSIONS, 'newest');
      if (target && c >= 0 && v.major === target.major && v.minor === target.minor) floatable.push(name);
    }
    if (floatable.length === 0) return;
    // The float's pick is the best of its matches in one total order: the best of the step's and
    // the best before it.
    try {
      this.pick = pickVersion(
        this.pick === undefined ? floatable : [this.pick, ...floatable],
        this.requested!,
      );
    } catch {
      // Nothing it floats to yet.
    }
  }

  result(): NearestVersions {
    const kept = [...this.newer, ...this.older].map((v) => v.raw);
    if (this.pick !== undefined && !kept.includes(this.pick)) kept.push(this.pick);
    return { ...nearestVersions(kept, this.requested), total: this.total };
  }
}

/** `nearestVersions` of `names` (held in memory), a step at a time with turns of the event loop between. */
export async function nearestOf(
  names: readonly string[],
  requested: string | VersionRequest | undefined,
): Promise<NearestVersions> {
  const finder = new NearestVersionsFinder(requested);
  for (let from = 0; from < names.length; from += VERSION_NAMES_STEP) {
    if (from > 0) await nextTurn();
    finder.add(names.slice(from, from + VERSION_NAMES_STEP));
  }
  return finder.result();
}

/** `nearestVersions` of a stored template's versions, its version strings read a step at a time. */
export async function nearestStored(
  reads: Pick<ReadStore, 'versionNamesAfter'>,
  template: { registryId: number; collection: string; name: string },
  requested: string | VersionRequest | undefined,
): Promise<NearestVersions> {
  const finder = new NearestVersionsFinder(requested);
  let after = '';
  for (;;) {
    // A turn of the event loop between steps (SQLite's reads answer without one).
    if (after !== '') await nextTurn();
    const names = await reads.versionNamesAfter(
      template.registryId,
      template.collection,
      template.name,
      after,
      VERSION_NAMES_STEP,
    );
    finder.add(names);
    if (names.length < VERSION_NAMES_STEP) break;
    after = names[names.length - 1]!;
  }
  return finder.result();
}

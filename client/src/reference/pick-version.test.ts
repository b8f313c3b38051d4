import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import { NEAREST_VERSIONS, nearestVersions, pickLatest, pickVersion } from './pick-version.js';
import { compareVersions, newestFirst, parseVersion } from './version.js';

const redis = ['v1', 'v1.0.1', 'v1.0.3', 'v1.1', 'v1.1.2', 'v2.0.0-rc.1', 'v2.0.0-rc.2', 'v1.2.0-beta.1'];

function notFound(fn: () => unknown, check: (e: DmError) => boolean = () => true): void {
  assert.throws(fn, (e: unknown) => e instanceof DmError && e.code === 'VERSION_NOT_FOUND' && check(e));
}

const versionName = fc
  .tuple(
    fc.nat(3),
    fc.option(fc.nat(3), { nil: undefined }),
    fc.option(fc.nat(5), { nil: undefined }),
    fc.option(fc.constantFrom('rc.1', 'rc.2', 'beta', 'alpha.3'), { nil: undefined }),
  )
  .map(([a, b, c, pre]) => {
    let s = `v${a}`;
    if (b !== undefined || c !== undefined || pre) s += `.${b ?? 0}`;
    if (c !== undefined || pre) s += `.${c ?? 0}`;
    return pre ? `${s}-${pre}` : s;
  });

function tryPick(available: string[], requested: string): string | undefined {
  try {
    return pickVersion(available, requested);
  } catch (e) {
    if (e instanceof DmError && e.code === 'VERSION_NOT_FOUND') return undefined;
    throw e;
  }
}

describe('pickVersion()', () => {
  it('floats to the highest patch of the same MAJOR.MINOR', () => {
    assert.equal(pickVersion(redis, 'v1'), 'v1.0.3');
    assert.equal(pickVersion(redis, 'v1.0'), 'v1.0.3');
    assert.equal(pickVersion(redis, 'v1.0.2'), 'v1.0.3');
    assert.equal(pickVersion(redis, 'v1.1'), 'v1.1.2');
  });
  it('never crosses to a higher minor', () => {
    notFound(() => pickVersion(redis, 'v1.0.4'));
    notFound(() => pickVersion(['v1.1.0'], 'v1.0'));
  });
  it('does not hand out pre-releases unless asked', () => {
    notFound(() => pickVersion(redis, 'v2'));
    notFound(() => pickVersion(redis, 'v1.2'));
    assert.equal(pickVersion(redis, 'v2.0.0-rc.1'), 'v2.0.0-rc.2');
    assert.equal(pickVersion([...redis, 'v2.0.0'], 'v2.0.0-rc.1'), 'v2.0.0');
    assert.equal(pickVersion([...redis, 'v2.0.1-rc.1'], 'v2.0.0-rc.1'), 'v2.0.0-rc.2');
  });
  it('honours exact pins', () => {
    assert.equal(pickVersion(redis, '=v1.0.1'), 'v1.0.1');
    assert.equal(pickVersion(redis, '=v1.1.0'), 'v1.1');
    notFound(() => pickVersion(redis, '=v1.0.2'));
  });
  it('names what there is as sorting every version would, in one pass (property)', () => {
    // The definition: every version sorted (stably), the same MAJOR.MINOR's highest ten, and the
    // newest release (else the newest version).
    const name = fc.oneof(
      versionName,
      fc.nat(25).map((n) => `v1.0.${n}`),
    );
    const withBuild = fc.tuple(name, fc.option(fc.constantFrom('+b1', '+b2', '+x'), { nil: undefined }));
    fc.assert(
      fc.property(
        fc.array(
          withBuild.map(([v, b]) => v + (b ?? '')),
          { maxLength: 80 },
        ),
        fc.oneof(versionName, fc.constant('v1.0.99')),
        (available, requested) => {
          const r = parseVersion(requested);
          const parsed = available.map((n) => parseVersion(n)).sort(compareVersions);
          const all = parsed.filter((v) => v.major === r.major && v.minor === r.minor).map((v) => v.raw);
          const releases = parsed.filter((v) => v.prerelease.length === 0);
          const newest = (releases.length ? releases : parsed).at(-1)?.raw ?? null;
          try {
            pickVersion(available, requested);
          } catch (e) {
            if (!(e instanceof DmError) || e.code !== 'VERSION_NOT_FOUND') throw e;
            assert.deepEqual(e.details?.sameMinor, all.slice(-NEAREST_VERSIONS));
            assert.equal(e.details?.newest, newest);
            if (all.length > NEAREST_VERSIONS) assert.match(e.message, new RegExp(`have ${all.length} for `));
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
  it('lists what exists for that MAJOR.MINOR and the newest when nothing matches', () => {
    notFound(
      () => pickVersion(redis, 'v1.0.9', { subject: 'redis' }),
      (e) =>
        /redis/.test(e.message) &&
        JSON.stringify(e.details?.sameMinor) === JSON.stringify(['v1', 'v1.0.1', 'v1.0.3']) &&
        e.details?.newest === 'v1.1.2' &&
        e.category === 'not-found',
    );
  });
  it('pickLatest() takes the highest release', () => {
    assert.equal(pickLatest(redis), 'v1.1.2');
    assert.equal(pickLatest(['v2.0.0-rc.1']), 'v2.0.0-rc.1');
    notFound(() => pickLatest([]));
  });

  it('never crosses a minor, never returns a pre-release unasked, never goes below the request (property)', () => {
    fc.assert(
      fc.property(fc.array(versionName, { maxLength: 30 }), versionName, (available, requested) => {
        const got = tryPick(available, requested);
        if (got === undefined) return;
        const g = parseVersion(got);
        const r = parseVersion(requested);
        assert.equal(g.major, r.major);
        assert.equal(g.minor, r.minor);
        assert.ok(compareVersions(g, r) >= 0);
        if (r.prerelease.length === 0) assert.equal(g.prerelease.length, 0);
        assert.ok(available.includes(got));
      }),
      { numRuns: 3000 },
    );
  });
  it('is monotone in the set of available versions (property)', () => {
    fc.assert(
      fc.property(
        fc.array(versionName, { maxLength: 20 }),
        fc.array(versionName, { maxLength: 20 }),
        versionName,
        (some, more, requested) => {
          const before = tryPick(some, requested);
          const after = tryPick([...some, ...more], requested);
          if (before === undefined) return;
          assert.notEqual(after, undefined);
          assert.ok(compareVersions(parseVersion(after!), parseVersion(before)) >= 0);
        },
      ),
      { numRuns: 3000 },
    );
  });
  it('is independent of the order of available versions (property)', () => {
    fc.assert(
      fc.property(
        fc.array(versionName, { maxLength: 20 }),
        versionName,
        fc.nat(),
        (available, requested, seed) => {
          const shuffled = [...available].sort(
            (a, b) => ((a.length * 31 + seed) % 7) - ((b.length * 31 + seed) % 7),
          );
          assert.equal(tryPick(shuffled, requested), tryPick(available, requested));
        },
      ),
    );
  });
});

describe('nearestVersions()', () => {
  const many = Array.from({ length: 150 }, (_, i) => `v1.0.${i}`);

  it('names NEAREST_VERSIONS around where the request sorts, newest first, and how many there are', () => {
    assert.deepEqual(nearestVersions(many, 'v9.9.9'), {
      versions: Array.from({ length: NEAREST_VERSIONS }, (_, i) => `v1.0.${149 - i}`),
      closest: 'v1.0.149',
      total: 150,
    });
    assert.deepEqual(
      nearestVersions(many, '=v1.0.75-rc.1').versions,
      Array.from({ length: NEAREST_VERSIONS }, (_, i) => `v1.0.${79 - i}`),
    );
    assert.equal(nearestVersions(many, '=v1.0.75-rc.1').closest, 'v1.0.74', 'the nearest below');
    assert.equal(nearestVersions(many, 'v1.0').closest, 'v1.0.149', 'what it floats to');
    assert.equal(nearestVersions(many, 'v0.1').closest, 'v1.0.0', 'the nearest above, when none is below');
    assert.deepEqual(nearestVersions(many, 'v0').versions, [...many.slice(0, NEAREST_VERSIONS)].reverse());
    assert.deepEqual(nearestVersions(many, 'not a version').versions.slice(0, 2), ['v1.0.149', 'v1.0.148']);
    assert.deepEqual(nearestVersions([], 'v1'), { versions: [], closest: undefined, total: 0 });
  });

  it('the not-found sentence names at most NEAREST_VERSIONS of the same minor', () => {
    notFound(
      () => pickVersion(many, 'v1.0.999'),
      (e) =>
        e.message ===
          `no version of the template matches v1.0.999 (have 150 for v1.0, the highest: ${many.slice(-NEAREST_VERSIONS).join(', ')}; newest: v1.0.149)` &&
        JSON.stringify(e.details?.sameMinor) === JSON.stringify(many.slice(-NEAREST_VERSIONS)),
    );
  });

  it('is a window of the sorted versions, balanced around the request where it can be (property)', () => {
    fc.assert(
      fc.property(fc.array(versionName, { maxLength: 40 }), versionName, (available, requested) => {
        const { versions, closest, total } = nearestVersions(available, requested);
        const sorted = newestFirst(available);
        assert.equal(total, sorted.length);
        assert.equal(versions.length, Math.min(NEAREST_VERSIONS, sorted.length));
        const start = sorted.indexOf(versions[0]!);
        if (versions.length > 0) assert.deepEqual(versions, sorted.slice(start, start + versions.length));
        const target = parseVersion(requested);
        const newer = versions.filter((v) => compareVersions(parseVersion(v), target) > 0).length;
        const older = versions.length - newer;
        // Half on each side, unless one side has fewer than that.
        const allNewer = sorted.filter((v) => compareVersions(parseVersion(v), target) > 0).length;
        const allOlder = sorted.length - allNewer;
        const half = Math.floor(NEAREST_VERSIONS / 2);
        if (allNewer >= half && allOlder >= NEAREST_VERSIONS - half) assert.equal(newer, half);
        else if (allNewer < half) assert.equal(newer, allNewer);
        else assert.equal(older, allOlder);
        assert.equal(closest === undefined, sorted.length === 0);
        if (closest !== undefined) assert.ok(available.includes(closest));
        const picked = tryPick(available, requested);
        if (picked !== undefined) assert.equal(closest, picked);
      }),
      { numRuns: 2000 },
    );
  });
});

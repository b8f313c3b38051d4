import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import { pickLatest, pickVersion } from './pick-version.js';
import { compareVersions, parseVersion } from './version.js';

const redis = ['v1', 'v1.0.1', 'v1.0.3', 'v1.1', 'v1.1.2', 'v2.0.0-rc.1', 'v2.0.0-rc.2', 'v1.2.0-beta.1'];

function notFound(fn: () => unknown, check: (e: DmError) => boolean = () => true): void {
  assert.throws(fn, (e: unknown) => e instanceof DmError && e.code === 'VERSION_NOT_FOUND' && check(e));
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

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import {
  canonicalVersion,
  compareVersions,
  newestFirst,
  parseVersion,
  sameVersion,
  tryParseVersion,
} from './version.js';

describe('parseVersion()', () => {
  it('defaults omitted parts to zero', () => {
    assert.equal(canonicalVersion(parseVersion('v1')), 'v1.0.0');
    assert.equal(canonicalVersion(parseVersion('v1.1')), 'v1.1.0');
    assert.ok(sameVersion(parseVersion('v2'), parseVersion('v2.0.0')));
  });
  it('reads pre-release and build parts', () => {
    const v = parseVersion('v2.0.0-rc.1+sha.abc');
    assert.deepEqual([v.major, v.minor, v.patch], [2, 0, 0]);
    assert.deepEqual(v.prerelease, ['rc', 1]);
    assert.deepEqual(v.build, ['sha', 'abc']);
    assert.equal(v.raw, 'v2.0.0-rc.1+sha.abc');
  });
  for (const [bad, why] of [
    ['v01', /leading zero/],
    ['v1..2', /empty numeric part/],
    ['1.2.3', /start with 'v'/],
    ['v1.2.3.4', /more than three/],
    ['v1.2.x', /digits/],
    ['v1.0.0-01', /pre-release or build/],
    ['v', /empty numeric part/],
    ['v1.0.0-', /pre-release or build/],
  ] as const) {
    it(`rejects ${bad} saying why`, () => {
      assert.throws(
        () => parseVersion(bad),
        (e: unknown) =>
          e instanceof DmError &&
          e.code === 'INVALID_VERSION' &&
          why.test(e.message) &&
          e.message.includes(bad),
      );
    });
  }
  it('orders by semver and ignores build metadata', () => {
    const order = [
      'v1.0.0-alpha',
      'v1.0.0-alpha.1',
      'v1.0.0-beta',
      'v1',
      'v1.0.1',
      'v1.1',
      'v2.0.0-rc.1',
      'v2',
    ];
    const shuffled = [...order].reverse().map(parseVersion).sort(compareVersions);
    assert.deepEqual(
      shuffled.map((v) => v.raw),
      order,
    );
    assert.equal(compareVersions(parseVersion('v1+a'), parseVersion('v1.0.0+b')), 0);
  });
  it('never throws from tryParseVersion and agrees with parseVersion (property)', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const v = tryParseVersion(s);
        if (v === undefined) {
          assert.throws(() => parseVersion(s), DmError);
        } else {
          assert.equal(parseVersion(s).raw, s);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('newestFirst()', () => {
  const name = fc
    .tuple(
      fc.nat({ max: 3 }),
      fc.option(fc.nat({ max: 3 }), { nil: undefined }),
      fc.option(fc.nat({ max: 3 }), { nil: undefined }),
      fc.constantFrom('', '-rc.1', '-alpha', '+b1', '+b2'),
    )
    .map(
      ([a, b, c, tail]) =>
        `v${a}${b === undefined ? '' : `.${b}`}${b !== undefined && c !== undefined ? `.${c}` : ''}${tail}`,
    );

  it('orders versions newest first, whatever order they come in, and leaves out names that are not versions (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(name, fc.constantFrom('latest', 'main', 'x1')), { maxLength: 12 }),
        (names) => {
          const sorted = newestFirst(names);
          assert.deepEqual(newestFirst([...names].reverse()), sorted, 'independent of the input order');
          assert.deepEqual(
            [...sorted].sort(),
            names.filter((n) => tryParseVersion(n)).sort(),
            'every version, and nothing else',
          );
          for (let i = 1; i < sorted.length; i++) {
            const c = compareVersions(parseVersion(sorted[i - 1]!), parseVersion(sorted[i]!));
            assert.ok(
              c > 0 || (c === 0 && sorted[i - 1]! >= sorted[i]!),
              `${sorted[i - 1]} before ${sorted[i]}`,
            );
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

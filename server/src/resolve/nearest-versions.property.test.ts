/**
 * The not-found answer's nearest versions from a few kept between steps (nearest-versions.ts)
 * are `nearestVersions`' over the whole list (client/src/reference), for random lists of
 * versions (releases, pre-releases, build metadata, names that are not versions, two-part
 * `v1.2`), random requests (present, absent, floats, exact pins, not versions, none) and random
 * steps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { nearestVersions } from '../../../client/src/reference/index.js';
import { NearestVersionsFinder, nearestOf } from './nearest-versions.js';

const part = fc.integer({ min: 0, max: 12 });
const version = fc
  .tuple(
    part,
    part,
    fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
    fc.option(fc.constantFrom('-rc.1', '-rc.2', '-alpha', '-beta.10'), { nil: undefined }),
    fc.option(fc.constantFrom('+build', '+b2'), { nil: undefined }),
  )
  .map(
    ([major, minor, patch, pre, build]) =>
      `v${major}.${minor}${patch === undefined ? '' : `.${patch}`}${pre ?? ''}${build ?? ''}`,
  );
const name = fc.oneof(
  { weight: 12, arbitrary: version },
  { weight: 1, arbitrary: fc.constantFrom('latest', 'x', 'v') },
);
const request = fc.oneof(
  version,
  version.map((v) => `=${v}`),
  fc.constantFrom('nope', '', 'v99.0.0', 'v0.0.0-a'),
  fc.constant(undefined),
);

describe('nearest versions kept in steps', () => {
  it('names what nearestVersions names over the whole list, however it is cut into steps', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(name, { maxLength: 120 }),
        request,
        fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 10 }),
        (names, requested, cuts) => {
          const finder = new NearestVersionsFinder(requested);
          let from = 0;
          for (let i = 0; from < names.length; i++) {
            const to = from + cuts[i % cuts.length]!;
            finder.add(names.slice(from, to));
            from = to;
          }
          assert.deepEqual(finder.result(), nearestVersions(names, requested));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('answers for a long list held in memory as for the list at once, with turns between steps', async () => {
    const names = Array.from({ length: 5000 }, (_, i) => `v${i % 7}.${Math.floor(i / 7) % 30}.${i}`);
    for (const requested of ['v3.4.2500', 'v6.29.99999', 'v0.0.0', '=v2.1.1000', 'v2.1', 'junk', undefined]) {
      assert.deepEqual(
        await nearestOf(names, requested),
        nearestVersions(names, requested),
        String(requested),
      );
    }
  });
});

/** Property tests of the merge engine (docs/merging.md): identities, purity, and only DmErrors. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../../client/src/error.js';
import {
  mergeManyDict,
  mergeRaw,
  mergeUserData,
  mergeValues,
  toMergeValue,
  toPlainValue,
} from '../../client/src/merge/index.js';
import * as arb from './arbitraries.js';
import { findDifference } from './compare.js';

const withoutSpec = (m: Map<string, unknown>) =>
  new Map([...m].filter(([k]) => k !== 'merge_how' && k !== 'merge_type'));

function onlyDmErrors(run: () => unknown): void {
  try {
    run();
  } catch (error) {
    if (!(error instanceof DmError)) throw error;
  }
}

describe('merge engine properties', () => {
  it('merge(x, {}) is x for every specification with a dict merger (§4: nothing to add)', () => {
    fc.assert(
      fc.property(arb.map, arb.mergeHowString, (x, how) => {
        let result: unknown;
        try {
          result = mergeRaw(x, new Map(), `${how}+dict()`);
        } catch (error) {
          assert.ok(error instanceof DmError);
          return;
        }
        assert.equal(findDifference(result, x, true), undefined);
      }),
    );
  });

  it('merge({}, x) is x under dict() and dict(replace), key order included', () => {
    fc.assert(
      fc.property(
        arb.map,
        fc.constantFrom('dict()', 'dict(replace)', 'list()+dict(no_replace)+str()'),
        (x, how) => {
          assert.equal(findDifference(mergeRaw(new Map(), x, how), x, true), undefined);
        },
      ),
    );
  });

  it('one user-data part without merge_how gives itself; values files around {} give the file', () => {
    fc.assert(
      fc.property(arb.map, (doc) => {
        const x = withoutSpec(doc);
        assert.equal(findDifference(mergeUserData([{ document: x }]).result, x, true), undefined);
        assert.equal(
          findDifference(
            mergeManyDict([{ document: new Map() }, { document: x }, { document: null }]),
            x,
            true,
          ),
          undefined,
        );
        const plain = toPlainValue(x);
        assert.deepEqual(mergeValues([{}, plain, null]), plain);
      }),
    );
  });

  it('user-data skips are exactly the parts that are not mappings or fail, and never change the result', () => {
    fc.assert(
      fc.property(fc.array(arb.part, { maxLength: 5 }), (parts) => {
        const all = mergeUserData(parts.map((document) => ({ document })));
        const skippedIndexes = new Set(all.skipped.map((s) => s.index));
        const kept = parts.filter((_, i) => !skippedIndexes.has(i));
        const again = mergeUserData(kept.map((document) => ({ document })));
        assert.deepEqual(again.skipped, []);
        assert.equal(findDifference(again.result, all.result, true), undefined);
      }),
    );
  });

  it('never changes its inputs', () => {
    fc.assert(
      fc.property(arb.mergeHowValue, arb.value, arb.value, (how, a, b) => {
        const before = structuredClone([how, a, b]);
        onlyDmErrors(() => mergeRaw(a, b, how));
        assert.deepEqual([how, a, b], before);
      }),
    );
  });

  it('throws nothing but DmError on arbitrary input', () => {
    const anything = fc.anything({
      withMap: true,
      withSet: true,
      withDate: true,
      withBigInt: true,
      withTypedArray: true,
      withSparseArray: true,
      withNullPrototype: true,
      withObjectString: true,
      maxDepth: 4,
    });
    fc.assert(
      fc.property(anything, anything, fc.oneof(anything, arb.mergeHowValue), (a, b, how) => {
        onlyDmErrors(() => mergeRaw(toMergeValue(a), toMergeValue(b), how));
        onlyDmErrors(() => mergeValues([a, b]));
        onlyDmErrors(() => mergeUserData([{ document: toMergeValue(a) }, { document: toMergeValue(b) }]));
      }),
      { numRuns: 500 },
    );
  });
});

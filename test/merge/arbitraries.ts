/**
 * fast-check generators for merge tests: nested documents in the engine's form (Maps), and merge
 * specifications in both forms, well-formed and not (docs/merging.md, "Specifications").
 */
import fc from 'fast-check';

// Few distinct keys and strings, so that documents overlap and merges have work to do.
const KEYS = ['a', 'b', 'c', 'd', '0', '1', '10', 'x y', 'é', '__proto__', 'merge_type'];
const STRINGS = ['', 'a', 'b', 'ab', 'x y', 'é😀', 'no_replace', '0'];

export const key = fc.constantFrom(...KEYS);

export const scalar: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...STRINGS),
  fc.string({ maxLength: 4 }),
  fc.integer({ min: -5, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
  fc.boolean(),
  fc.constant(null),
);

/** A value: scalars, lists and Maps nested a few levels. */
export const value: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; map: Map<string, unknown> }>(
  (tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      scalar,
      fc.array(tie('value'), { maxLength: 4 }),
      tie('map'),
    ),
    map: fc
      .uniqueArray(fc.tuple(key, tie('value')), { maxLength: 4, selector: ([k]) => k })
      .map((entries) => new Map(entries)),
  }),
).value;

export const map: fc.Arbitrary<Map<string, unknown>> = fc
  .uniqueArray(fc.tuple(key, value), { maxLength: 5, selector: ([k]) => k })
  .map((entries) => new Map(entries));

const NAMES = ['dict', 'list', 'str', 'm_dict', 'm_list', 'm_str', 'Dict', 'LIST', 'x', 'm_x', 'dict '];
const OPTIONS = [
  'replace',
  'no_replace',
  'append',
  'prepend',
  'recurse_dict',
  'recurse_list',
  'recurse_array',
  'recurse_str',
  'allow_delete',
  'No-Replace',
  ' append ',
  'bogus',
];

/** One `name(opt,…)` component, sometimes with case, hyphens, spaces, or broken. */
const component: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(fc.constantFrom(...NAMES), fc.subarray(OPTIONS, { maxLength: 4 }), fc.constantFrom('', ' ', ','))
      .map(([n, o, sep]) => `${n}(${o.join(`,${sep}`)})`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'dict',
      'dict(',
      'dict (replace)',
      'di-ct()',
      ' STR( Append ) ',
      'dict(a)(b)',
      '',
      '9x()',
    ),
  },
);

export const mergeHowString: fc.Arbitrary<string> = fc
  .array(component, { minLength: 0, maxLength: 4 })
  .map((parts) => parts.join('+'));

const settings: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.subarray(OPTIONS, { maxLength: 3 }) },
  { weight: 2, arbitrary: fc.constantFrom('no_replace', 'append', 'recurse_list,append', '') },
  {
    weight: 1,
    arbitrary: fc.subarray(OPTIONS, { maxLength: 2 }).map((o) => new Map(o.map((k) => [k, true]))),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, 3, true) },
);

const listItem: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(fc.constantFrom(...NAMES, ' list ', 'm-dict'), settings).map(
      ([name, s]) =>
        new Map<string, unknown>([
          ['name', name],
          ['settings', s],
        ]),
    ),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...NAMES), fc.subarray(OPTIONS, { maxLength: 3 }))
      .map(([n, o]) => [n, ...o]),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      new Map([['name', 'dict']]),
      new Map([['settings', []]]),
      new Map<string, unknown>([
        ['name', 5],
        ['settings', []],
      ]),
      new Map<string, unknown>([
        ['name', ''],
        ['settings', []],
      ]),
      'dict',
      '',
      [],
      [null],
      [5, 'append'],
      null,
      7,
    ),
  },
);

export const mergeHowList: fc.Arbitrary<unknown[]> = fc.array(listItem, { maxLength: 3 });

/** What a document's `merge_how` (or `merge_type`) can hold. */
export const mergeHowValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 7, arbitrary: mergeHowString },
  { weight: 3, arbitrary: mergeHowList },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 4, false, new Map(), new Map([['dict', 1]])) },
);

/** A document, optionally with `merge_how`/`merge_type` inserted at some position. */
export const documentWithMergeHow: fc.Arbitrary<Map<string, unknown>> = fc
  .tuple(
    map,
    fc.option(mergeHowValue, { nil: undefined }),
    fc.option(mergeHowValue, { nil: undefined }),
    fc.nat(5),
  )
  .map(([doc, how, type, at]) => {
    const entries = [...doc].filter(([k]) => k !== 'merge_how' && k !== 'merge_type');
    if (type !== undefined) entries.splice(Math.min(at, entries.length), 0, ['merge_type', type]);
    if (how !== undefined) entries.splice(Math.min(at + 1, entries.length), 0, ['merge_how', how]);
    return new Map(entries);
  });

/** A user-data part or values source: mostly mappings, sometimes empty or not a mapping. */
export const part: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: documentWithMergeHow },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, [], ['x'], 'text', 0, 1, true, new Map()) },
);

export const headers: fc.Arbitrary<Record<string, string> | null> = fc.option(
  fc.record(
    {
      'Merge-Type': fc.oneof(mergeHowString, fc.constant('')),
      'X-Merge-Type': mergeHowString,
      'merge-type': mergeHowString,
    },
    { requiredKeys: [] },
  ),
  { nil: null },
);

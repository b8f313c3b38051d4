/**
 * Value references found in expanded resources (docs/expansion.md, "Value references"): the walk
 * that writes a value's path out only for strings that may hold a reference finds exactly what a
 * walk writing every path finds, in the same order, with the same errors.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Resource } from '../../client/src/expand/types.js';
import {
  findReferencesIn,
  findValueReferences,
  parseValueReferences,
  type ValueReference,
} from '../../client/src/expand/value-references.js';

/** The general walk: every node's path written out, every string parsed. */
function walkAll(value: unknown, at: string, visit: (text: string, at: string) => void): void {
  if (typeof value === 'string') visit(value, at);
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) walkAll(v, `${at}[${i}]`, visit);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) walkAll(v, at ? `${at}.${k}` : k, visit);
  }
}

function referencesInAll(value: unknown, names: ReadonlySet<string>, from: string): ValueReference[] {
  const out: ValueReference[] = [];
  walkAll(value, '', (text, at) => {
    for (const r of parseValueReferences(text, names, from, at)) out.push(r);
  });
  return out;
}

function valueReferencesAll(resources: readonly Resource[]): ValueReference[] {
  const names = new Set(resources.map((r) => r.name));
  return resources.flatMap((resource) => {
    const { name: _n, type: _t, ...rest } = resource;
    return referencesInAll(rest, names, resource.name);
  });
}

const NAMES = ['db', 'web', 'a.b', 'a', 'x-1'];
const text = fc.oneof(
  fc.constantFrom(
    '$(ref.db.status.ip)',
    'pre $(ref.web) post $(ref.a.b.c)',
    '$(ref.a.b)',
    '$(ref.nope.x)',
    '$(ref.',
    '$(ref.db',
    '$(ref.x-1.spec.ports[0].port)',
    '$(ref)',
    'plain',
    '',
  ),
  fc.string({ maxLength: 8 }),
);
const key = fc.constantFrom('a', 'b', 'spec', '', '0', '10', 'x.y', '__proto__', 'name', 'type');
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
}));
const resources = fc
  .array(fc.record({ extra: fc.dictionary(key, value, { maxKeys: 4 }), properties: value }), {
    minLength: 1,
    maxLength: NAMES.length,
  })
  .map((list) =>
    list.map(
      (r, i): Resource => ({
        ...r.extra,
        name: NAMES[i] as string,
        type: i % 2 ? 'Pod $(ref.db.x)' : 'T',
        properties: r.properties as Record<string, unknown>,
      }),
    ),
  );

/** The references found, or the error's message. */
function outcome(f: () => ValueReference[]): ValueReference[] | string {
  try {
    return f();
  } catch (error) {
    return (error as Error).message;
  }
}

describe('value references', () => {
  it('findValueReferences() finds what a walk writing every path finds, in order', () => {
    fc.assert(
      fc.property(resources, (list) => {
        assert.deepEqual(
          outcome(() => findValueReferences(list)),
          outcome(() => valueReferencesAll(list)),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('findReferencesIn() finds what a walk writing every path finds, in order', () => {
    const names = new Set(NAMES);
    fc.assert(
      fc.property(value, (v) => {
        assert.deepEqual(
          outcome(() => findReferencesIn(v, names, 'holder')),
          outcome(() => referencesInAll(v, names, 'holder')),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('findValueReferences() names where a reference sits', () => {
    const list: Resource[] = [
      { name: 'db', type: 'T' },
      { name: 'web', type: 'T', properties: { env: [{ value: 'host $(ref.db.status.ip)' }] } },
    ];
    assert.deepEqual(findValueReferences(list), [
      {
        from: 'web',
        name: 'db',
        path: 'status.ip',
        at: 'properties.env[0].value',
        text: '$(ref.db.status.ip)',
      },
    ]);
  });
});

/**
 * Property tests for the layering invariants of issue 5: abstract documents are never output; a
 * child with no actions inherits nothing; the result does not depend on input order; and on
 * arbitrary input the engine only ever throws DmError with a Deckhand error kind, never changing
 * its input.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDmError } from '../error.js';
import { cloneData, deepEqual, isMapping, type Mapping } from './data.js';
import { LAYERING_ERROR_KINDS } from './errors.js';
import { type RenderedDocument, renderDocuments } from './render-documents.js';

const LAYERS = ['global', 'region', 'site'];
const SCHEMAS = ['ex/A/v1', 'ex/B/v1'];
const PATHS = ['.', '.a', '.b.c', '.l[0]', '.l', '.data.a', 'b'];

const policy = {
  schema: 'deckhand/LayeringPolicy/v1',
  metadata: { schema: 'metadata/Control/v1', name: 'policy' },
  data: { layerOrder: LAYERS },
};

const leaf = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom('x', 'y', 'HOST', ''),
  fc.boolean(),
  fc.constant(null),
);
const data = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('object'), fc.array(tie('value'), { maxLength: 2 })),
  object: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'l', '__proto__', 'constructor'), tie('value'), {
    maxKeys: 3,
  }),
})).object;

const labels = fc.dictionary(fc.constantFrom('k1', 'k2'), fc.constantFrom('v1', 'v2'), { maxKeys: 2 });

const docSpec = fc.record({
  schema: fc.constantFrom(...SCHEMAS),
  // One document in ten reuses another's name (replacements, duplicates).
  sameNameAs: fc.tuple(fc.nat(9), fc.nat(7)).map(([k, n]) => (k === 0 ? n : null)),
  layer: fc.constantFrom(...LAYERS),
  abstract: fc.constantFrom(false, false, false, true),
  replacement: fc.constantFrom(false, false, false, true),
  labels,
  // A selector names a higher layer and the child's schema (mostly), so that most sets render.
  selector: fc.option(
    fc.record({
      up: fc.constantFrom(1, 2),
      sameSchema: fc.constantFrom(true, true, true, true, false),
      extra: labels,
    }),
    { freq: 4 },
  ),
  actions: fc.array(
    fc.record({ method: fc.constantFrom('merge', 'replace', 'delete'), path: fc.constantFrom(...PATHS) }),
    { maxLength: 2 },
  ),
  // One document in three substitutes.
  substitutions: fc
    .tuple(
      fc.nat(2),
      fc.array(
        fc.record({
          src: fc.record({
            schema: fc.constantFrom(...SCHEMAS),
            name: fc.nat(7),
            path: fc.constantFrom('.', '.a', '.b'),
          }),
          sameSchema: fc.boolean(),
          dest: fc.record(
            { path: fc.constantFrom('.', '.a', '.x.y', '.l[1]'), pattern: fc.constantFrom('HOST', 'x') },
            { requiredKeys: ['path'] },
          ),
        }),
        { maxLength: 2 },
      ),
    )
    .map(([k, subs]) => (k === 0 ? subs : [])),
  data,
});

type Spec = typeof docSpec extends fc.Arbitrary<infer T> ? T : never;

function build(specs: Spec[]): Mapping[] {
  return specs.map((s, i) => {
    const name = s.sameNameAs !== null && s.sameNameAs < specs.length ? `d${s.sameNameAs}` : `d${i}`;
    const layeringDefinition: Mapping = { layer: s.layer, abstract: s.abstract };
    const at = LAYERS.indexOf(s.layer);
    if (s.selector && at - s.selector.up >= 0) {
      layeringDefinition.parentSelector = {
        ...s.selector.extra,
        layer: LAYERS[at - s.selector.up],
        schema: s.selector.sameSchema ? s.schema : (SCHEMAS.find((x) => x !== s.schema) ?? s.schema),
      };
    }
    if (s.actions.length > 0) layeringDefinition.actions = s.actions;
    const metadata: Mapping = {
      schema: 'metadata/Document/v1',
      name,
      labels: { ...s.labels, layer: s.layer, schema: s.schema },
      layeringDefinition,
    };
    if (s.replacement && s.sameNameAs !== null && layeringDefinition.parentSelector)
      metadata.replacement = true;
    if (s.substitutions.length > 0) {
      metadata.substitutions = s.substitutions.map((sub) => ({
        src: {
          ...sub.src,
          name: `d${sub.src.name % specs.length}`,
          schema: sub.sameSchema ? (specs[sub.src.name % specs.length] as Spec).schema : sub.src.schema,
        },
        dest: sub.dest,
      }));
    }
    return { schema: s.schema, metadata, data: s.data };
  });
}

const documentSets = fc
  .array(docSpec, { minLength: 1, maxLength: 7 })
  .map((specs) => [policy, ...build(specs)]);

type Outcome = { ok: true; docs: RenderedDocument[] } | { ok: false; code: string; message: string };

function outcome(documents: readonly unknown[], options = {}): Outcome {
  try {
    return { ok: true, docs: renderDocuments(documents, options) };
  } catch (error) {
    assert.ok(isDmError(error), `renderDocuments threw a non-DmError: ${String(error)}`);
    return { ok: false, code: error.code, message: error.message };
  }
}

function permute<T>(items: readonly T[], keys: readonly number[]): T[] {
  return items
    .map((item, i) => ({ item, k: keys[i % Math.max(1, keys.length)] ?? 0, i }))
    .sort((a, b) => a.k - b.k || b.i - a.i)
    .map((x) => x.item);
}

const meta = (d: Mapping): Mapping => (isMapping(d.metadata) ? d.metadata : {});
const ldOf = (d: Mapping): Mapping => {
  const ld = meta(d).layeringDefinition;
  return isMapping(ld) ? ld : {};
};

describe('renderDocuments() properties', () => {
  it('renderDocuments() never outputs an abstract document', () => {
    fc.assert(
      fc.property(documentSets, (documents) => {
        const result = outcome(documents);
        if (!result.ok) return;
        for (const d of result.docs) assert.notEqual(ldOf(d).abstract, true, JSON.stringify(meta(d)));
      }),
      { numRuns: 300 },
    );
  });

  it('renderDocuments() gives a child with a parent but no actions only its own data', () => {
    fc.assert(
      fc.property(documentSets, (documents) => {
        const result = outcome(documents);
        if (!result.ok) return;
        for (const out of result.docs) {
          const input = documents.find(
            (d) =>
              d.schema === out.schema &&
              meta(d).name === meta(out as Mapping).name &&
              ldOf(d).layer === ldOf(out as Mapping).layer,
          );
          assert.ok(input);
          const ld = ldOf(input);
          if ((Array.isArray(ld.actions) && ld.actions.length > 0) || meta(input).substitutions) continue;
          assert.ok(
            deepEqual(out.data, input.data ?? null),
            `${JSON.stringify(out.data)} != ${JSON.stringify(input.data)}`,
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  it('renderDocuments() gives the same documents or the same error for every input order', () => {
    fc.assert(
      fc.property(
        documentSets,
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        (documents, keys, lenient) => {
          const options = { lenientSubstitution: lenient };
          const a = outcome(documents, options);
          const b = outcome(permute(documents, keys), options);
          const c = outcome([...documents].reverse(), options);
          for (const other of [b, c]) {
            if (a.ok && other.ok) assert.ok(deepEqual(a.docs, other.docs), 'rendered documents differ');
            else assert.deepEqual(other, a);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('renderDocuments() throws only DmError with a Deckhand kind, and leaves its input unchanged', () => {
    const junkDoc = fc.record(
      {
        schema: fc.oneof(fc.constantFrom(...SCHEMAS, 'deckhand/LayeringPolicy/v1'), fc.anything()),
        metadata: fc.oneof(
          fc.record(
            {
              schema: fc.constantFrom('metadata/Document/v1', 'metadata/Control/v1'),
              name: fc.oneof(fc.constantFrom('d0', 'd1'), fc.anything()),
              labels: fc.oneof(labels, fc.anything()),
              replacement: fc.oneof(fc.boolean(), fc.anything()),
              layeringDefinition: fc.oneof(
                fc.record(
                  {
                    layer: fc.oneof(fc.constantFrom(...LAYERS, 'nowhere'), fc.anything()),
                    abstract: fc.anything(),
                    parentSelector: fc.oneof(labels, fc.anything()),
                    actions: fc.oneof(
                      fc.array(
                        fc.record({
                          method: fc.anything(),
                          path: fc.oneof(fc.constantFrom(...PATHS), fc.string()),
                        }),
                      ),
                      fc.anything(),
                    ),
                  },
                  { requiredKeys: [] },
                ),
                fc.anything(),
              ),
              substitutions: fc.oneof(
                fc.array(
                  fc.record({
                    src: fc.oneof(
                      fc.record(
                        {
                          schema: fc.constantFrom(...SCHEMAS),
                          name: fc.constantFrom('d0', 'd1'),
                          path: fc.string(),
                          pattern: fc.string(),
                        },
                        { requiredKeys: [] },
                      ),
                      fc.anything(),
                    ),
                    dest: fc.oneof(
                      fc.record(
                        { path: fc.string(), pattern: fc.string(), recurse: fc.anything() },
                        { requiredKeys: [] },
                      ),
                      fc.anything(),
                    ),
                  }),
                ),
                fc.anything(),
              ),
            },
            { requiredKeys: [] },
          ),
          fc.anything(),
        ),
        data: fc.oneof(data, fc.anything({ withNullPrototype: true, withObjectString: true })),
      },
      { requiredKeys: [] },
    );
    const input = fc.oneof(
      fc.anything(),
      fc.array(fc.oneof(junkDoc, fc.anything()), { maxLength: 6 }).map((docs) => [policy, ...docs]),
    );
    fc.assert(
      fc.property(input, fc.boolean(), fc.boolean(), (documents, validate, lenient) => {
        const before = cloneData(documents);
        try {
          renderDocuments(documents as unknown[], { validate, lenientSubstitution: lenient });
        } catch (error) {
          assert.ok(isDmError(error), `threw ${String(error)}`);
          assert.ok(
            (LAYERING_ERROR_KINDS as readonly string[]).includes(error.code),
            `unexpected code ${error.code}: ${error.message}`,
          );
        }
        assert.ok(deepEqual(documents, before), 'renderDocuments changed its input');
      }),
      { numRuns: 1000 },
    );
  });
});

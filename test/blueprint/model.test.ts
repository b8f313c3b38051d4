/**
 * Typed installation inputs (client/src/blueprint/model.ts): parseInstallation's structural rules,
 * the phase of each problem, and that reading never changes the input.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BlueprintError } from '../../client/src/blueprint/index.js';
import { parseInstallation } from '../../client/src/blueprint/model.js';

type Obj = Record<string, unknown>;

function phaseOf(raw: Obj, template = false): string | undefined {
  try {
    parseInstallation(raw, 'inst', 'inst', template);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof BlueprintError, String(error));
    return error.phase;
  }
}

describe('parseInstallation()', () => {
  it('parseInstallation() reads imports, mappings and exports into their typed form', () => {
    const imports = {
      data: [
        { name: 'a', dataRef: 'do-a' },
        { name: 's', secretRef: { name: 'sec', key: 'k' } },
      ],
      targets: [
        { name: 't', target: 'my-target' },
        { name: 'l', targets: ['x', 'y'] },
        { name: 'm', targetMap: { red: 'r' } },
        { name: 'mr', targetMapRef: 'parent-map' },
      ],
    };
    const exports = { data: [{ name: 'o', dataRef: 'do-o' }], targets: [{ name: 'c', target: '#global' }] };
    const raw = {
      blueprint: { ref: { resourceName: 'bp' } },
      imports,
      importDataMappings: { b: '{{ a }}' },
      exports,
      unknownKey: 1,
    };
    assert.deepEqual(parseInstallation(raw, 'inst', 'inst', false), {
      name: 'inst',
      blueprint: raw.blueprint,
      componentDescriptor: undefined,
      imports,
      importDataMappings: raw.importDataMappings,
      exports,
      exportDataMappings: {},
    });
    // the typed form is a new object: nothing in it is shared with the input
    const spec = parseInstallation(raw, 'inst', 'inst', false);
    assert.notEqual(spec.imports.data[0], imports.data[0]);
  });

  it('parseInstallation() puts import problems in phase imports and export problems in phase exports', () => {
    const dup = { imports: { data: [{ name: 'a', dataRef: 'x' }], targets: [{ name: 'a', target: 't' }] } };
    assert.equal(phaseOf(dup), 'imports');
    assert.equal(
      phaseOf({ imports: { data: [{ name: 'a', dataRef: 'x', configMapRef: { name: 'c' } }] } }),
      'imports',
    );
    assert.equal(phaseOf({ imports: { targets: [{ name: 't' }] } }), 'imports');
    assert.equal(phaseOf({ imports: { targets: [{ name: 't', targetMap: { Red: 'r' } }] } }), 'imports');
    assert.equal(phaseOf({ imports: { data: [{ name: 'a', dataRef: { no: 'string' } }] } }), 'imports');
    assert.equal(phaseOf({ exports: { data: [{ name: 'o' }] } }), 'exports');
    assert.equal(phaseOf({ exports: { targets: [{ target: 'x' }] } }), 'exports');
  });

  it('parseInstallation() refuses secretRef and configMapRef in installation templates, in phase subinstallations', () => {
    const raw = { imports: { data: [{ name: 's', secretRef: { name: 'sec' } }] } };
    assert.equal(phaseOf(raw, false), undefined);
    assert.equal(phaseOf(raw, true), 'subinstallations');
    assert.equal(phaseOf({ imports: { data: [{ name: 'a' }] } }, true), 'subinstallations');
  });

  it('parseInstallation() never changes its input and fails only with BlueprintErrors, for random specs', () => {
    const name = fc.constantFrom('a', 'b', 'c', '', 'A b');
    const ref = fc.oneof(name, fc.integer(), fc.constant(null), fc.dictionary(name, name));
    const dataImport = fc.record(
      {
        name,
        dataRef: ref,
        secretRef: fc.record({ name: ref, key: ref }, { requiredKeys: [] }),
        configMapRef: ref,
      },
      { requiredKeys: [] },
    );
    const targetImport = fc.record(
      {
        name,
        target: ref,
        targets: fc.oneof(fc.array(ref), ref),
        targetMap: fc.oneof(fc.dictionary(name, ref), ref),
        targetMapRef: ref,
        targetListRef: ref,
      },
      { requiredKeys: [] },
    );
    const spec = fc.record(
      {
        imports: fc.record(
          { data: fc.array(dataImport), targets: fc.array(targetImport) },
          { requiredKeys: [] },
        ),
        exports: fc.record(
          {
            data: fc.array(fc.record({ name, dataRef: ref }, { requiredKeys: [] })),
            targets: fc.array(fc.record({ name, target: ref }, { requiredKeys: [] })),
          },
          { requiredKeys: [] },
        ),
        importDataMappings: fc.oneof(fc.dictionary(name, fc.jsonValue()), fc.jsonValue()),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(spec, fc.boolean(), (raw, template) => {
        const before = JSON.stringify(raw);
        phaseOf(raw, template);
        assert.equal(JSON.stringify(raw), before);
      }),
      { numRuns: 300 },
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDmError } from '../error.js';
import { referencePath } from '../expand/value-references.js';
import type { Primitive } from './model.js';
import { findReferences, planLevels, substituteReferences, valueAt } from './plan.js';

const levels = (rs: Primitive[]) =>
  Object.fromEntries(planLevels(rs).map((p) => [p.primitive.name, p.level]));

describe('planLevels()', () => {
  it('puts Namespaces and CRDs in level 0 and orders the rest by $(ref)', () => {
    assert.deepEqual(
      levels([
        { name: 'cm', type: 'ConfigMap', properties: { data: { ip: '$(ref.svc.spec.clusterIP)' } } },
        { name: 'svc', type: 'Service' },
        { name: 'ns', type: 'Namespace' },
        { name: 'crd', type: 'apiextensions.k8s.io/v1/CustomResourceDefinition' },
        { name: 'dep', type: 'Deployment', properties: { spec: { x: 'a-$(ref.cm.data.ip)-b' } } },
      ]),
      { cm: 2, svc: 1, ns: 0, crd: 0, dep: 3 },
    );
  });

  it('names the chain of a reference cycle', () => {
    assert.throws(
      () =>
        planLevels([
          { name: 'a', type: 'ConfigMap', properties: { data: { x: '$(ref.b.data.x)' } } },
          { name: 'b', type: 'ConfigMap', properties: { data: { x: '$(ref.a.data.x)' } } },
        ]),
      (e: unknown) => isDmError(e) && e.code === 'REFERENCE_CYCLE' && /a -> b -> a/.test(e.message),
    );
  });

  it('rejects a reference to a name not in the configuration', () => {
    assert.throws(
      () => planLevels([{ name: 'a', type: 'ConfigMap', properties: { data: { x: '$(ref.nope.data)' } } }]),
      (e: unknown) => isDmError(e) && e.code === 'UNKNOWN_REFERENCE' && /'nope'/.test(e.message),
    );
  });

  it('every resource comes after everything it references (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.nat(), { maxLength: 3 }), { minLength: 1, maxLength: 12 }), (deps) => {
        // Resource i may reference only resources j < i: acyclic by construction.
        const rs: Primitive[] = deps.map((ds, i) => ({
          name: `r${i}`,
          type: 'ConfigMap',
          properties: {
            data: Object.fromEntries(ds.filter((d) => d < i).map((d) => [`k${d}`, `$(ref.r${d}.data.x)`])),
          },
        }));
        const planned = planLevels(rs);
        const level = new Map(planned.map((p) => [p.primitive.name, p.level]));
        for (const p of planned) {
          for (const ref of p.references) assert.ok(level.get(ref.name)! < p.level);
        }
      }),
    );
  });
});

describe('substituteReferences()', () => {
  const names = new Set(['svc', 'svc.v2']);
  it('keeps the type of a whole-string reference and interpolates inside strings', () => {
    const lookup = (r: { path: string }) =>
      referencePath(r).join('.') === 'spec.ports.0.port' ? 5432 : '10.0.0.1';
    assert.deepEqual(
      substituteReferences(
        { port: '$(ref.svc.spec.ports[0].port)', url: 'pg://$(ref.svc.spec.clusterIP):5432' },
        lookup,
        names,
        'x',
      ),
      { port: 5432, url: 'pg://10.0.0.1:5432' },
    );
  });

  it('takes the longest resource name when names contain dots', () => {
    const [ref] = findReferences('$(ref.svc.v2.spec.clusterIP)', names, 'x');
    assert.equal(ref!.name, 'svc.v2');
    assert.deepEqual(referencePath(ref!), ['spec', 'clusterIP']);
  });

  it('$(ref.NAME) with no path is the whole live object, as expansion accepts it', () => {
    const [ref] = findReferences('$(ref.svc)', names, 'x');
    assert.deepEqual([ref!.name, ref!.path, referencePath(ref!)], ['svc', '', []]);
    const live = { spec: { clusterIP: '10.0.0.1' } };
    assert.deepEqual(valueAt(live, ref!), live);
    assert.equal(valueAt(live, { path: 'spec.clusterIP' }), '10.0.0.1');
  });
});

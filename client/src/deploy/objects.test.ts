import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDmError } from '../error.js';
import { kubectlName, parsePrimitiveType, toObjects } from './objects.js';

const options = { served: undefined, defaultNamespace: 'dflt', labels: { l: 'v' }, annotations: { a: 'b' } };

describe('toObjects()', () => {
  it('maps a bare kind through the core table, defaulting name and namespace', () => {
    const [o] = toObjects(
      [{ name: 'web', type: 'Service', properties: { spec: { ports: [{ port: 80 }] } } }],
      options,
    );
    assert.deepEqual(o!.body, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'dflt', labels: { l: 'v' }, annotations: { a: 'b' } },
      spec: { ports: [{ port: 80 }] },
    });
    assert.equal(kubectlName(o!), 'service/web');
  });

  it('pins the API version from the type, and leaves cluster-scoped objects without a namespace', () => {
    const [d, ns] = toObjects(
      [
        { name: 'd', type: 'apps/v1/Deployment', properties: { metadata: { name: 'real', namespace: 'x' } } },
        { name: 'ns', type: 'v1/Namespace', properties: { metadata: { namespace: 'ignored' } } },
      ],
      options,
    );
    assert.equal(d!.apiVersion, 'apps/v1');
    assert.equal(d!.objectName, 'real');
    assert.equal(d!.namespace, 'x');
    assert.equal(ns!.namespace, '');
    assert.equal((ns!.body.metadata as { namespace?: string }).namespace, undefined);
  });

  it('knows kinds that a CRD in the same configuration defines', () => {
    const objects = toObjects(
      [
        {
          name: 'crd',
          type: 'CustomResourceDefinition',
          properties: {
            spec: { group: 'ex.com', scope: 'Cluster', names: { kind: 'Thing' }, versions: [{ name: 'v1' }] },
          },
        },
        { name: 't', type: 'Thing' },
      ],
      options,
    );
    assert.equal(objects[1]!.apiVersion, 'ex.com/v1');
    assert.equal(objects[1]!.namespace, '');
  });

  it('rejects unknown kinds, malformed types and two resources naming one object', () => {
    assert.throws(
      () => toObjects([{ name: 'g', type: 'Gadget' }], options),
      (e: unknown) => isDmError(e) && e.code === 'UNKNOWN_KIND',
    );
    assert.throws(() => parsePrimitiveType('apps/v1/deployment', 'x'), /is not a Kubernetes kind/);
    assert.throws(
      () =>
        toObjects(
          [
            { name: 'a', type: 'ConfigMap', properties: { metadata: { name: 'same' } } },
            { name: 'b', type: 'ConfigMap', properties: { metadata: { name: 'same' } } },
          ],
          options,
        ),
      (e: unknown) => isDmError(e) && e.code === 'DUPLICATE_OBJECT',
    );
  });
});

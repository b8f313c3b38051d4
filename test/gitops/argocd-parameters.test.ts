/** Argo CD's plugin parameters as dm reads them (docs/gitops.md "Parameters"): property-based. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parsePropertyValue } from '../../client/src/config/properties.js';
import { DmError } from '../../client/src/error.js';
import {
  paramVariableName,
  pluginProperties,
  propertiesFromParameters,
} from '../../client/src/gitops/argocd.js';

const name = fc.stringMatching(/^[a-z][A-Za-z0-9]{0,11}$/);
const value = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer().map(String),
  fc.constantFrom('true', "'3'", ''),
);

describe('Argo CD plugin parameters', () => {
  it('string parameters: ARGOCD_APP_PARAMETERS and PARAM_* give the same properties', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(name, value), { selector: ([n]) => paramVariableName(n), maxLength: 6 }),
        (params) => {
          const json = JSON.stringify(params.map(([n, v]) => ({ name: n, string: v })));
          const fromJson = propertiesFromParameters(json);
          const env = Object.fromEntries(params.map(([n, v]) => [paramVariableName(n), v]));
          const fromVars = pluginProperties(
            env,
            params.map(([n]) => n),
          );
          assert.deepEqual(fromVars, fromJson);
          for (const [n, v] of params) assert.deepEqual(fromJson[n], parsePropertyValue(v, n));
        },
      ),
    );
  });

  it('a map named properties spreads; other maps and arrays are properties of their name', () => {
    assert.deepEqual(
      propertiesFromParameters(
        JSON.stringify([
          { name: 'properties', map: { replicas: '3', debug: 'true' } },
          { name: 'resources', map: { cpu: '500m' } },
          { name: 'zones', array: ['a', '2'] },
        ]),
      ),
      { replicas: 3, debug: true, resources: { cpu: '500m' }, zones: ['a', 2] },
    );
  });

  it('anything else is INVALID_PLUGIN_PARAMETERS, never a crash', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        try {
          propertiesFromParameters(text);
        } catch (error) {
          assert.ok(error instanceof DmError, String(error));
          assert.equal(error.code, 'INVALID_PLUGIN_PARAMETERS');
        }
      }),
    );
    assert.throws(() => propertiesFromParameters('[{"name":"__proto__","string":"x"}]'), /reserved/);
  });
});

/**
 * The manager's request parsers (docs/manager.md): import names accepted are relative paths that
 * stay inside the configuration's directory, whatever they are; scopes are checked.
 */
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDmError } from '../../client/src/error.js';
import { parseConfiguration, parseDeploymentRequest } from '../../server/src/manager/deployment-manager.js';
import { parseScope } from '../../server/src/manager/manager-access.js';

describe('parseConfiguration()', () => {
  it('accepts only import names that stay inside the directory (property)', () => {
    const segment = fc.oneof(
      fc.constantFrom('..', '.', '', '/', '\\', 'a', 'b.jinja', '..a', '%2e%2e', '~'),
      fc.string({ maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), (parts) => {
        const name = parts.join('/');
        let accepted = true;
        try {
          parseConfiguration({ content: '', imports: [{ name, content: '' }] });
        } catch (error) {
          assert.ok(isDmError(error) && error.category === 'invalid-input');
          accepted = false;
        }
        if (accepted) {
          const base = resolve('/tmp/dir');
          const path = resolve(join(base, name));
          assert.ok(path.startsWith(`${base}/`) && path !== join(base, 'config.yaml'), name);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a body that is not DM shaped, naming what is wrong', () => {
    assert.throws(() => parseConfiguration('x'), /configuration must be an object/);
    assert.throws(() => parseConfiguration({ content: 'a', imports: [{ name: 'a' }] }), /imports\[0\]/);
    assert.throws(
      () =>
        parseConfiguration({
          content: 'a',
          imports: [
            { name: 'a', content: '' },
            { name: 'a', content: '' },
          ],
        }),
      /given twice/,
    );
    assert.throws(
      () => parseDeploymentRequest({ cluster: 'c', configuration: { content: '' } }),
      /name is required/,
    );
    assert.throws(
      () => parseDeploymentRequest({ name: 'a', configuration: { content: '' } }),
      /cluster is required/,
    );
    assert.throws(
      () =>
        parseDeploymentRequest({
          name: 'a',
          cluster: 'c',
          configuration: { content: '' },
          timeoutSeconds: 0,
        }),
      /timeoutSeconds/,
    );
    assert.equal(parseDeploymentRequest({ configuration: { content: '' } }, 'web').name, 'web');
  });
});

describe('parseScope()', () => {
  it('takes cluster/namespace, cluster/*, cluster and *', () => {
    assert.equal(parseScope('prod/web'), 'prod/web');
    assert.equal(parseScope('prod'), 'prod/*');
    assert.equal(parseScope('*'), '*');
    for (const bad of ['', 'Prod/web', 'prod/', '/web', 'prod/web/x', '*/web']) {
      assert.throws(() => parseScope(bad), /not a deployment scope/, bad);
    }
  });
});

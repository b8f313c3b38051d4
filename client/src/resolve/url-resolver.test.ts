import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import { fileUrl, isSafeImportPath } from './url-resolver.js';

const TEMPLATE = 'https://example.test/samples/igm/python/lb-l3.py';
const DIR = 'https://example.test/samples/igm/python/';

// Path segments a URL might read as `..` or `.` or as something else than a file name.
const segment = fc.oneof(
  fc.constantFrom('..', '.', '', '%2e%2e', '.%2E', '%2e', '..\\..', 'a\\b', 'x?y', 'x#y', 'c:', 'http:', '~'),
  fc.stringMatching(/^[a-zA-Z0-9_.-]{1,8}$/),
);
const path = fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => s.join('/'));

describe('import paths of a URL resolved against it (docs/expansion.md "Imports by URL")', () => {
  it('an accepted path names exactly the file of that name inside the template directory', () => {
    fc.assert(
      fc.property(fc.oneof(path, fc.string({ maxLength: 24 })), (p) => {
        if (!isSafeImportPath(p, TEMPLATE)) {
          assert.throws(
            () => fileUrl(TEMPLATE, p),
            (e) => e instanceof DmError && e.code === 'UNSAFE_IMPORT_PATH',
          );
          return;
        }
        const url = fileUrl(TEMPLATE, p);
        assert.ok(url.startsWith(DIR), `${p} → ${url}`);
        // No normalisation: the lock's file name and the URL fetched are the same file.
        assert.equal(decodeURIComponent(url.slice(DIR.length)), p);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses the spellings of .. that a URL resolves upwards', () => {
    for (const p of [
      '../x.py',
      '%2e%2e/x.py',
      '.%2E/x.py',
      '..\\x.py',
      'a/../../x.py',
      '/x.py',
      'https://elsewhere/x.py',
    ]) {
      assert.equal(isSafeImportPath(p, TEMPLATE), false, p);
    }
    assert.equal(fileUrl(TEMPLATE, 'helpers/common.py'), `${DIR}helpers/common.py`);
  });
});

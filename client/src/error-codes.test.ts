import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  DmError,
  exitCodeFor,
  exitCodeOfCategory,
  httpStatusFor,
  httpStatusOfCategory,
  relayedError,
} from './error.js';
import { categoriesOf, ERROR_CODES, type ErrorCode, isErrorCode } from './error-codes.js';

const docs = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

/** The rows of the generated table in docs/errors.md: code → [category, exit code, HTTP status, meaning]. */
function documentedCodes(): Map<string, [string, string, string, string]> {
  const out = new Map<string, [string, string, string, string]>();
  const section = docs.slice(docs.indexOf('<!-- codes:start -->'), docs.indexOf('<!-- codes:end -->'));
  for (const line of section.split('\n')) {
    const m = /^\| `([A-Za-z_]+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \| (.*) \|$/.exec(line);
    if (m) {
      assert.ok(!out.has(m[1]!), `docs/errors.md lists ${m[1]} twice`);
      out.set(m[1]!, [m[2]!.trim(), m[3]!.trim(), m[4]!.trim(), m[5]!.replaceAll('\\|', '|')]);
    }
  }
  return out;
}

describe('error codes', () => {
  it('docs/errors.md lists exactly the codes of client/src/error-codes.ts', () => {
    const documented = [...documentedCodes().keys()].sort();
    const declared = Object.keys(ERROR_CODES).sort();
    const missing = declared.filter((c) => !documented.includes(c));
    const extra = documented.filter((c) => !declared.includes(c));
    assert.deepEqual(
      { missing, extra },
      { missing: [], extra: [] },
      'run `npm run build && node scripts/errors-doc.mjs` to update docs/errors.md',
    );
  });

  it("docs/errors.md gives each code its category's exit code and HTTP status", () => {
    for (const [code, [category, exit, status]] of documentedCodes()) {
      const first = categoriesOf(code as ErrorCode)[0]!;
      assert.ok(category.startsWith(first), `${code}: documented category ${category}, declared ${first}`);
      assert.ok(exit.startsWith(String(exitCodeOfCategory(first))), `${code}: exit code ${exit}`);
      assert.ok(status.startsWith(String(httpStatusOfCategory(first))), `${code}: HTTP status ${status}`);
    }
  });

  it('docs/errors.md gives each code the meaning client/src/error-codes.ts gives it (one wording)', () => {
    const differing = [...documentedCodes()]
      .filter(([code, row]) => isErrorCode(code) && row[3] !== ERROR_CODES[code].meaning)
      .map(
        ([code, row]) =>
          `${code}: documented '${row[3]}', declared '${ERROR_CODES[code as ErrorCode].meaning}'`,
      );
    assert.deepEqual(
      differing,
      [],
      'run `npm run build && node scripts/errors-doc.mjs` to update docs/errors.md',
    );
  });

  it('a DmError takes its category from its code unless the code lists another one', () => {
    assert.equal(new DmError('VERSION_NOT_FOUND', 'x').category, 'not-found');
    assert.equal(exitCodeFor(new DmError('VERSION_NOT_FOUND', 'x')), 3);
    assert.equal(httpStatusFor(new DmError('UPSTREAM_UNAVAILABLE', 'x')), 502);
    assert.equal(new DmError('INVALID_REGISTRY', 'x').category, 'usage');
    assert.equal(
      new DmError('INVALID_REGISTRY', 'x', { category: 'invalid-input' }).category,
      'invalid-input',
    );
  });

  it('every code has a meaning that is one sentence', () => {
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      assert.match(entry.meaning, /^\S[^\n]*[.)]$/, `${code}: ${entry.meaning}`);
    }
  });

  it('relays a server error: a known code keeps its category, an unknown one is REMOTE_ERROR by status', () => {
    const known = relayedError(400, { code: 'VERSION_NOT_FOUND', message: 'no v9' }, (m) => `resolve: ${m}`);
    assert.deepEqual(
      [known.code, known.category, known.message],
      ['VERSION_NOT_FOUND', 'not-found', 'resolve: no v9'],
    );
    const unknown = relayedError(409, { code: 'SOMETHING_NEW', message: 'later' }, (m) => m);
    assert.deepEqual([unknown.code, unknown.category], ['REMOTE_ERROR', 'conflict']);
    assert.deepEqual(unknown.details, { status: 409, code: 'SOMETHING_NEW' });
    const none = relayedError(503, undefined, (m) => m);
    assert.deepEqual([none.code, none.category, none.message], ['REMOTE_ERROR', 'unreachable', 'HTTP 503']);
    assert.equal(isErrorCode('toString'), false);
    assert.equal(isErrorCode('INTERNAL'), true);
  });
});

/** `dm lint` end to end: the real binary over the sample registries (docs/registry-layout.md). */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ALL_FINDING_CODES, FINDING_CODES } from '../../client/src/registry/finding-codes.js';

/** broken/ holds one finding of every code, so its counts follow from the codes' severities. */
const ERRORS = ALL_FINDING_CODES.filter((c) => FINDING_CODES[c].severity === 'error').length;
const WARNINGS = ALL_FINDING_CODES.length - ERRORS;

import { runDm } from '../support/run-cli.js';

describe('dm lint', () => {
  it('passes registry-fixtures with exit 0 and says broken/ is a separate registry', async () => {
    const r = await runDm(['lint', 'registry-fixtures']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /registry-fixtures: 0 errors, 0 warnings/);
    assert.match(r.stdout, /'broken' holds its own registry\.yaml/);
  });

  it('prints {findings, summary} with -o json', async () => {
    const r = await runDm(['lint', 'registry-fixtures', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(report.findings, []);
    assert.equal(report.summary.errors, 0);
    assert.equal(report.summary.warnings, 0);
    assert.ok(report.summary.templates >= 10);
    assert.deepEqual(report.nestedRegistries, ['broken']);
  });

  it('reports every finding of broken/ once in a table and exits 4', async () => {
    const r = await runDm(['lint', 'registry-fixtures/broken']);
    assert.equal(r.code, 4);
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0]!, /^SEVERITY\s+CODE\s+PATH\s+MESSAGE$/);
    const codes = lines.slice(1, -1).map((l) => l.split(/\s+/)[1]);
    assert.deepEqual(codes.sort(), [...ALL_FINDING_CODES].sort());
    assert.match(
      lines.at(-1)!,
      new RegExp(`registry-fixtures/broken: ${ERRORS} errors, ${WARNINGS} warnings`),
    );
    assert.match(
      r.stderr,
      new RegExp(`error: registry 'registry-fixtures/broken' has ${ERRORS} lint errors`),
    );
  });

  it('with -o json and errors, prints one error object carrying the findings', async () => {
    const r = await runDm(['lint', 'registry-fixtures/broken', '-o', 'json']);
    assert.equal(r.code, 4);
    const out = JSON.parse(r.stdout);
    assert.equal(out.error.code, 'LINT_FAILED');
    assert.equal(out.error.details.summary.errors, ERRORS);
    assert.equal(out.error.details.findings.length, ALL_FINDING_CODES.length);
    for (const f of out.error.details.findings) {
      assert.deepEqual(Object.keys(f).slice(0, 4), ['code', 'severity', 'path', 'message']);
    }
  });

  it('says a missing directory is not found (exit 3)', async () => {
    const r = await runDm(['lint', 'no/such/registry']);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /registry directory 'no\/such\/registry' does not exist/);
  });

  it('prints names with control or bidirectional-override characters escaped, never raw (issue 25 item 12)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dm-lint-names-'));
    const version = join(root, 'col', 'redis', 'v1.0.0');
    mkdirSync(version, { recursive: true });
    writeFileSync(join(version, 'redis.jinja'), 'resources: []\n');
    writeFileSync(join(version, 'evil\u001b[31mred.txt'), 'x');
    const turned = join(root, 'col', 're\u202edis', 'v1.0.0');
    mkdirSync(turned, { recursive: true });
    writeFileSync(join(turned, 'x.jinja'), 'resources: []\n');
    // The table a person reads: every such character written as an escape.
    const r = await runDm(['lint', root]);
    assert.equal(r.code, 4, r.stderr);
    for (const ch of ['\u001b', '\u202e'])
      assert.ok(
        !(r.stdout + r.stderr).includes(ch),
        `a raw U+${ch.codePointAt(0)?.toString(16)} was printed`,
      );
    assert.match(r.stdout, /UNSAFE_PATH +col\/redis\/v1\.0\.0\/evil\\u\{1b\}\[31mred\.txt/);
    assert.match(r.stdout, /INVALID_NAME +col\/re\\u\{202e\}dis/);
    // JSON is data: the same findings, the names as they are.
    const json = await runDm(['lint', root, '-o', 'json']);
    assert.equal(json.code, 4, json.stderr);
    const paths = (
      JSON.parse(json.stdout) as { error: { details: { findings: { path: string }[] } } }
    ).error.details.findings.map((f) => f.path);
    assert.ok(paths.includes('col/redis/v1.0.0/evil\u001b[31mred.txt'), paths.join(' '));
    assert.ok(paths.includes('col/re\u202edis'), paths.join(' '));
  });

  it('is a usage error without a directory (exit 2)', async () => {
    const r = await runDm(['lint']);
    assert.equal(r.code, 2);
  });
});

/** `dm merge` end to end (docs/merging.md): the real CLI on files in a temporary directory. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';

const root = resolve(new URL('../../..', import.meta.url).pathname);
const dir = mkdtempSync(join(tmpdir(), 'dm-merge-cli-'));
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return name;
};
const dm = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'bin/dm.js'), 'merge', ...args], { cwd: dir, encoding: 'utf8' });

const base = file('base.yaml', '#cloud-config\nb: 1\n"2": two\na: {x: 1}\nruncmd: [one]\n');
const site = file(
  'site.yaml',
  'a: {y: 2}\nruncmd: [two]\nz: 3\n---\n[not, a, mapping]\n---\nruncmd: [three]\nmerge_how: dict(recurse_list)+list(append)\n',
);

describe('dm merge', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the merged document as YAML in Python key order, warning about skipped documents', () => {
    const out = dm(base, site);
    assert.equal(out.status, 0, out.stderr);
    assert.equal(out.stdout, "b: 1\n'2': two\na:\n  'y': 2\nruncmd:\n  - two\n  - three\nz: 3\n");
    assert.match(out.stderr, /warning: skipped site\.yaml \(document 2\): .*\(ValueError\)/);
  });

  it('prints {result, skipped: [{index, file, code, message}]} with -o json', () => {
    const out = dm(base, site, '-o', 'json');
    assert.equal(out.status, 0, out.stderr);
    const json = JSON.parse(out.stdout);
    assert.deepEqual(json.result, { b: 1, 2: 'two', a: { y: 2 }, runcmd: ['two', 'three'], z: 3 });
    assert.deepEqual(Object.keys(json.skipped[0]), ['index', 'file', 'code', 'message']);
    assert.deepEqual(
      [json.skipped[0].index, json.skipped[0].file, json.skipped[0].code],
      [2, 'site.yaml', 'ValueError'],
    );
  });

  it('merges like values files with --as values (later files win, deep merge) and takes --merge-how', () => {
    const out = dm('--as', 'values', base, site, '-o', 'json');
    assert.equal(out.status, 1, 'a list document is an error for values files');
    assert.equal(JSON.parse(out.stdout).error.code, 'TypeError');
    const v1 = file('v1.yaml', 'a: {x: 1}\nl: [1]\n');
    const v2 = file('v2.yaml', 'a: {y: 2}\nl: [2]\n');
    assert.equal(dm('--as', 'values', v1, v2).stdout, "a:\n  'y': 2\n  x: 1\nl:\n  - 2\n");
    assert.equal(
      dm('--as', 'values', v1, v2, '--merge-how', 'dict(recurse_list)+list(prepend)').stdout,
      "a:\n  'y': 2\n  x: 1\nl:\n  - 1\n  - 2\n",
    );
  });

  it('merges two documents with --as raw, reading no merge_how from them', () => {
    const a = file('ra.yaml', '[1, 2, 3]\n');
    const b = file('rb.yaml', '[a]\n');
    assert.equal(dm('--as', 'raw', a, b, '--merge-how', 'list()').stdout, '- a\n- 2\n- 3\n');
    const m1 = file('rm1.yaml', 'k: [1]\n');
    const m2 = file('rm2.yaml', 'k: [2]\nmerge_how: list(append)\n');
    assert.equal(dm('--as', 'raw', m1, m2).stdout, 'k:\n  - 1\nmerge_how: list(append)\n');
  });

  it('refuses --as raw with other than two files (usage, exit 2)', () => {
    const out = dm('--as', 'raw', base, site, base, '-o', 'json');
    assert.equal(out.status, 2);
    assert.equal(JSON.parse(out.stdout).error.code, 'USAGE');
  });

  it('reports a bad --merge-how with its error kind (usage, exit 2)', () => {
    const out = dm(base, '--merge-how', 'dict (replace)', '-o', 'json');
    assert.equal(out.status, 2);
    assert.equal(JSON.parse(out.stdout).error.code, 'ValueError');
    assert.equal(dm(base, '--merge-how', 'dcit()').status, 2);
  });

  it('warns about a --merge-how option no merger reads (ignored, as cloud-init does), with did you mean', () => {
    const v1 = file('w1.yaml', 'l: [1]\ns: a\n');
    const v2 = file('w2.yaml', 'l: [2]\ns: b\n');
    const out = dm(v1, v2, '--merge-how', 'dict(recurse_lst)+list(apend)+str(append,fast)');
    assert.equal(out.status, 0, out.stderr);
    // The merge is cloud-init's, as if the unknown options were not there.
    assert.equal(out.stdout, dm(v1, v2, '--merge-how', 'dict()+list()+str(append)').stdout);
    assert.equal(out.stdout, 'l:\n  - 1\ns: a\n');
    assert.deepEqual(out.stderr.trimEnd().split('\n'), [
      "warning: --merge-how: 'recurse_lst' is not an option of dict() (did you mean 'recurse_list'?); ignored, as cloud-init ignores it",
      "warning: --merge-how: 'apend' is not an option of list() (did you mean 'append'?); ignored, as cloud-init ignores it",
      "warning: --merge-how: 'fast' is not an option of str() (it reads append); ignored, as cloud-init ignores it",
    ]);
    const known = dm(v1, v2, '--merge-how', 'dict(no_replace,recurse_list)+list(append)+str()');
    assert.equal(known.status, 0, known.stderr);
    assert.equal(known.stderr, '');
  });

  it('names file and line of a file that is not YAML', () => {
    const bad = file('bad.yaml', 'a: 1\nb: [1\nc: 2\n');
    const out = dm(base, bad);
    assert.equal(out.status, 1);
    assert.match(out.stderr, /bad\.yaml:3: invalid YAML/);
    assert.equal(JSON.parse(dm(bad, '-o', 'json').stdout).error.code, 'INVALID_YAML');
    assert.equal(dm('missing.yaml').status, 3);
  });

  it('keeps a __proto__ key as data', () => {
    const p = file('proto.yaml', '__proto__: {polluted: true}\nsafe: 1\n');
    const out = dm(p, '-o', 'json');
    assert.equal(out.status, 0, out.stderr);
    assert.match(out.stdout, /"__proto__": \{\s*"polluted": true/);
    assert.equal(dm(p).stdout, '__proto__:\n  polluted: true\nsafe: 1\n');
  });
});

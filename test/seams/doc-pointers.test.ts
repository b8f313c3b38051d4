/**
 * Comments and scripts point at docs/, never at the contract's spec files (not in this repository):
 * a pointer that leads nowhere is worse than none (issue 10).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

const root = new URL('../../../', import.meta.url).pathname;

/** Every source file under `dir` (TypeScript, JavaScript, shell, Python), skipping dependencies. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(path));
    else if (/\.(ts|tsx|mjs|js|sh|py)$/.test(entry.name)) out.push(path);
  }
  return out;
}

// Built from parts so that this file does not match itself.
const SPEC = 'spec';
const POINTER = new RegExp(`\\b${SPEC}/[a-z-]+\\.md|\\b${SPEC} §`);

describe('comments point at the project’s own docs', () => {
  it('no source file cites the contract’s spec files, which are not in this repository', () => {
    const offenders: string[] = [];
    for (const dir of ['client/src', 'server/src', 'test', 'bench', 'scripts']) {
      for (const file of sources(join(root, dir))) {
        readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (POINTER.test(line)) offenders.push(`${relative(root, file)}:${i + 1}: ${line.trim()}`);
          });
      }
    }
    assert.deepEqual(
      offenders,
      [],
      'point these comments at docs/ (write the section there if it is missing)',
    );
  });

  it('the check finds a pointer where there is one', () => {
    assert.ok(POINTER.test(` * Digests (${SPEC}/registry.md §5).`));
    assert.ok(POINTER.test(`(${SPEC} §2.2)`));
    assert.ok(!POINTER.test('splitBranch(spec); basedir-spec/'));
  });
});

/**
 * Files named in comments exist (issue 24: "module comments that point at files that no longer
 * exist"). A name resolves beside the file, from the repository's root, as the tail of any file
 * of the repository (`store/first-seen.ts`), as the compiled form of a source (a `.js` name under
 * dist/ or beside, for its `.ts`), or in the conformance cases beside the repository (../shared).
 */
const NAMED_FILE = /(?<![\w@/.:-])((?:\.{1,2}\/)*[\w.-]+(?:\/[\w.-]+)*\.(?:ts|tsx|mjs|js|cjs|md|sh|py))\b/g;
const COMMENT = /\/\/[^\n]*|\/\*[\s\S]*?\*\/|^\s*#[^\n]*/gm;
/** Names in comments that are not this repository's files, each for a stated reason. */
const NOT_OURS = new Map<string, string>([
  ['jinja2/utils.py', "Jinja2's own source, which the filter follows"],
  ['jinja2/lexer.py', "Jinja2's own source, which the lexer follows"],
  ['spark.py', 'an example of a top-level template file name'],
  ['sub/t.py', 'an example of an import path in a configuration'],
  ['my-t.py', 'an example of an import name in a configuration'],
  ['x.ts', "an example in the import graph's own description"],
  ['x.tsx', "an example in the import graph's own description"],
  ['./x.js', "an example in the import graph's own description"],
  ['./a.js', 'a module of the import test’s own scratch tree'],
  ['.test.ts', 'a file-name suffix, not a file'],
  ['.test.js', 'a file-name suffix, not a file'],
  ['jinja-child.cjs', 'a file the CLI bundle is built into (scripts/bundle.mjs)'],
  ['blueprint-child.cjs', 'a file the CLI bundle is built into (scripts/bundle.mjs)'],
]);

function trackedFiles(): string[] {
  const out: string[] = [];
  for (const dir of ['client', 'server', 'test', 'bench', 'scripts', 'docs', 'bin', 'examples', '.ci']) {
    const walk = (at: string): void => {
      for (const entry of readdirSync(at, { withFileTypes: true })) {
        if (entry.name === 'node_modules') continue;
        const path = join(at, entry.name);
        if (entry.isDirectory()) walk(path);
        else out.push(relative(root, path));
      }
    };
    try {
      walk(join(root, dir));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  for (const entry of readdirSync(root, { withFileTypes: true })) if (entry.isFile()) out.push(entry.name);
  return out;
}

/** Whether `name`, named in a comment of `file`, is a file of the repository (see above). */
function namesAFile(name: string, file: string, files: ReadonlySet<string>): boolean {
  const forms = [name];
  const compiled = name.replace(/^(\.\/)?dist\//, '');
  if (/\.js$/.test(compiled)) forms.push(compiled.replace(/\.js$/, '.ts'), compiled.replace(/\.js$/, '.tsx'));
  for (const form of forms) {
    const beside = relative(root, join(root, file, '..', form));
    const fromRoot = relative(root, join(root, form));
    if (files.has(beside) || files.has(fromRoot)) return true;
    const tail = `/${form.replace(/^(\.{1,2}\/)+/, '')}`;
    for (const f of files) if (f.endsWith(tail)) return true;
  }
  // The conformance cases (../shared/conformance/) sit beside the repository, as the tests read them.
  const shared = name.replace(/^(\.\.\/)?(shared\/)?/, '');
  if (shared.startsWith('conformance/')) return files.has(`../shared/${shared}`);
  return false;
}

describe('comments name files that exist', () => {
  it('every file a comment of the sources, tests, benches or scripts names is there', () => {
    const files = new Set(trackedFiles());
    try {
      for (const entry of readdirSync(join(root, '..', 'shared', 'conformance'))) {
        files.add(`../shared/conformance/${entry}`);
      }
    } catch {
      // no conformance cases beside this checkout: a name of them then counts as missing
    }
    const missing: string[] = [];
    for (const dir of ['client/src', 'server/src', 'test', 'bench', 'scripts']) {
      for (const path of sources(join(root, dir))) {
        const file = relative(root, path);
        for (const comment of readFileSync(path, 'utf8').match(COMMENT) ?? []) {
          for (const [, name] of comment.matchAll(NAMED_FILE)) {
            if (NOT_OURS.has(name!) || namesAFile(name!, file, files)) continue;
            missing.push(`${file}: ${name}`);
          }
        }
      }
    }
    assert.deepEqual(missing, [], 'these comments name files that are not there: point them at what is');
  });

  it('the check finds a name that leads nowhere, and follows one that leads somewhere', () => {
    const files = new Set(['server/src/store/first-seen.ts', 'client/src/error.ts', 'bench/expand.ts']);
    assert.ok(namesAFile('store/first-seen.ts', 'server/src/api/app.ts', files));
    assert.ok(namesAFile('../error.js', 'client/src/expand/x.ts', files));
    assert.ok(namesAFile('dist/bench/expand.js', 'bench/expand.ts', files));
    assert.ok(!namesAFile('store/first-seen-pg.ts', 'server/src/api/app.ts', files));
    assert.ok(!namesAFile('swap-index-pg.ts', 'test/server/x.test.ts', files));
  });
});

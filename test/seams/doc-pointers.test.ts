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

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { someOf } from '../../../client/src/resolve/install.js';
import { changedFilesText } from './template-page.js';

describe('bounded lists in sentences', () => {
  it('a quarantined version names at most ten changed files on its page, and how many more', () => {
    assert.equal(changedFilesText([]), 'files unknown');
    assert.equal(changedFilesText(['a.jinja', 'b.py']), 'a.jinja, b.py');
    const many = Array.from({ length: 1000 }, (_, i) => `f${i}.jinja`);
    const text = changedFilesText(many);
    assert.equal(text, `${many.slice(0, 10).join(', ')} and 990 more files`);
  });

  it('dm install names at most ten references or files in one error sentence', () => {
    assert.equal(someOf(['a']), 'a');
    const many = Array.from({ length: 25 }, (_, i) => `r${i}`);
    assert.equal(someOf(many), `${many.slice(0, 10).join(', ')}, and 15 more (all listed with -o json)`);
  });
});

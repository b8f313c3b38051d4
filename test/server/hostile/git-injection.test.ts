/**
 * Issue 15 item 4: option injection through source fields. A branch like
 * `--upload-pack=touch pwned; git-upload-pack` used to reach `git fetch` and run a shell command.
 * Against a real dm-registry process and real git: every injection string in every field is
 * refused with 400 and runs nothing; the branch rule agrees with `git check-ref-format --branch`
 * (property-based, the real binary as the oracle).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { GitSource, isValidBranchName } from '../../../client/src/source/git.js';
import { commitDirectory } from '../../github-standin/standin.js';
import { DIALECTS, FIXTURES, tempDir } from '../helpers.js';
import { ADMIN, startRegistry } from './process.js';

const auth = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

describe('hostile: git argument injection', () => {
  for (const dialect of DIALECTS) {
    it(`refuses option-like and invalid values in source, branch and path; nothing runs (${dialect})`, async () => {
      const dir = tempDir('dm-hostile-git-');
      const repo = join(dir, 'repo');
      commitDirectory(FIXTURES, repo);
      const pwned = join(dir, 'pwned');
      const server = await startRegistry([], { dialect });
      try {
        const url = `file://${repo}`;
        const attacks: Record<string, unknown>[] = [
          { source: url, branch: `--upload-pack=touch ${pwned}; git-upload-pack` },
          { source: url, branch: `-u touch ${pwned}` },
          { source: url, branch: 'main..x' },
          { source: url, branch: 'a b' },
          { source: url, branch: 'HEAD' },
          { source: url, branch: 'x.lock' },
          { source: url, branch: 'x@{1}' },
          { source: `--upload-pack=touch ${pwned}`, name: 'git.example/a/b' },
          { source: `-oProxyCommand=touch ${pwned}`, name: 'git.example/a/c' },
          { source: url, path: `--output=${pwned}` },
          { source: url, path: '../../etc' },
          { source: 'github.com/acme/templates', branch: '--help' },
        ];
        for (const body of attacks) {
          const res = await fetch(`${server.url}/api/v1/registries`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify(body),
          });
          const text = await res.text();
          assert.equal(res.status, 400, `${JSON.stringify(body)}: ${text}`);
          assert.match(text, /INVALID_SOURCE|INVALID_REGISTRY/);
        }
        const listed = (await (await fetch(`${server.url}/api/v1/registries`, { headers: auth })).json()) as {
          registries: unknown[];
        };
        assert.equal(listed.registries.length, 0);
        // A valid branch still works end to end.
        const ok = await fetch(`${server.url}/api/v1/registries`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ source: url, branch: 'main', name: 'git.example/acme/ok' }),
        });
        assert.equal(ok.status, 201, await ok.clone().text());
        // Bypassing the API, the source itself refuses the branch before running git.
        assert.throws(
          () =>
            new GitSource({
              location: url,
              branch: `--upload-pack=touch ${pwned}; git-upload-pack`,
              cacheDir: join(dir, 'c'),
            }),
          { code: 'INVALID_SOURCE' },
        );
        assert.equal(existsSync(pwned), false, 'the injected command ran');
        assert.equal(await server.stop(), 0);
      } finally {
        server.dispose();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('isValidBranchName agrees with git check-ref-format --branch', () => {
    const alphabet = fc.constantFrom(...'ab-_./@{}~^:?*[\\ .lockHED\t'.split(''), 'lock', '..', '@{');
    fc.assert(
      fc.property(fc.array(alphabet, { minLength: 1, maxLength: 12 }), (parts) => {
        const name = parts.join('');
        // `@` and `@{-N}` are expansions in --branch mode, not names: dm refuses them outright.
        fc.pre(name !== '@' && !name.startsWith('@{'));
        const git = spawnSync('git', ['check-ref-format', '--branch', name], { encoding: 'utf8' });
        assert.ok(git.status === 0 || git.status === 128, git.stderr);
        assert.equal(isValidBranchName(name), git.status === 0, `'${name}': git says ${git.status}`);
      }),
      { numRuns: 300 },
    );
  });
});

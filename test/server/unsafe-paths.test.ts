/**
 * Issue 25 items 11 and 12 (docs/registry-layout.md, "Paths and names"): a name with a backslash
 * (`docs/notes\old.txt`, outside every template) or a control character (inside redis/v1) in a
 * directory registry is a finding, not a failed sync: the rest is indexed, as the same tree
 * committed to git is; `dm-registry index` prints such names escaped, and the registry page shows
 * them escaped too. On each database.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN_ACCESS } from '../../server/src/api/access.js';
import { commitAll, commitDirectory } from '../github-standin/standin.js';
import { repoRoot } from '../support/run-cli.js';
import {
  admin,
  DIALECTS,
  type DialectTestServer,
  databaseOn,
  FIXTURES,
  tempDir,
  testServerOn,
} from './helpers.js';

const BACKSLASH = 'docs/notes\\old.txt';
const CONTROL = 'redis/v1/bell\u0007\u202etxt.exe';

for (const dialect of DIALECTS)
  describe(`unsafe names in a registry's tree (${dialect})`, () => {
    let s: DialectTestServer;
    let tree: string;
    let repo: string;

    before(async () => {
      const dir = tempDir();
      tree = join(dir, 'tree');
      cpSync(FIXTURES, tree, { recursive: true });
      mkdirSync(join(tree, 'docs'));
      writeFileSync(join(tree, ...BACKSLASH.split('/')), 'an old note\n');
      writeFileSync(join(tree, ...CONTROL.split('/')), 'x\n');
      repo = join(dir, 'repo');
      commitDirectory(tree, repo);
      commitAll(repo, 'publish');
      s = await testServerOn(dialect);
    });
    after(async () => {
      await s?.close();
    });

    for (const kind of ['directory', 'git'] as const) {
      it(`a ${kind} registry: the sync succeeds, the names are findings, the rest is served`, async () => {
        const name = `git.example/acme/${kind}`;
        const row = await s.service.add({ source: kind === 'directory' ? tree : `file://${repo}`, name });
        const outcome = await s.service.sync(row.id, 'manual');
        assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome));
        const info = await s.service.info(await s.service.find(row.id, ADMIN_ACCESS), {
          findings: true,
          viewer: ADMIN_ACCESS,
        });
        const unsafe = (info.findings ?? []).filter((f) => f.code === 'UNSAFE_PATH').map((f) => f.path);
        assert.deepEqual(unsafe.sort(), [BACKSLASH, CONTROL].sort());
        // redis/v1 holds the refused name: not served; the other versions are.
        const r = await s.service.catalog.resolve(`${name}/redis:v1.1`, ADMIN_ACCESS);
        assert.equal(r.version, 'v1.1');
        await assert.rejects(
          s.service.catalog.resolve(`${name}/redis:=v1`, ADMIN_ACCESS),
          /not found|no version/i,
        );
        // The registry page shows the finding escaped: no raw control or bidi character.
        const page = await (await s.app.request(`/registries/${name}`, { headers: admin })).text();
        assert.match(page, /UNSAFE_PATH/);
        assert.ok(!page.includes('\u0007') && !page.includes('\u202e'), 'a raw control or bidi character');
        assert.match(page, /bell\\u\{7\}\\u\{202e\}txt\.exe/);
      });
    }

    it('dm-registry index prints the names escaped', async () => {
      const db = await databaseOn(dialect, tempDir());
      const r = spawnSync(
        process.execPath,
        [join(repoRoot, 'bin', 'dm-registry.js'), 'index', tree, '--db', db],
        {
          encoding: 'utf8',
        },
      );
      assert.equal(r.status, 0, r.stderr);
      const out = r.stdout + r.stderr;
      assert.match(out, /UNSAFE_PATH/);
      assert.ok(!out.includes('\u0007') && !out.includes('\u202e'), out);
      assert.match(out, /bell\\u\{7\}\\u\{202e\}txt\.exe/);
    });
  });

/**
 * The git and directory sources through real `git` against temporary repositories, safe tarball
 * reading, and a malformed registry (registry-fixtures/broken) indexing its valid versions and
 * reporting the rest.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { scanRegistryTree } from '../../client/src/registry/scan-tree.js';
import { GitSource } from '../../client/src/source/git.js';
import { createMeter } from '../../client/src/source/source.js';
import { readTarball } from '../../client/src/source/tarball.js';
import { ADMIN_ACCESS } from '../../server/src/api/access.js';
import { commitAll, commitDirectory } from '../github-standin/standin.js';
import { DIALECTS, FIXTURES, tempDir, testServerOn } from './helpers.js';
import { tarOf } from './tar-fixtures.js';

const everyone = ADMIN_ACCESS;

describe('git source', () => {
  let dir: string;
  let repo: string;
  before(() => {
    dir = tempDir();
    repo = join(dir, 'repo');
    commitDirectory(FIXTURES, repo);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('GitSource reads the tree and blobs of a local repository with git', async () => {
    const source = new GitSource({ location: repo });
    const opened = await source.open({ meter: createMeter() });
    assert.equal(opened.status, 'changed');
    if (opened.status !== 'changed') return;
    assert.match(opened.commit, /^[0-9a-f]{40}$/);
    const entry = opened.entries.find((e) => e.path === 'redis/v1/redis.jinja');
    assert.ok(entry?.gitSha);
    const content = await opened.read([entry]);
    assert.ok(content.get('redis/v1/redis.jinja')?.toString('utf8').length);
    const again = await source.open({ meter: createMeter(), commit: opened.commit });
    assert.equal(again.status, 'unchanged');
  });

  for (const dialect of DIALECTS) {
    it(`indexes a git URL (file://) and a sub-path, and re-syncs an unchanged one as unchanged (${dialect})`, async () => {
      const s = await testServerOn(dialect);
      try {
        const row = await s.service.add({ source: `file://${repo}`, name: 'git.example/acme/templates' });
        const first = await s.service.sync(row.id, 'manual');
        assert.equal(first.status, 'succeeded', JSON.stringify(first.error));
        assert.ok((first.versionCount ?? 0) > 10);
        const second = await s.service.sync(row.id, 'manual');
        assert.equal(second.status, 'unchanged');
        const sub = await s.service.add({ source: repo, name: 'git.example/acme/redis-only', path: 'redis' });
        const subOutcome = await s.service.sync(sub.id, 'manual');
        assert.equal(subOutcome.status, 'succeeded');
      } finally {
        await s.close();
      }
    });

    it(`a new commit in a local repository is picked up by the next sync (${dialect})`, async () => {
      const s = await testServerOn(dialect);
      // Its own repository: this test commits to it.
      const local = join(dir, `local-${dialect}`);
      commitDirectory(FIXTURES, local);
      try {
        const row = await s.service.add({ source: local, name: 'git.example/acme/local' });
        await s.service.sync(row.id, 'manual');
        const before = await s.service.catalog.resolve('git.example/acme/local/redis:v1.1', everyone);
        cpSync(join(local, 'redis', 'v1.1'), join(local, 'redis', 'v1.9'), { recursive: true });
        writeFileSync(join(local, 'redis', 'v1.9', 'NOTES.txt'), 'new file\n');
        // A published version never changes (docs/integrity-store.md): this edit is quarantined.
        writeFileSync(join(local, 'redis', 'v1.1', 'NOTES.txt'), 'new file\n');
        commitAll(local, 'add notes');
        const outcome = await s.service.sync(row.id, 'manual');
        assert.equal(outcome.status, 'succeeded');
        const added = await s.service.catalog.resolve('git.example/acme/local/redis:v1.9', everyone);
        assert.ok(added.files.some((f) => f.path === 'NOTES.txt'));
        const published = await s.service.catalog.resolve('git.example/acme/local/redis:v1.1', everyone);
        assert.equal(published.digest, before.digest);
        assert.ok(!published.files.some((f) => f.path === 'NOTES.txt'));
      } finally {
        await s.close();
      }
    });

    it(`a git source that does not exist fails the sync with a message, not a crash (${dialect})`, async () => {
      const s = await testServerOn(dialect);
      try {
        const row = await s.service.add({
          source: `file://${join(dir, 'missing')}`,
          name: 'git.example/acme/missing',
        });
        const outcome = await s.service.sync(row.id, 'manual');
        assert.equal(outcome.status, 'failed');
        assert.equal(outcome.error?.code, 'GIT_FAILED');
        execFileSync('git', ['--version']);
      } finally {
        await s.close();
      }
    });
  }
});

for (const dialect of DIALECTS) {
  describe(`directory source (${dialect})`, () => {
    it('reads a directory like dm --registry-dir: a symbolic link is a file whose content is its target', async () => {
      const dir = tempDir();
      const s = await testServerOn(dialect);
      try {
        cpSync(join(FIXTURES, 'redis'), join(dir, 'redis'), { recursive: true });
        symlinkSync('redis.jinja', join(dir, 'redis', 'v1.1', 'alias.jinja'));
        const row = await s.service.add({ source: dir, name: 'github.com/acme/linked' });
        assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
        const resolved = await s.service.catalog.resolve('github.com/acme/linked/redis:v1.1', everyone);
        const alias = resolved.files.find((f) => f.path === 'alias.jinja');
        assert.equal(alias?.sha256, createHash('sha256').update('redis.jinja').digest('hex'));
        const again = await s.service.sync(row.id, 'manual');
        assert.equal(again.status, 'unchanged');
      } finally {
        await s.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe(`malformed registry (${dialect})`, () => {
    it('registry-fixtures/broken indexes its valid versions and reports the rest as findings', async () => {
      const s = await testServerOn(dialect);
      try {
        const row = await s.service.add({ source: join(FIXTURES, 'broken'), name: 'local.dm/acme/broken' });
        const outcome = await s.service.sync(row.id, 'manual');
        assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome.error));
        const info = await s.service.info(await s.service.find(row.id, everyone), {
          findings: true,
          viewer: everyone,
        });
        assert.ok(info.counts.versions > 0, 'no valid version was kept');
        assert.ok(info.findings && info.findings.length > 5, 'findings were not stored');
        const codes = new Set(info.findings.map((f) => f.code));
        for (const code of ['DUPLICATE_VERSION', 'INVALID_VERSION_DIR', 'REGISTRY_YAML_PATH_ESCAPES']) {
          assert.ok(codes.has(code), `missing finding ${code}`);
        }
        // The server reports exactly what the shared scanner (dm lint) finds.
        const { readDirectoryTree } = await import('../../client/src/registry/read-directory-tree.js');
        const tree = await readDirectoryTree(join(FIXTURES, 'broken'));
        const scan = scanRegistryTree(tree.entries, { registryYaml: tree.registryYaml });
        assert.equal(info.counts.versions, scan.versions.length);
        assert.equal(info.findings.length, scan.findings.length);
      } finally {
        await s.close();
      }
    });
  });
}

describe('readTarball()', () => {
  const gz = (entries: Parameters<typeof tarOf>[0]) => gzipSync(tarOf(entries));

  it('readTarball() reads regular files and strips the top directory', async () => {
    const { files } = await readTarball(
      gz([
        { path: 'top/', type: '5' },
        { path: 'top/a/b.txt', content: 'hi' },
      ]),
      { stripFirst: true },
    );
    assert.equal(files.get('a/b.txt')?.toString(), 'hi');
  });

  for (const [name, path] of [
    ['a parent-directory escape', 'top/../../etc/passwd'],
    ['an absolute path', '/etc/passwd'],
  ] as const) {
    it(`readTarball() rejects ${name}`, async () => {
      await assert.rejects(readTarball(gz([{ path, content: 'x' }]), { stripFirst: true }), {
        code: 'UNSAFE_ARCHIVE',
      });
    });
  }

  it('readTarball() skips, and does not read, a name the content-name rule refuses (a backslash, a control character)', async () => {
    const { files, skipped } = await readTarball(
      gz([
        { path: 'top/notes\\old.txt', content: 'x' },
        { path: 'top/bell\u0007.txt', content: 'y' },
        { path: 'top/ok.txt', content: 'z' },
      ]),
      { stripFirst: true },
    );
    assert.deepEqual([...files.keys()], ['ok.txt']);
    assert.deepEqual(skipped.sort(), ['bell\u0007.txt', 'notes\\old.txt']);
  });

  it('readTarball() rejects links that point outside and hard links; a link inside is its target as content', async () => {
    await assert.rejects(readTarball(gz([{ path: 'top/link', type: '2', linkpath: '../../etc/passwd' }])), {
      code: 'UNSAFE_ARCHIVE',
    });
    await assert.rejects(readTarball(gz([{ path: 'top/link', type: '2', linkpath: '/etc/passwd' }])), {
      code: 'UNSAFE_ARCHIVE',
    });
    await assert.rejects(readTarball(gz([{ path: 'top/hard', type: '1', linkpath: 'top/a' }])), {
      code: 'UNSAFE_ARCHIVE',
    });
    const { files } = await readTarball(gz([{ path: 'top/a/link', type: '2', linkpath: '../b.txt' }]), {
      stripFirst: true,
    });
    assert.equal(files.get('a/link')?.toString(), '../b.txt');
  });

  it('readTarball() enforces size and entry limits', async () => {
    await assert.rejects(readTarball(gz([{ path: 'a', content: 'x'.repeat(100) }]), { maxFileBytes: 10 }), {
      code: 'ARCHIVE_TOO_LARGE',
    });
    await assert.rejects(
      readTarball(
        gz([
          { path: 'a', content: '1' },
          { path: 'b', content: '2' },
          { path: 'c', content: '3' },
        ]),
        { maxEntries: 2 },
      ),
      { code: 'ARCHIVE_TOO_LARGE' },
    );
    await assert.rejects(readTarball(Buffer.from('not a tarball at all, not even close'.repeat(20))), {
      code: 'INVALID_ARCHIVE',
    });
  });
});

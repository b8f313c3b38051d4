/**
 * The GitHub source and the indexer through real @octokit/rest against the GitHub stand-in:
 * request budgets, ETag re-syncs, truncated trees, rate limits, private repositories, hostile
 * tarballs — and the same digests as indexing the same files from disk.
 */
import assert from 'node:assert/strict';
import { cpSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN_ACCESS } from '../../server/src/api/access.js';
import { commitAll, commitDirectory, type Standin, startGitHubStandin } from '../github-standin/standin.js';
import { DIALECTS, type DialectTestServer, FIXTURES, tempDir, testServerOn } from './helpers.js';
import { hostileTarball } from './tar-fixtures.js';

const everyone = ADMIN_ACCESS;

for (const dialect of DIALECTS) {
  describe(`GitHub source through the stand-in (${dialect})`, () => {
    let dir: string;
    let standin: Standin;
    let repo: string;

    before(async () => {
      dir = tempDir();
      repo = join(dir, 'templates');
      commitDirectory(FIXTURES, repo);
      commitDirectory(join(FIXTURES, 'redis'), join(dir, 'secret'));
      commitDirectory(FIXTURES, join(dir, 'hostile'));
      standin = await startGitHubStandin({
        repos: {
          'acme/templates': { gitDir: repo },
          'acme/truncated': { gitDir: repo },
          'acme/secret': { gitDir: join(dir, 'secret'), private: true },
          'acme/hostile': { gitDir: join(dir, 'hostile'), tarball: hostileTarball('../../etc/evil') },
        },
        tokens: ['reader-token'],
        // Only acme/truncated exceeds it: the fixtures have fewer entries, see the test below.
        maxTreeEntries: 100_000,
      });
    });
    after(async () => {
      await standin.close();
      rmSync(dir, { recursive: true, force: true });
    });

    function server(): Promise<DialectTestServer> {
      return testServerOn(dialect, { githubApiUrl: standin.url });
    }

    it('indexes cold in at most 4 requests, re-syncs unchanged in 1 (304), with the digests of the files on disk', async () => {
      const s = await server();
      const local = await testServerOn(dialect);
      try {
        const gh = await s.service.add({ source: 'github.com/acme/templates' });
        const cold = await s.service.sync(gh.id, 'manual');
        assert.equal(cold.status, 'succeeded', JSON.stringify(cold.error));
        assert.ok(cold.apiRequests <= 4, `cold sync made ${cold.apiRequests} requests`);
        assert.ok(cold.rateLimitRemaining !== null && cold.rateLimitRemaining > 0);

        const again = await s.service.sync(gh.id, 'manual');
        assert.equal(again.status, 'unchanged');
        assert.equal(again.apiRequests, 1);

        const lr = await local.service.add({ source: FIXTURES, name: 'github.com/acme/templates' });
        const localOutcome = await local.service.sync(lr.id, 'manual');
        assert.equal(localOutcome.versionCount, cold.versionCount);
        const fromGitHub = await s.service.catalog.resolve('github.com/acme/templates/redis:v1.0', everyone);
        const fromDisk = await local.service.catalog.resolve(
          'github.com/acme/templates/redis:v1.0',
          everyone,
        );
        assert.equal(fromGitHub.digest, fromDisk.digest);
        assert.deepEqual(fromGitHub.files, fromDisk.files);
        assert.equal(fromGitHub.commit, cold.commit);
      } finally {
        await s.close();
        await local.close();
      }
    });

    it('a symbolic link indexes to the same digest from the GitHub tarball, git blobs and the directory', async () => {
      const linked = join(dir, 'linked-src');
      cpSync(join(FIXTURES, 'redis'), join(linked, 'redis'), { recursive: true });
      symlinkSync('redis.jinja', join(linked, 'redis', 'v1.1', 'alias.jinja'));
      const linkedRepo = join(dir, 'linked');
      commitDirectory(linked, linkedRepo);
      const gh = await startGitHubStandin({ repos: { 'acme/linked': { gitDir: linkedRepo } } });
      const s = await testServerOn(dialect, { githubApiUrl: gh.url });
      try {
        const digests: string[] = [];
        for (const [source, name] of [
          ['github.com/acme/linked', 'github.com/acme/linked'],
          [linkedRepo, 'git.example/acme/linked'],
          [linked, 'local.dm/acme/linked'],
        ] as const) {
          const row = await s.service.add({ source, name });
          const outcome = await s.service.sync(row.id, 'manual');
          assert.equal(outcome.status, 'succeeded', `${source}: ${JSON.stringify(outcome.error)}`);
          digests.push((await s.service.catalog.resolve(`${name}/redis:v1.1`, everyone)).digest);
        }
        assert.ok(gh.requests.some((r) => r.path.includes('/tarball/')));
        assert.equal(new Set(digests).size, 1, digests.join(' '));
      } finally {
        await s.close();
        await gh.close();
      }
    });

    it('re-indexes a one-file change in at most 6 requests', async () => {
      const s = await server();
      try {
        const gh = await s.service.add({ source: 'github.com/acme/templates' });
        await s.service.sync(gh.id, 'manual');
        const before = await s.service.catalog.resolve('github.com/acme/templates/redis:v1.1', everyone);
        writeFileSync(
          join(repo, 'redis', 'v1.1', 'example.yaml'),
          'resources:\n- name: changed\n  type: redis.jinja\n',
        );
        commitAll(repo, 'change one file');
        const outcome = await s.service.sync(gh.id, 'manual');
        assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome.error));
        assert.ok(outcome.apiRequests <= 6, `one-file change made ${outcome.apiRequests} requests`);
        // The edit is seen (a new commit) and quarantined: the first-seen digest stays served
        // (docs/integrity-store.md).
        const afterChange = await s.service.catalog.resolve('github.com/acme/templates/redis:v1.1', everyone);
        assert.equal(afterChange.digest, before.digest);
        assert.notEqual(afterChange.commit, before.commit);
        const [open] = await s.service.data.reads.openQuarantines(gh.id);
        assert.deepEqual(
          open?.changedFiles.map((f) => f.path),
          ['example.yaml'],
        );
      } finally {
        await s.close();
      }
    });

    it('falls back to the tarball when GitHub truncates the tree, within 4 requests', async () => {
      const truncating = await startGitHubStandin({
        repos: { 'acme/templates': { gitDir: repo } },
        maxTreeEntries: 10,
      });
      const s = await testServerOn(dialect, { githubApiUrl: truncating.url });
      try {
        const gh = await s.service.add({ source: 'github.com/acme/templates' });
        const outcome = await s.service.sync(gh.id, 'manual');
        assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome.error));
        assert.ok(outcome.apiRequests <= 4, `truncated sync made ${outcome.apiRequests} requests`);
        assert.ok(truncating.requests.some((r) => r.path.includes('/tarball/')));
        assert.ok((outcome.versionCount ?? 0) > 10);
      } finally {
        await s.close();
        await truncating.close();
      }
    });

    it('backs off on a 403 rate limit with a reset time and on a 429 with Retry-After, then resumes', async () => {
      const s = await server();
      try {
        const gh = await s.service.add({ source: 'github.com/acme/templates' });
        standin.injectRateLimit('primary', 1, 1);
        let started = Date.now();
        const first = await s.service.sync(gh.id, 'manual');
        assert.equal(first.status, 'succeeded', JSON.stringify(first.error));
        assert.ok(Date.now() - started >= 900, 'did not wait for the reset');

        const reset = await s.service.add({
          source: 'github.com/acme/templates',
          name: 'github.com/acme/again',
        });
        standin.injectRateLimit('secondary', 1, 1);
        started = Date.now();
        const second = await s.service.sync(reset.id, 'manual');
        assert.equal(second.status, 'succeeded', JSON.stringify(second.error));
        assert.ok(Date.now() - started >= 900, 'did not honour Retry-After');
      } finally {
        await s.close();
      }
    });

    it('cannot read a private repository without a credential, and can with one', async () => {
      const s = await server();
      try {
        const anonymous = await s.service.add({ source: 'github.com/acme/secret' });
        const denied = await s.service.sync(anonymous.id, 'manual');
        assert.equal(denied.status, 'failed');
        assert.equal(denied.error?.code, 'SOURCE_NOT_FOUND');
        await s.service.storeCredential('acme', 'reader-token');
        const withToken = await s.service.add({
          source: 'github.com/acme/secret',
          name: 'github.com/acme/secret2',
          credential: 'acme',
        });
        const ok = await s.service.sync(withToken.id, 'manual');
        assert.equal(ok.status, 'succeeded', JSON.stringify(ok.error));
      } finally {
        await s.close();
      }
    });

    it('rejects a tarball with hostile paths and keeps serving the previous index', async () => {
      const s = await testServerOn(dialect, { githubApiUrl: standin.url });
      try {
        // Forced onto the tarball path: every blob is missing, more than the blob budget.
        const gh = await s.service.add({ source: 'github.com/acme/hostile' });
        const outcome = await s.service.sync(gh.id, 'manual');
        assert.equal(outcome.status, 'failed');
        assert.equal(outcome.error?.code, 'UNSAFE_ARCHIVE');
        const row = await s.service.find(gh.id, everyone);
        assert.equal(row.versionCount, 0);
        assert.equal(row.lastSyncStatus, 'failed');
      } finally {
        await s.close();
      }
    });
  });
}

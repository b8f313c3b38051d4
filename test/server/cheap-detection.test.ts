/**
 * Cheap change detection (docs/server.md, "Indexing"; issue 11): a sync takes a version whose
 * directory's tree SHA is unchanged from the store as it is — none of its blobs is read from
 * GitHub, its stored row (here marked) is kept — and re-reads only the changed version, which is
 * still quarantined. Both dialects, through the GitHub stand-in, which records its requests.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gitBlobSha } from '../../client/src/source/source.js';
import { commitAll, commitDirectory, type Standin, startGitHubStandin } from '../github-standin/standin.js';
import { DIALECTS, type DialectTestServer, FIXTURES, tempDir, testServerOn } from './helpers.js';

const MARK = '{"info":{"title":"kept from the store"}}';
const UNCHANGED = 'org.example.observability/grafana/v1.1';

async function exec(s: DialectTestServer, sql: string, values: unknown[]): Promise<unknown[]> {
  const store = s.store;
  if ('pool' in store) {
    let n = 0;
    return (
      await store.pool.query(
        sql.replace(/\?/g, () => `$${++n}`),
        values,
      )
    ).rows;
  }
  const statement = store.sqlite.prepare(sql);
  return statement.reader ? statement.all(...values) : [statement.run(...values)];
}

for (const dialect of DIALECTS) {
  describe(`cheap change detection by tree SHA (${dialect})`, () => {
    let dir: string;
    let repo: string;
    let standin: Standin;
    let s: DialectTestServer;
    before(async () => {
      dir = tempDir();
      repo = join(dir, 'templates');
      commitDirectory(FIXTURES, repo);
      standin = await startGitHubStandin({ repos: { 'acme/templates': { gitDir: repo } } });
      s = await testServerOn(dialect, { githubApiUrl: standin.url });
    });
    after(async () => {
      await s.close();
      await standin.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('reads only the changed version, keeps unchanged ones as stored, and quarantines the change', async () => {
      const id = (await s.service.add({ source: 'github.com/acme/templates' })).id;
      assert.equal((await s.service.sync(id, 'manual')).status, 'succeeded');
      // Mark an unchanged version's stored row: a sync that re-parsed its schema would overwrite it.
      await exec(s, 'UPDATE versions SET schema_json = ? WHERE registry_id = ? AND dir = ?', [
        MARK,
        id,
        UNCHANGED,
      ]);

      const edited = Buffer.from('resources:\n- name: edited\n  type: redis.jinja\n');
      writeFileSync(join(repo, 'redis', 'v1.1', 'example.yaml'), edited);
      commitAll(repo, 'edit a published version');
      const from = standin.requests.length;
      const outcome = await s.service.sync(id, 'manual');
      assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome.error));

      const blobs = standin.requests.slice(from).filter((r) => r.path.includes('/git/blobs/'));
      assert.deepEqual(
        blobs.map((r) => r.path.split('/').pop()),
        [gitBlobSha(edited)],
        'only the edited file is read',
      );
      const [kept] = (await exec(
        s,
        'SELECT schema_json AS "schemaJson" FROM versions WHERE registry_id = ? AND dir = ?',
        [id, UNCHANGED],
      )) as { schemaJson: string }[];
      assert.equal(kept?.schemaJson, MARK);

      const quarantined = await s.service.data.reads.openQuarantines(id);
      assert.deepEqual(
        quarantined.map((q) => [q.template, q.version, q.changedFiles.map((f) => f.path)]),
        [['github.com/acme/templates/redis', 'v1.1', ['example.yaml']]],
      );
    });
  });
}

/**
 * What the store decides, decided once (docs/server.md, "The store"): each behaviour that once
 * differed between SQLite and PostgreSQL, asserted alike on both databases.
 *   1. Search words: `exporter_node` (an underscore or punctuation between words) matches
 *      `node-exporter` on both: one tokeniser (queryWords) splits every query.
 *   2. Beyond the candidate bound, the exactly named template is found whatever the query's case:
 *      the exact-name tier is case-insensitive, inside and beyond the bound.
 *   3. closeReverted is one transaction: a failure on its second version leaves the first open.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isPostgres, serviceStoreOf } from '../../server/src/store/open-store.js';
import { commitAll, commitDirectory } from '../github-standin/standin.js';
import { DIALECTS, type DialectTestServer, FIXTURES, tempDir, testServerOn } from './helpers.js';

const SAMPLES = 'git.example/acme/samples';
const WIDGETS = 'git.example/acme/widgets';
/** More templates named `widget-…` than the search's candidate bound (CANDIDATES, 1,000). */
const WIDGET_COUNT = 1001;

/** A registry of WIDGET_COUNT templates `widget-NNNN` and, in collection `zz`, one named `Widget`. */
function widgetRegistry(repo: string): void {
  const template = (dir: string, name: string) => {
    mkdirSync(join(dir, name, 'v1'), { recursive: true });
    writeFileSync(join(dir, name, 'v1', `${name}.jinja`), 'resources: []\n');
  };
  for (let i = 0; i < WIDGET_COUNT; i++) template(repo, `widget-${String(i).padStart(4, '0')}`);
  template(join(repo, 'zz'), 'Widget');
  writeFileSync(join(repo, 'registry.yaml'), `name: ${WIDGETS}\n`);
  commitAll(repo, 'widgets');
}

async function run(s: DialectTestServer, sql: string): Promise<void> {
  if (isPostgres(s.store)) await s.store.pool.query(sql);
  else s.store.sqlite.exec(sql);
}

async function openQuarantines(s: DialectTestServer): Promise<string[]> {
  const sql = 'SELECT template FROM quarantines WHERE accepted_at IS NULL ORDER BY id';
  const rows = isPostgres(s.store)
    ? (await s.store.pool.query(sql)).rows
    : (s.store.sqlite.prepare(sql).all() as { template: string }[]);
  return rows.map((r) => r.template);
}

for (const dialect of DIALECTS)
  describe(`the store decides alike (${dialect})`, () => {
    let s: DialectTestServer;
    let samples: number;

    before(async () => {
      const dir = tempDir();
      s = await testServerOn(dialect);
      const repo = join(dir, 'samples');
      commitDirectory(FIXTURES, repo);
      samples = (await s.service.add({ source: repo, name: SAMPLES })).id;
      assert.equal((await s.service.sync(samples, 'manual')).status, 'succeeded');
      const widgets = join(dir, 'widgets');
      execFileSync('git', ['init', '--quiet', '--initial-branch=main', widgets]);
      widgetRegistry(widgets);
      const row = await s.service.add({ source: widgets, name: WIDGETS });
      assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
      // The held rows answer (a service warms them after each swap); searched until they do.
      await s.app.request('/api/v1/search?q=redis');
    });
    after(async () => {
      await s?.close();
    });

    async function search(q: string, extra = '') {
      const res = await s.app.request(`/api/v1/search?q=${encodeURIComponent(q)}${extra}`);
      assert.equal(res.status, 200, q);
      return (await res.json()) as {
        total: number;
        totalIsLowerBound: boolean;
        didYouMean: string | null;
        hits: { registry: string; collection: string; name: string }[];
      };
    }

    it('splits a query on underscores and punctuation alike: exporter_node finds node-exporter', async () => {
      for (const q of ['exporter_node', 'node_exporter', 'exporter.node', 'EXPORTER-node', 'exporter node']) {
        const answer = await search(q, `&registry=${encodeURIComponent(SAMPLES)}`);
        assert.deepEqual(
          { names: answer.hits.map((m) => m.name), didYouMean: answer.didYouMean },
          { names: ['node-exporter'], didYouMean: null },
          `${q} on ${dialect}`,
        );
      }
    });

    it('finds the exactly named template beyond the candidate bound, whatever the case', async () => {
      for (const q of ['widget', 'WIDGET', 'Widget']) {
        const answer = await search(q, `&registry=${encodeURIComponent(WIDGETS)}&limit=3`);
        assert.equal(answer.totalIsLowerBound, true, q);
        assert.deepEqual(
          answer.hits.map((m) => `${m.collection}/${m.name}`),
          ['zz/Widget', '/widget-0000', '/widget-0001'],
          `${q} on ${dialect}`,
        );
      }
    });

    it('closes reverted quarantines in one transaction: a failure leaves every one open', async () => {
      const mirror = serviceStoreOf(s.store).mirror;
      for (const template of ['acme/first', 'acme/boom']) {
        await run(
          s,
          `INSERT INTO quarantines (registry_id, template, version, first_digest, new_digest, changed_files, since)
           VALUES (${samples}, '${template}', 'v1', 'sha256:first', 'sha256:new', '[]', 1)`,
        );
      }
      // A fault in the second UPDATE, raised by the database itself.
      if (dialect === 'postgres') {
        await run(
          s,
          `CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; END; $$;
           CREATE TRIGGER boom BEFORE UPDATE ON quarantines FOR EACH ROW WHEN (NEW.template = 'acme/boom')
             EXECUTE FUNCTION boom();`,
        );
      } else {
        await run(
          s,
          `CREATE TRIGGER boom BEFORE UPDATE ON quarantines WHEN NEW.template = 'acme/boom'
             BEGIN SELECT RAISE(ABORT, 'boom'); END;`,
        );
      }
      const versions = ['acme/first', 'acme/boom'].map((template) => ({
        template,
        version: 'v1',
        digest: 'sha256:first',
      }));
      await assert.rejects(mirror.closeReverted(samples, versions, 2), /boom/);
      assert.deepEqual(await openQuarantines(s), ['acme/first', 'acme/boom'], `on ${dialect}`);
      await run(s, 'DROP TRIGGER boom' + (dialect === 'postgres' ? ' ON quarantines' : ''));
      assert.equal(await mirror.closeReverted(samples, versions, 3), 2);
      assert.deepEqual(await openQuarantines(s), []);
    });
  });

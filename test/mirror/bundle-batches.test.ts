/**
 * A bundle larger than one write batch (1,000 rows on PostgreSQL, store/postgres/add-versions.ts) imports into
 * each database with the same rows: every version with its files, each template's latest version
 * and search data from the newest version (on SQLite one full-text row per template), content
 * stored once; a second import changes nothing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { exportBundle, importBundle } from '../../server/src/mirror/bundle.js';
import { Catalog } from '../../server/src/resolve/catalog.js';
import type { AddedVersion } from '../../server/src/store/contract.js';
import { type StoreHandle, serviceStoreOf } from '../../server/src/store/open-store.js';
import { openPostgresStore } from '../../server/src/store/postgres/open.js';
import { addVersions } from '../../server/src/store/sqlite/add-versions.js';
import { openStore } from '../../server/src/store/sqlite/open.js';
import { jinjaVersion } from '../support/jinja-version.js';
import { DIALECTS, postgresDatabase } from './dialect.js';

const REGISTRY = 'bundle.example/acme/templates';
const COUNT = 1201;
const dir = mkdtempSync(join(tmpdir(), 'dm-bundle-batches-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** 1,201 versions of 3 templates; every version shares one file with all others (stored once). */
function generated(): { versions: AddedVersion[]; content: Map<string, Buffer> } {
  const content = new Map<string, Buffer>();
  const shared = Buffer.from('# shared by every version\n');
  const versions: AddedVersion[] = [];
  for (let i = 0; i < COUNT; i++) {
    const template = `t${i % 3}`;
    const version = `v1.${Math.floor(i / 3)}.0`;
    const body = Buffer.from(`resources: [] # ${i}\n`);
    const schema = Buffer.from(JSON.stringify({ info: { title: `${template} ${version}` } }));
    versions.push(
      jinjaVersion(
        template,
        version,
        { body, schema, more: [{ path: 'README.md', content: shared }] },
        content,
        schema.toString('utf8'),
      ),
    );
  }
  return { versions, content };
}

async function open(dialect: string): Promise<{ store: StoreHandle; close(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const store = openStore(join(dir, `${dialect}-${Date.now()}.db`));
    return { store, close: async () => store.close() };
  }
  const store = await openPostgresStore(await postgresDatabase(), { max: 2 });
  return { store, close: () => store.close() };
}

const { versions, content } = generated();
const source = openStore(join(dir, 'source.db'));
addVersions(
  source,
  { name: REGISTRY, sourceType: 'bundle', source: 'test', visibility: 'public', commit: null },
  versions,
  (sha) => content.get(sha),
);
const bundle = join(dir, 'batches.tgz');
await exportBundle(source, { out: bundle });
source.close();

describe('bundle import larger than a write batch', () => {
  for (const dialect of DIALECTS) {
    it(`writes every row on ${dialect}, and a second import changes nothing`, async () => {
      const { store, close } = await open(dialect);
      try {
        const first = await importBundle(store, bundle);
        assert.equal(first.added, COUNT);
        const again = await importBundle(store, bundle);
        assert.deepEqual([again.added, again.unchanged], [0, COUNT]);
        const data = serviceStoreOf(store);
        assert.equal((await data.mirror.versionsOf(REGISTRY)).length, COUNT);
        const templates = await data.mirror.templates();
        assert.deepEqual(
          templates.map((t) => [t.name, t.latestVersion, t.title]),
          [
            ['t0', 'v1.400.0', 't0 v1.400.0'],
            ['t1', 'v1.399.0', 't1 v1.399.0'],
            ['t2', 'v1.399.0', 't2 v1.399.0'],
          ],
        );
        if ('sqlite' in store) {
          // One search row per template, from its latest version (written once per template).
          const fts = store.sqlite.prepare('SELECT name, title FROM templates_fts ORDER BY name').all() as {
            name: string;
            title: string;
          }[];
          assert.deepEqual(
            fts.map((r) => [r.name, r.title]),
            [
              ['t0', 't0 v1.400.0'],
              ['t1', 't1 v1.399.0'],
              ['t2', 't2 v1.399.0'],
            ],
          );
        }
        assert.deepEqual(await data.mirror.missingContent([...content.keys()]), []);
        const last = versions.at(-1)!;
        const row = await data.mirror.bundleVersion(
          { registry: REGISTRY, collection: '', template: last.template, version: last.version },
          last.digest,
        );
        assert.equal(row?.schemaJson, last.schemaJson);
        // A version of the second batch resolves with its own files.
        const resolved = await new Catalog(data.catalog).resolve(
          `${REGISTRY}/${last.template}:=${last.version}`,
          {
            canRead: () => true,
          },
        );
        assert.equal(resolved.digest, last.digest);
        assert.deepEqual(
          resolved.files.map((f) => [f.path, f.sha256, f.size]).sort(),
          last.files.map((f) => [f.path, f.sha256, f.size]).sort(),
        );
      } finally {
        await close();
      }
    });
  }
});

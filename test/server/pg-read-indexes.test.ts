/**
 * The indexes of the reads that step or page through one registry's templates on PostgreSQL
 * (migrations/postgres/0012_registry-order-indexes.sql; docs/server.md "Reads, written once"): the
 * search's stepped load of a registry's rows (`registry_id = $1 AND id > $2 ORDER BY id`,
 * postgres/search.ts) and a registry page's templates in byte order (read-queries.ts
 * `templatesPage`) each read an index in its order, on a database holding several registries.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openPostgresStore, type PostgresStore } from '../../server/src/store/postgres/open.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';

const REGISTRIES = 10;
const PER_REGISTRY = 3000;
/** The registry whose rows are read: the last one's. */
const LAST = `github.com/acme/r${REGISTRIES}`;

/** The index names and node types of a plan (EXPLAIN's JSON), depth first. */
function nodes(plan: Record<string, unknown>): string[] {
  const here = `${plan['Node Type']}${plan['Index Name'] ? ` using ${plan['Index Name']}` : ''}`;
  const children = (plan.Plans as Record<string, unknown>[] | undefined) ?? [];
  return [here, ...children.flatMap(nodes)];
}

if (postgresBinaries()) {
  describe("PostgreSQL: the indexes of a registry's stepped and paged reads", () => {
    let cluster: PostgresCluster;
    let store: PostgresStore;

    before(async () => {
      cluster = await startPostgres();
      store = await openPostgresStore(await cluster.createDatabase('read_indexes'), { max: 2 });
      await store.pool.query(
        `INSERT INTO registries (name, source_type, source, visibility, created_at)
         SELECT 'github.com/acme/r' || g, 'directory', '/nowhere/' || g, 'public', 0 FROM generate_series(1, $1) g`,
        [REGISTRIES],
      );
      // Each registry's rows in one block of ids, as its swap writes them: read in id order, the last
      // registry's first step would pass every other registry's rows (9.3 ms against 0.34 ms here).
      await store.pool.query(
        `INSERT INTO templates (registry_id, collection, name)
         SELECT r.id, CASE WHEN g % 3 = 0 THEN 'c' ELSE '' END, 't' || g
         FROM registries r CROSS JOIN generate_series(1, $1) g ORDER BY r.id, g`,
        [PER_REGISTRY],
      );
      await store.pool.query('ANALYZE templates');
    });
    after(async () => {
      await store?.close();
      cluster?.stop();
    });

    const plan = async (sql: string, values: unknown[]) => {
      const { rows } = await store.pool.query<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>({
        text: `EXPLAIN (FORMAT JSON) ${sql}`,
        values,
      });
      return nodes(rows[0]!['QUERY PLAN'][0].Plan);
    };

    it('the stepped load reads templates_registry_id_idx, in id order, without sorting', async () => {
      const { rows } = await store.pool.query<{ id: number }>('SELECT id FROM registries WHERE name = $1', [
        LAST,
      ]);
      const found = await plan(
        'SELECT id, name FROM templates WHERE registry_id = $1 AND id > $2 ORDER BY id LIMIT 1000',
        [rows[0]!.id, 0],
      );
      assert.ok(
        found.some((n) => n.endsWith('using templates_registry_id_idx')),
        found.join(' > '),
      );
      assert.ok(!found.includes('Sort'), found.join(' > '));
    });

    it('a page of templates in byte order reads templates_registry_order_idx, without sorting', async () => {
      const { rows } = await store.pool.query<{ id: number }>('SELECT id FROM registries WHERE name = $1', [
        LAST,
      ]);
      const found = await plan(
        `SELECT collection, name FROM templates WHERE registry_id = $1
         ORDER BY collection COLLATE "C", name COLLATE "C" LIMIT $2 OFFSET $3`,
        [rows[0]!.id, 100, 200],
      );
      assert.ok(
        found.some((n) => n.endsWith('using templates_registry_order_idx')),
        found.join(' > '),
      );
      assert.ok(!found.includes('Sort'), found.join(' > '));
    });
  });
}

/**
 * The PostgreSQL store (docs/server.md, "Store") on a private cluster (test/support/postgres.ts):
 * `dm-registry migrate --db postgres://…` applies migrations/postgres/ once, replicas migrating
 * together apply them once, the two dialects' schemas have the same tables and columns, and the
 * generated search vector indexes identifiers both whole and split. Registered where PostgreSQL
 * is installed (always in CI).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { openStateDatabase } from '../../client/src/state/database.js';
import { findPostgresMigrations, openPostgresStore } from '../../server/src/store/postgres/open.js';
import { openStore } from '../../server/src/store/sqlite/open.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';
import { FIXTURES, tempDir } from './helpers.js';
import { startRegistry } from './hostile/process.js';

const BIN = join(process.cwd(), 'bin', 'dm-registry.js');

function journalLength(): number {
  const journal = JSON.parse(
    readFileSync(join(findPostgresMigrations(), 'meta', '_journal.json'), 'utf8'),
  ) as {
    entries: unknown[];
  };
  return journal.entries.length;
}

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

if (postgresBinaries()) {
  describe('PostgreSQL store', () => {
    let cluster: PostgresCluster;
    before(async () => {
      cluster = await startPostgres();
    });
    after(() => cluster.stop());

    it('dm-registry migrate --db postgres://… applies the migrations once and says where', async () => {
      const url = await cluster.createDatabase('cli_migrate');
      const withPassword = url.replace('postgres@', 'postgres:not-shown@');
      for (let i = 0; i < 2; i++) {
        const run = spawnSync(process.execPath, [BIN, 'migrate', '--db', withPassword], { encoding: 'utf8' });
        assert.equal(run.status, 0, run.stderr);
        assert.match(run.stdout, /^migrations applied to postgres:\/\/postgres@localhost/);
        assert.ok(!run.stdout.includes('not-shown'));
      }
      const applied = await query<{ n: string }>(
        url,
        'SELECT count(*) AS n FROM drizzle.__drizzle_migrations',
      );
      assert.equal(Number(applied[0]?.n), journalLength());
      const ext = await query<{ extname: string }>(
        url,
        "SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'",
      );
      assert.equal(ext.length, 1);
    });

    it('replicas opening a fresh database together apply each migration once', async () => {
      const url = await cluster.createDatabase('concurrent_migrate');
      const stores = await Promise.all([1, 2, 3, 4].map(() => openPostgresStore(url, { max: 2 })));
      await Promise.all(stores.map((s) => s.close()));
      const applied = await query<{ hash: string }>(url, 'SELECT hash FROM drizzle.__drizzle_migrations');
      assert.equal(applied.length, journalLength());
      assert.equal(new Set(applied.map((r) => r.hash)).size, applied.length);
    });

    it('an unreachable database is a clear error without the password', async () => {
      const run = spawnSync(
        process.execPath,
        [BIN, 'migrate', '--db', `postgres://postgres:hidden@localhost:1/nothing?host=${cluster.dir}/none`],
        { encoding: 'utf8' },
      );
      assert.equal(run.status, 5, run.stderr);
      assert.match(
        run.stderr,
        /^dm-registry: cannot reach the database postgres:\/\/postgres@localhost:1\/nothing/,
      );
      assert.ok(!run.stderr.includes('hidden'));
      assert.ok(!/\n\s+at /.test(run.stderr));
    });

    it('dm-registry index, token, bundle export and start run on PostgreSQL', async () => {
      const url = await cluster.createDatabase('cli_serve');
      const dir = tempDir();
      const env = { ...process.env, DM_REGISTRY_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') };
      try {
        const index = spawnSync(process.execPath, [BIN, 'index', FIXTURES, '--db', url], {
          encoding: 'utf8',
          env,
          cwd: dir,
        });
        assert.equal(index.status, 0, index.stderr);
        assert.match(index.stdout, /: succeeded; indexed \d+ templates, \d+ versions from directory /);
        const token = spawnSync(process.execPath, [BIN, 'token', 'create', '--admin', '--db', url], {
          encoding: 'utf8',
          env,
          cwd: dir,
        });
        assert.equal(token.status, 0, token.stderr);
        const admin = token.stdout.trim();
        assert.match(admin, /^dmr_/);
        const list = spawnSync(process.execPath, [BIN, 'token', 'list', '--db', url], {
          encoding: 'utf8',
          env,
          cwd: dir,
        });
        assert.equal(list.status, 0, list.stderr);
        assert.match(list.stdout, /^1\tadmin\t/);
        const bundle = spawnSync(process.execPath, [BIN, 'bundle', 'export', '--out', 'b.tgz', '--db', url], {
          encoding: 'utf8',
          env,
          cwd: dir,
        });
        assert.equal(bundle.status, 0, bundle.stderr);
        assert.ok(statSync(join(dir, 'b.tgz')).size > 0, 'the bundle was written');

        const server = await startRegistry([], { db: url, dir: join(dir, 'serve'), cwd: dir, env });
        try {
          const base = server.url;
          const ready = await fetch(`${base}/readyz`);
          assert.equal(ready.status, 200);
          const resolved = await fetch(
            `${base}/api/v1/resolve?ref=github.com/dm-samples/templates/redis:v1.0`,
          );
          assert.equal(resolved.status, 200);
          assert.equal(((await resolved.json()) as { version: string }).version, 'v1.0.3');
          // The token created by the CLI is read from the database.
          const syncs = await fetch(`${base}/api/v1/registries/1/syncs`, {
            headers: { authorization: `Bearer ${admin}` },
          });
          assert.equal(syncs.status, 200);
          const history = (await syncs.json()) as { syncs: { trigger: string; status: string }[] };
          assert.deepEqual(
            history.syncs.map((x) => [x.trigger, x.status]),
            [['cli', 'succeeded']],
          );
          assert.equal(await server.stop(), 0);
          assert.match(server.log(), /"db":"postgres:\/\/postgres@localhost/);
        } finally {
          server.dispose();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('has the same tables and columns as the SQLite schema (besides each one’s search)', async () => {
      const url = await cluster.createDatabase('parity');
      const store = await openPostgresStore(url, { max: 1 });
      await store.close();
      const pgColumns = await query<{ t: string; c: string }>(
        url,
        "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = 'public'",
      );
      const dir = tempDir();
      try {
        const sqlite = openStore(join(dir, 'r.db'));
        const tables = sqlite.sqlite
          .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'templates_fts%' AND name NOT LIKE '\\_\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%'",
          )
          .pluck()
          .all() as string[];
        const sqliteColumns = tables.flatMap((t) =>
          (sqlite.sqlite.prepare(`PRAGMA table_info(${t})`).all() as { name: string }[]).map(
            (c) => `${t}.${c.name}`,
          ),
        );
        sqlite.close();
        // The Deployment Manager's tables: the client's deployments database on SQLite (docs/manager.md).
        const state = openStateDatabase(join(dir, 'manager.db'));
        const stateTables = [
          'deployments',
          'manifests',
          'manifest_resources',
          'type_instances',
          'operations',
          'manager_tokens',
        ];
        for (const t of stateTables) {
          for (const c of state.db.all<{ name: string }>(sql.raw(`PRAGMA table_info(${t})`))) {
            sqliteColumns.push(`${t}.${c.name}`);
          }
        }
        await state.close();
        // PostgreSQL's own: its search columns and the replicas' sync and deployment leases.
        const pgOnly = new Set(['templates.properties', 'templates.search']);
        assert.deepEqual(
          pgColumns
            .map((r) => `${r.t}.${r.c}`)
            .filter(
              (c) => !pgOnly.has(c) && !c.startsWith('sync_leases.') && !c.startsWith('deployment_leases.'),
            )
            .sort(),
          sqliteColumns.sort(),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('the search vector weighs the name A, title B, properties and collection C, identifiers whole and split', async () => {
      const url = await cluster.createDatabase('vector');
      const store = await openPostgresStore(url, { max: 1 });
      try {
        const r = await store.pool.query<{ id: number }>(
          "INSERT INTO registries (name, source_type, source, created_at) VALUES ('github.com/a/b', 'directory', '/x', 0) RETURNING id",
        );
        await store.pool.query(
          `INSERT INTO templates (registry_id, collection, name, title, description, properties)
           VALUES ($1, 'data-stores', 'redis-cluster', 'Sharded cache', 'In memory.', 'max_memory replicas')`,
          [r.rows[0]?.id],
        );
        const hit = async (q: string) =>
          (
            await store.pool.query<{ w: string }>(
              `SELECT ts_rank(search, to_tsquery('simple', $1))::text AS w FROM templates WHERE search @@ to_tsquery('simple', $1)`,
              [q],
            )
          ).rows.length;
        for (const q of [
          'redis',
          'cluster',
          "'redis-cluster'",
          'sharded',
          'memory',
          'max',
          'max_memory',
          'stores',
          'data',
        ])
          assert.equal(await hit(q), 1, q);
        assert.equal(await hit('postgres'), 0);
        const weights = await store.pool.query<{ a: number; c: number }>(
          `SELECT ts_rank(search, to_tsquery('simple', 'redis')) AS a, ts_rank(search, to_tsquery('simple', 'replicas')) AS c FROM templates`,
        );
        assert.ok((weights.rows[0]?.a ?? 0) > (weights.rows[0]?.c ?? 1));
      } finally {
        await store.close();
      }
    });
  });
} else {
  process.stdout.write('# PostgreSQL is not installed here: the PostgreSQL store tests are not run\n');
}

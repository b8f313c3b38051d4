/**
 * The common CRUD, written once (server/src/store/crud.ts; docs/server.md "The store"): registries,
 * credentials, tokens and syncs answer alike on both databases (PostgreSQL on a real locale), and
 * every write of several statements is one transaction, faults raised by the database itself.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RegistryRow, ServiceStore } from '../../server/src/store/contract.js';
import { isPostgres, serviceStoreOf } from '../../server/src/store/open-store.js';
import { DIALECTS, type DialectTestServer, testServerOn } from './helpers.js';

async function run(s: DialectTestServer, sql: string): Promise<void> {
  if (isPostgres(s.store)) await s.store.pool.query(sql);
  else s.store.sqlite.exec(sql);
}

async function count(s: DialectTestServer, sql: string): Promise<number> {
  const row = isPostgres(s.store)
    ? (await s.store.pool.query(sql)).rows[0]
    : (s.store.sqlite.prepare(sql).get() as { n: number });
  return Number(row.n);
}

/** A trigger raising `boom` before `event` on `table` (each dialect's syntax; the fault is the database's). */
async function boom(s: DialectTestServer, event: string, table: string): Promise<() => Promise<void>> {
  if (isPostgres(s.store)) {
    await run(
      s,
      `CREATE OR REPLACE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; END; $$;
       CREATE TRIGGER boom BEFORE ${event} ON ${table} FOR EACH ROW EXECUTE FUNCTION boom();`,
    );
    return () => run(s, `DROP TRIGGER boom ON ${table}`);
  }
  await run(s, `CREATE TRIGGER boom BEFORE ${event} ON ${table} BEGIN SELECT RAISE(ABORT, 'boom'); END;`);
  return () => run(s, 'DROP TRIGGER boom');
}

const answers = new Map<string, unknown>();

for (const dialect of DIALECTS)
  describe(`the common CRUD (${dialect})`, () => {
    let s: DialectTestServer;
    let store: ServiceStore;

    before(async () => {
      s = await testServerOn(dialect);
      store = serviceStoreOf(s.store);
    });
    after(async () => {
      await s?.close();
    });

    it('lists registries in byte order and answers their rows alike on both', async () => {
      for (const name of [
        'b.example/x/y',
        'B.example/x/y',
        'a.example/x/y',
        '_.example/x/y',
        'a.example/x-y/z',
      ]) {
        await store.registries.insert({
          name,
          sourceType: 'git',
          source: `/src/${name}`,
          createdAt: 1_700_000_000_000,
        });
      }
      const list = await store.registries.list();
      assert.deepEqual(
        list.map((r) => r.name),
        ['B.example/x/y', '_.example/x/y', 'a.example/x-y/z', 'a.example/x/y', 'b.example/x/y'],
      );
      const first = list[0]!;
      assert.equal(typeof first.createdAt, 'number');
      assert.equal(first.lastSyncAt, null);
      const moved = await store.registries.updateSource(first.id, {
        sourceType: 'github',
        source: 'acme/templates',
        branch: 'main',
        path: 'deploy',
        intervalSeconds: 600,
      });
      assert.equal(moved?.etag, null);
      assert.equal(moved?.intervalSeconds, 600);
      assert.deepEqual(await store.registries.byName(first.name), moved);
      assert.deepEqual(await store.registries.byId(first.id), moved);
      assert.equal(await store.registries.byId(999_999), undefined);
      const shape = ({ id: _, ...r }: RegistryRow) => r;
      const answer = { list: list.map(shape), moved: shape(moved!) };
      if (answers.has('registries')) assert.deepEqual(answer, answers.get('registries'), `on ${dialect}`);
      else answers.set('registries', answer);
    });

    it('keeps credentials and tokens alike: upsert, fingerprint, last use only forwards', async () => {
      await store.credentials.upsert('gh', 'github-token', 'enc:1', 10);
      await store.credentials.upsert('gh', 'github-app', 'enc:2', 20);
      assert.equal(await store.credentials.secret('gh'), 'enc:2');
      assert.equal(await store.credentials.secret('none'), undefined);
      const before = await store.tokens.fingerprint();
      const id = await store.tokens.insert({
        hash: 'h1',
        role: 'read',
        registryId: null,
        organisations: 'acme',
        createdAt: 5,
        expiresAt: 2_000_000_000_000,
      });
      const second = await store.tokens.insert({
        hash: 'h2',
        role: 'admin',
        registryId: null,
        organisations: null,
        createdAt: 6,
        expiresAt: null,
      });
      assert.notEqual(await store.tokens.fingerprint(), before);
      await store.tokens.recordUsed(
        new Map([
          [id, 100],
          [second, 50],
        ]),
      );
      await store.tokens.recordUsed(new Map([[id, 90]]));
      const tokens = await store.tokens.all();
      assert.deepEqual(
        tokens.map((t) => [t.hash, t.role, t.organisations, t.createdAt, t.expiresAt, t.lastUsedAt]),
        [
          ['h1', 'read', 'acme', 5, 2_000_000_000_000, 100],
          ['h2', 'admin', null, 6, null, 50],
        ],
      );
      assert.equal(await store.tokens.delete({ hash: 'h2' }), true);
      assert.equal(await store.tokens.delete({ id: second }), false);
      assert.match(await store.tokens.fingerprint(), /^1:\d+:\d+$/);
    });

    it('records a sync from start to finish, keeping the last syncs, alike on both', async () => {
      const registry = (await store.registries.byName('a.example/x/y'))!;
      const ids: number[] = [];
      for (let i = 0; i < 4; i++) {
        const id = await store.syncs.start(registry.id, 'manual', 1000 + i, 'replica-1');
        assert.equal((await store.registries.byId(registry.id))?.lastSyncStatus, 'running');
        await store.syncs.finish(
          id,
          registry.id,
          { status: 'succeeded', finishedAt: 2000 + i, apiRequests: i },
          3,
        );
        ids.push(id);
      }
      await store.syncs.setRegistryState(registry.id, {
        lastSyncStatus: 'succeeded',
        lastSyncAt: 2003,
        commit: 'abc',
      });
      const row = (await store.registries.byId(registry.id))!;
      assert.deepEqual([row.lastSyncStatus, row.lastSyncAt, row.commit], ['succeeded', 2003, 'abc']);
      assert.deepEqual(await store.syncs.latest(registry.id), { apiRequests: 3, rateLimitRemaining: null });
      const history = await s.service.data.reads.syncs(registry.id);
      assert.deepEqual(
        history.map((h) => h.id),
        ids.slice(1).reverse(),
      );
      const running = await store.syncs.start(registry.id, 'schedule', 3000, 'replica-1');
      assert.equal(await store.syncs.interruptRunning(registry.id, 3001), 1);
      assert.equal(await store.syncs.recoverInterrupted(3002), 0);
      const [last] = await s.service.data.reads.syncs(registry.id);
      assert.deepEqual([last!.id, last!.status, last!.finishedAt], [running, 'interrupted', 3001]);
    });

    it('starts a sync in one transaction: a fault in the registry update leaves no running sync', async () => {
      const registry = (await store.registries.byName('b.example/x/y'))!;
      const drop = await boom(s, 'UPDATE', 'registries');
      await assert.rejects(store.syncs.start(registry.id, 'manual', 1, 'r'), /boom/);
      await drop();
      assert.equal(await count(s, `SELECT count(*) AS n FROM syncs WHERE registry_id = ${registry.id}`), 0);
      assert.equal((await store.registries.byId(registry.id))?.lastSyncStatus, 'never');
    });

    it('deletes a registry and the content nothing references in one transaction', async () => {
      const registry = (await store.registries.byName('_.example/x/y'))!;
      await run(
        s,
        `INSERT INTO files (sha256, git_sha, size, content) VALUES ('orphan', 'g-orphan', 1, ${
          isPostgres(s.store) ? "'\\x41'::bytea" : "x'41'"
        })`,
      );
      const drop = await boom(s, 'DELETE', 'files');
      await assert.rejects(store.registries.delete(registry.id), /boom/);
      await drop();
      assert.equal((await store.registries.byId(registry.id))?.name, '_.example/x/y', `kept on ${dialect}`);
      assert.equal((await store.registries.delete(registry.id))?.name, '_.example/x/y');
      assert.equal(await store.registries.byId(registry.id), undefined);
      assert.equal(await count(s, "SELECT count(*) AS n FROM files WHERE sha256 = 'orphan'"), 0);
      assert.equal(await store.syncs.countFiles(), 0);
      assert.equal(await store.registries.delete(registry.id), undefined);
    });
  });

describe('the common CRUD is written once', () => {
  it('no file of the dialect folders writes credentials, tokens or syncs (crud.ts does, for both)', () => {
    const writes =
      /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(credentials|tokens|syncs)\b|\.(insert|update|delete)\((credentials|tokens|syncs)\)/i;
    const found: string[] = [];
    for (const dialect of ['sqlite', 'postgres']) {
      const dir = join(process.cwd(), 'server', 'src', 'store', dialect);
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
        const text = readFileSync(join(dir, file), 'utf8');
        const m = writes.exec(text);
        if (m) found.push(`${dialect}/${file}: ${m[0]}`);
      }
    }
    assert.deepEqual(found, []);
  });
});

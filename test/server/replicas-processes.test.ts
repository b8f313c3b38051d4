/**
 * Three real `dm-registry start` processes on one PostgreSQL cluster (docs/server.md, "Several
 * replicas"): 100 concurrent sync triggers across them run one sync per registry at a time (the
 * sync history proves it); the replica holding a sync is killed with SIGKILL and another replica
 * completes the next sync; a reader loop on every replica during all of it only ever sees the old
 * index or the new one; and the new index is answered by the other replicas within a second of the
 * sync's answer. Registered where PostgreSQL is installed (always in CI).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';
import { FIXTURES, tempDir } from './helpers.js';
import { ADMIN, type RegistryProcess as Replica, startRegistry } from './hostile/process.js';

const BIN = join(process.cwd(), 'bin', 'dm-registry.js');
const BIG = 'github.com/acme/big';
const SMALL = 'github.com/acme/small';
const TEMPLATES = 400;
const VERSIONS = 3;
/** References the reader loop asks, spread over the registry (the swap writes templates in order). */
const REFS = [
  't0000:v1',
  `t${String(TEMPLATES / 2).padStart(4, '0')}:v1.1`,
  `t${String(TEMPLATES - 1).padStart(4, '0')}:v1`,
].map((r) => `${BIG}/${r}`);

/** A registry of TEMPLATES × VERSIONS versions; `variant` changes every file (every digest). */
function generate(dir: string, variant: string): void {
  writeFileSync(join(dir, 'registry.yaml'), `name: ${BIG}\n`);
  for (let t = 0; t < TEMPLATES; t++) {
    const name = `t${String(t).padStart(4, '0')}`;
    for (let v = 0; v < VERSIONS; v++) {
      const vdir = join(dir, name, `v1.${v}`);
      mkdirSync(vdir, { recursive: true });
      writeFileSync(
        join(vdir, `${name}.jinja`),
        `resources:\n- name: {{ env["name"] }}-${variant}-${v}\n  type: t\n`,
      );
      writeFileSync(
        join(vdir, `${name}.jinja.schema`),
        `info:\n  title: Template ${name}\nproperties:\n  size: {type: integer}\n`,
      );
    }
  }
}

interface SyncAnswer {
  syncId: number | null;
  status: string;
}

interface HistoryRow {
  id: number;
  status: string;
  startedAt: string;
  finishedAt: string | null;
  replica: string | null;
}

if (postgresBinaries()) {
  describe('three dm-registry processes on one PostgreSQL', () => {
    let cluster: PostgresCluster;
    let db: string;
    let dir: string;
    let client: pg.Client;
    const replicas: Replica[] = [];
    const ids = new Map<string, number>();
    const env: Record<string, string> = {
      DM_REGISTRY_SECRET_KEY: Buffer.alloc(32, 3).toString('base64'),
      DM_REGISTRY_SYNC_LEASE_TTL_MS: '6000',
    };
    const headers = { authorization: `Bearer ${ADMIN}` };

    const cli = (args: string[]) => {
      const run = spawnSync(process.execPath, [BIN, ...args, '--db', db], {
        encoding: 'utf8',
        cwd: dir,
        env: { ...process.env, ...env },
      });
      assert.equal(run.status, 0, `${args.join(' ')}: ${run.stderr}`);
      return run.stdout;
    };
    const trigger = async (replica: Replica, registry: string, wait = true): Promise<SyncAnswer> => {
      const res = await fetch(
        `${replica.url}/api/v1/registries/${ids.get(registry)}/sync${wait ? '' : '?wait=false'}`,
        { method: 'POST', headers },
      );
      assert.equal(res.status, wait ? 200 : 202);
      return (await res.json()) as SyncAnswer;
    };
    const history = async (replica: Replica, registry: string): Promise<HistoryRow[]> => {
      const res = await fetch(`${replica.url}/api/v1/registries/${ids.get(registry)}/syncs`, { headers });
      assert.equal(res.status, 200);
      return ((await res.json()) as { syncs: HistoryRow[] }).syncs;
    };
    const resolveBody = async (replica: Replica, ref: string): Promise<string> => {
      const res = await fetch(`${replica.url}/api/v1/resolve?ref=${encodeURIComponent(ref)}`);
      return `${res.status} ${await res.text()}`;
    };
    const answers = async (replica: Replica) => Promise.all(REFS.map((r) => resolveBody(replica, r)));

    before(async () => {
      cluster = await startPostgres();
      db = await cluster.createDatabase('replicas_processes');
      dir = tempDir('dm-replicas-');
      for (const variant of ['a', 'b']) {
        mkdirSync(join(dir, variant));
        generate(join(dir, variant), variant);
      }
      symlinkSync(join(dir, 'a'), join(dir, 'source'));
      cpSync(FIXTURES, join(dir, 'small'), { recursive: true });
      cli(['migrate']);
      cli(['index', `${join(dir, 'source')}=${BIG}`]);
      cli(['index', `${join(dir, 'small')}=${SMALL}`]);
      for (let i = 0; i < 3; i++) {
        const home = join(dir, `replica-${i}`);
        mkdirSync(home);
        replicas.push(await startRegistry([], { db, dir: home, cwd: home, env }));
      }
      const list = (await (await fetch(`${replicas[0]!.url}/api/v1/registries`, { headers })).json()) as {
        registries: { id: number; name: string }[];
      };
      for (const r of list.registries) ids.set(r.name, r.id);
      assert.deepEqual([...ids.keys()].sort(), [BIG, SMALL]);
      client = new pg.Client({ connectionString: db });
      await client.connect();
    });
    after(async () => {
      await client?.end();
      for (const r of replicas) r.child.kill('SIGKILL');
      await Promise.all(replicas.map((r) => r.exit));
      cluster?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('100 concurrent sync triggers across three replicas: one sync per registry at a time', async () => {
      const before = new Map<string, number>();
      for (const name of ids.keys()) before.set(name, (await history(replicas[0]!, name))[0]!.id);
      const answered = await Promise.all(
        Array.from({ length: 100 }, (_, i) => trigger(replicas[i % 3]!, i % 2 === 0 ? BIG : SMALL)),
      );
      for (const a of answered)
        assert.ok(['succeeded', 'unchanged', 'coalesced'].includes(a.status), a.status);
      for (const name of ids.keys()) {
        const rows = (await history(replicas[1]!, name)).filter((r) => r.id > before.get(name)!).reverse();
        assert.ok(rows.length >= 1 && rows.length <= 50, `${name}: ${rows.length} syncs for 50 triggers`);
        for (const r of rows) {
          assert.ok(r.finishedAt !== null && r.status !== 'running', `${name}: sync ${r.id} is ${r.status}`);
        }
        for (let i = 1; i < rows.length; i++) {
          assert.ok(
            Date.parse(rows[i]!.startedAt) >= Date.parse(rows[i - 1]!.finishedAt!),
            `${name}: sync ${rows[i]!.id} (${rows[i]!.replica}) started before sync ${rows[i - 1]!.id} (${rows[i - 1]!.replica}) finished`,
          );
        }
      }
      // Every trigger's answer names a sync of the history or says another replica covered it.
      const coalesced = answered.filter((a) => a.status === 'coalesced').length;
      const ran = new Set(answered.filter((a) => a.syncId !== null).map((a) => a.syncId));
      assert.equal(coalesced + answered.filter((a) => a.syncId !== null).length, 100);
      assert.ok(ran.size >= 2);
      assert.equal((await client.query('SELECT * FROM sync_leases')).rowCount, 0, 'every lease released');
    });

    it('kill -9 of the replica holding a sync: another completes the next one; readers never see a partial index; the others answer the new index within 1 s', async () => {
      const old = await answers(replicas[0]!);
      for (const r of replicas.slice(1)) assert.deepEqual(await answers(r), old);
      for (const body of old) assert.match(body, /^200 /);

      // Readers on every replica, all through what follows.
      const seen: string[][] = [];
      let reading = true;
      const readers = replicas.map(async (replica) => {
        while (reading) {
          try {
            seen.push(await answers(replica));
          } catch {
            // The killed replica no longer answers.
            await new Promise((r) => setTimeout(r, 50));
          }
        }
      });

      // The source changes; a sync starts on replica 0 and whoever holds it is killed mid-sync.
      symlinkSync(join(dir, 'b'), join(dir, 'source.next'));
      renameSync(join(dir, 'source.next'), join(dir, 'source'));
      const started = await trigger(replicas[0]!, BIG, false);
      assert.equal(started.status, 'queued');
      let holder: Replica | undefined;
      let runningId: number | undefined;
      for (let i = 0; i < 2000 && !holder; i++) {
        const running = await client.query<{ id: number; replica: string }>(
          "SELECT id, replica FROM syncs WHERE registry_id = $1 AND status = 'running'",
          [ids.get(BIG)],
        );
        const row = running.rows[0];
        if (row) {
          holder = replicas.find((r) => row.replica.endsWith(`:${r.child.pid}`));
          runningId = row.id;
        } else await new Promise((r) => setTimeout(r, 5));
      }
      assert.ok(holder, 'a replica took the sync');
      holder.child.kill('SIGKILL');
      assert.equal(await holder.exit, 'SIGKILL');
      const alive = replicas.filter((r) => r !== holder);

      // The next sync, from the survivors, once the killed holder's lease has expired.
      let done: SyncAnswer | undefined;
      let by: Replica | undefined;
      for (let i = 0; i < 200 && done?.status !== 'succeeded'; i++) {
        by = alive[i % alive.length]!;
        done = await trigger(by, BIG);
        if (done.status !== 'succeeded') await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(done?.status, 'succeeded');
      const syncedAt = Date.now();
      const fresh = await answers(by!);
      assert.notDeepEqual(fresh, old);
      for (const body of fresh) assert.match(body, /^200 /);
      // The other survivor answers the new index within a second of the sync's answer.
      const other = alive.find((r) => r !== by)!;
      let caughtUp: number | undefined;
      while (caughtUp === undefined && Date.now() - syncedAt < 10_000) {
        if (JSON.stringify(await answers(other)) === JSON.stringify(fresh)) caughtUp = Date.now() - syncedAt;
      }
      assert.ok(
        caughtUp !== undefined && caughtUp <= 1000,
        `the other replica caught up after ${caughtUp} ms`,
      );

      reading = false;
      await Promise.all(readers);
      // Each answer is the reference's answer in the old index or in the new one. (Answers to
      // different references may come from different indexes for up to the generation watch's
      // interval: one cached before the swap, another computed after its COMMIT.)
      const partial = seen.flatMap((answersOfRound) =>
        answersOfRound.filter((body, i) => body !== old[i] && body !== fresh[i]),
      );
      assert.deepEqual(partial, [], 'every answer is the old index or the new one');
      assert.ok(seen.some((s) => JSON.stringify(s) === JSON.stringify(old)));

      // The history: the killed sync interrupted, the next one by a survivor.
      const rows = await history(by!, BIG);
      assert.equal(rows.find((r) => r.id === runningId)?.status, 'interrupted');
      assert.equal(rows[0]!.status, 'succeeded');
      assert.ok(!rows[0]!.replica!.endsWith(`:${holder.child.pid}`));
    });
  });
}

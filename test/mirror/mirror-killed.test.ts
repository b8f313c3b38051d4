/**
 * A mirror killed (SIGKILL) during pull-throughs (docs/mirroring.md): a batch of unseen versions is
 * being pulled through, one version's archive held by the fault proxy, when the mirror is killed.
 * After the kill the database is consistent and every version it holds is whole (its files stored,
 * its digest recomputed from them); the held version is absent. Restarted on the same database, the
 * mirror pulls it through and serves the origin's bytes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { versionDigest } from '../../client/src/registry/digest.js';
import { openStore } from '../../server/src/store/sqlite/open.js';
import { tempDir } from '../server/helpers.js';
import { type RegistryProcess, startRegistry } from '../server/hostile/process.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { type RunningRegistry, startRegistry as startOrigin } from '../support/registry-server.js';
import { DIALECTS, postgresDatabase } from './dialect.js';

const NAME = 'github.com/dm-samples/templates';
const HELD = `/api/v1/templates/${NAME}/redis/versions/v1.0.3/archive.tar.gz`;
const REFS = [
  `${NAME}/redis:=v1.0.3`,
  `${NAME}/hpa:=v1`,
  `${NAME}/secret:=v1`,
  `${NAME}/configmap:=v1`,
  `${NAME}/namespace:=v1`,
  `${NAME}/cron-job:=v1`,
  `${NAME}/postgres:v1`,
  `${NAME}/web-app:v1.1`,
];
let origin: RunningRegistry;
let proxy: FaultProxy;

before(async () => {
  origin = await startOrigin(['registry-fixtures']);
  proxy = await startFaultProxy(origin.url);
});

after(async () => {
  await proxy?.close();
  await origin?.stop();
});

/** Rows of `sql` in the mirror's database: an SQLite file or a PostgreSQL URL. */
async function rowsOf<T>(db: string, sql: string): Promise<T[]> {
  if (!db.startsWith('postgres')) {
    const store = openStore(db);
    try {
      assert.equal(store.sqlite.pragma('integrity_check', { simple: true }), 'ok');
      assert.deepEqual(store.sqlite.pragma('foreign_key_check'), []);
      return store.sqlite.prepare(sql).all() as T[];
    } finally {
      store.close();
    }
  }
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Every stored version is whole: its files' content is stored and its digest recomputes. */
async function checkStore(db: string): Promise<{ versions: string[] }> {
  const versions = await rowsOf<{ id: number; template: string; version: string; digest: string }>(
    db,
    'SELECT v.id, t.name AS template, v.version, v.digest FROM versions v JOIN templates t ON t.id = v.template_id',
  );
  const files = await rowsOf<{ versionId: number; path: string; sha256: string; stored: string | null }>(
    db,
    `SELECT vf.version_id AS "versionId", vf.path, vf.sha256, f.sha256 AS stored
     FROM version_files vf LEFT JOIN files f ON f.sha256 = vf.sha256`,
  );
  for (const v of versions) {
    const rows = files.filter((f) => f.versionId === v.id);
    assert.ok(rows.length > 0, `${v.template} ${v.version} has files`);
    for (const r of rows)
      assert.equal(r.stored, r.sha256, `${v.template} ${v.version} ${r.path} content stored`);
    assert.equal(versionDigest(rows), v.digest, `${v.template} ${v.version} digest`);
  }
  const counts = await rowsOf<{ name: string; n: number; actual: number | string }>(
    db,
    'SELECT r.name, r.version_count AS n, (SELECT count(*) FROM versions v WHERE v.registry_id = r.id) AS actual FROM registries r',
  );
  for (const c of counts) assert.equal(Number(c.n), Number(c.actual), `${c.name} counts`);
  return { versions: versions.map((v) => `${v.template} ${v.version}`) };
}

for (const dialect of DIALECTS) {
  describe(`a mirror killed during a pull-through on ${dialect}`, () => {
    it('leaves a consistent store, each version whole or absent, and pulls the rest after a restart', async () => {
      const dir = tempDir('dm-mirror-killed-');
      const db = dialect === 'sqlite' ? `${dir}/r.db` : await postgresDatabase();
      const options = { dir, db: dialect === 'sqlite' ? `file:${db}` : db };
      let mirror: RegistryProcess | undefined = await startRegistry(['--upstream', proxy.url], options);
      try {
        proxy.set({ mode: 'hang', only: HELD });
        const batch = fetch(`${mirror.url}/api/v1/resolve`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ refs: REFS }),
        }).catch(() => undefined); // the kill ends it
        // Kill once the held archive was asked for (the other pulls run around it).
        for (let i = 0; !proxy.seen.some((l) => l.includes(HELD)) && i < 600; i++) {
          await new Promise((done) => setTimeout(done, 100));
        }
        assert.ok(
          proxy.seen.some((l) => l.includes(HELD)),
          `the held archive was asked for: ${proxy.seen.join(', ')}`,
        );
        mirror.child.kill('SIGKILL');
        assert.equal(await mirror.stop(), 'SIGKILL');
        await batch;

        const after = await checkStore(db);
        assert.ok(!after.versions.includes('redis v1.0.3'), 'the held version is absent');

        proxy.set({ mode: 'pass' });
        mirror = await startRegistry(['--upstream', proxy.url], options);
        const res = await fetch(`${mirror.url}/api/v1/resolve?ref=${encodeURIComponent(REFS[0]!)}`);
        assert.equal(res.status, 200, await res.clone().text());
        assert.equal(res.headers.get('cache-status'), 'dm-registry; fwd=miss; stored');
        const body = (await res.json()) as { digest: string };
        const direct = (await (
          await fetch(`${origin.url}/api/v1/resolve?ref=${encodeURIComponent(REFS[0]!)}`)
        ).json()) as {
          digest: string;
        };
        assert.equal(body.digest, direct.digest);
        const [m, o] = await Promise.all([fetch(`${mirror.url}${HELD}`), fetch(`${origin.url}${HELD}`)]);
        assert.equal(m.status, 200);
        assert.ok(Buffer.from(await m.arrayBuffer()).equals(Buffer.from(await o.arrayBuffer())));
        for (const ref of REFS) {
          const r = await fetch(`${mirror.url}/api/v1/resolve?ref=${encodeURIComponent(ref)}`);
          assert.equal(r.status, 200, `${ref}: ${await r.text()}`);
        }
        await mirror.stop();
        const final = await checkStore(db);
        assert.ok(final.versions.includes('redis v1.0.3'));
      } finally {
        mirror?.dispose();
      }
    });
  });
}

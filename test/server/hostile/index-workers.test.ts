/**
 * Issue 15 item 8: index building runs in worker threads. The worker's answer is the index the
 * same code builds on the main thread; a worker that runs out of memory on a hostile registry
 * fails that sync (INDEX_BUILD_FAILED) and is replaced, the server lives; a build stuck on its
 * source ends at the sync's deadline with its worker terminated.
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DmError } from '../../../client/src/error.js';
import { sha256Hex } from '../../../client/src/registry/digest.js';
import type { TreeEntry } from '../../../client/src/registry/types.js';
import { createMeter, gitBlobSha, type Snapshot } from '../../../client/src/source/source.js';
import {
  type BuiltIndex,
  type IndexedFile,
  indexSnapshot,
  type KnownContent,
  knownContentOf,
  NO_KNOWN_CONTENT,
} from '../../../server/src/indexer/build-index.js';
import { buildIndex, IndexBuildPool } from '../../../server/src/indexer/build-index-pool.js';
import { DirectorySource } from '../../../server/src/source/directory.js';
import { DIALECTS, FIXTURES, tempDir, testServerOn } from '../helpers.js';

/** A snapshot over files held in memory (what a source hands the indexer). */
function memorySnapshot(files: Map<string, Buffer>): Snapshot & { reads: number } {
  const entries: TreeEntry[] = [];
  for (const [path, content] of files)
    entries.push({ path, type: 'blob', size: content.length, gitSha: gitBlobSha(content) });
  const snapshot = {
    commit: 'memory',
    entries,
    reads: 0,
    async read(wanted: readonly TreeEntry[]) {
      snapshot.reads += wanted.length;
      const out = new Map<string, Buffer>();
      for (const e of wanted) {
        const content = files.get(e.path);
        if (content) out.set(e.path, content);
      }
      return out;
    },
  };
  return snapshot;
}

/** Content "in the store": the known-content lookups a sync makes, over a map. */
function storeOf(built: BuiltIndex): KnownContent {
  const byGit = new Map<string, string>();
  const bySha = new Map<string, Buffer>();
  const files = built.templates.flatMap((t) => t.versions.flatMap((v) => v.files));
  if (built.registryYaml) files.push(built.registryYaml);
  for (const f of files) {
    byGit.set(f.gitSha, f.sha256);
    if (f.content) bySha.set(f.sha256, f.content);
  }
  return knownContentOf({ sha256ForGitSha: (g) => byGit.get(g), content: (s) => bySha.get(s) });
}

/** The same build on the main thread, through the same ports. */
async function inline(snapshot: Snapshot, known: KnownContent): Promise<BuiltIndex> {
  const byPath = new Map(snapshot.entries.map((e) => [e.path, e]));
  const knownSha = await known.sha256ForGitShas(
    snapshot.entries.flatMap((e) => (e.gitSha ? [e.gitSha] : [])),
  );
  return indexSnapshot(snapshot.entries, {
    knownSha,
    read: (paths) => snapshot.read(paths.map((p) => byPath.get(p)!)),
    contents: (shas) => known.contents(shas),
  });
}

/** A registry of `templates` × `versions`, each version with a template, an example and a schema. */
function generated(templates: number, versions: number, salt: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  files.set('registry.yaml', Buffer.from('name: local.dm/gen/reg\n'));
  for (let t = 0; t < templates; t++) {
    for (let v = 0; v < versions; v++) {
      const dir = `c${t % 3}/t${t}/v1.${v}.0`;
      files.set(
        `${dir}/t${t}.jinja`,
        Buffer.from(`resources:\n- name: {{ env["name"] }}-${salt}-${t}-${v}\n  type: x\n`),
      );
      files.set(`${dir}/example.yaml`, Buffer.from(`resources:\n- name: e\n  type: t${t}.jinja\n`));
      files.set(
        `${dir}/t${t}.jinja.schema`,
        Buffer.from(`info:\n  title: T${t}\n  description: d${v}\nproperties:\n  p${v}:\n    type: string\n`),
      );
    }
  }
  return files;
}

/** Comparable form: contents as hex digests (the worker's are the main thread's own buffers). */
function plain(built: BuiltIndex): unknown {
  const file = (f: IndexedFile) => ({ ...f, content: f.content ? sha256Hex(f.content) : null });
  return {
    ...built,
    templates: built.templates.map((t) => ({
      ...t,
      versions: t.versions.map((v) => ({ ...v, files: v.files.map(file) })),
    })),
    registryYaml: built.registryYaml ? file(built.registryYaml) : null,
  };
}

/** A version whose schema parses into far more memory than its bytes: a flow list of 900,000 items. */
function hostileSchema(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'bomb.jinja'), 'resources: []\n');
  writeFileSync(join(dir, 'bomb.jinja.schema'), `[${'0,'.repeat(900_000)}0]\n`);
}

describe('index building in worker threads', () => {
  it('buildIndex() in a worker gives the index the main thread builds, fresh and with content already stored', async () => {
    const pool = new IndexBuildPool({ size: 1 });
    try {
      const opened = await new DirectorySource({ directory: FIXTURES }).open({ meter: createMeter() });
      assert.equal(opened.status, 'changed');
      if (opened.status !== 'changed') return;
      const none: KnownContent = NO_KNOWN_CONTENT;
      const fixtures = await buildIndex(opened, none, { pool });
      assert.ok(fixtures.templates.length > 3);
      assert.deepEqual(plain(fixtures), plain(await inline(opened, none)));

      // Over 500 versions: several batches back from the worker.
      const first = memorySnapshot(generated(70, 9, 'a'));
      const built = await buildIndex(first, none, { pool });
      assert.equal(
        built.templates.reduce((n, t) => n + t.versions.length, 0),
        630,
      );
      assert.deepEqual(plain(built), plain(await inline(first, none)));
      assert.ok(built.templates.every((t) => t.versions.every((v) => v.files.every((f) => f.content))));

      // Everything stored but one changed version: only its files are read, the rest comes from the store.
      const files = generated(70, 9, 'a');
      files.set('c0/t3/v1.2.0/t3.jinja', Buffer.from('resources: [] # changed\n'));
      const second = memorySnapshot(files);
      const known = storeOf(built);
      const rebuilt = await buildIndex(second, known, { pool });
      assert.equal(second.reads, 1);
      assert.deepEqual(plain(rebuilt), plain(await inline(memorySnapshot(files), known)));
      const changed = rebuilt.templates
        .find((t) => t.name === 't3')
        ?.versions.find((v) => v.version === 'v1.2.0');
      assert.equal(changed?.files.filter((f) => f.content).length, 1);
      assert.equal(pool.workers, 1);
    } finally {
      await pool.close();
    }
  });

  it('a worker out of memory on hostile schemas fails the build with INDEX_BUILD_FAILED; the pool replaces it', async () => {
    const dir = tempDir('dm-index-oom-');
    const pool = new IndexBuildPool({ size: 1, maxHeapMb: 32 });
    try {
      for (let v = 0; v < 4; v++) hostileSchema(join(dir, 'bomb', `v1.${v}`));
      const opened = await new DirectorySource({ directory: dir }).open({ meter: createMeter() });
      assert.equal(opened.status, 'changed');
      if (opened.status !== 'changed') return;
      const none: KnownContent = NO_KNOWN_CONTENT;
      await assert.rejects(buildIndex(opened, none, { pool }), (error: unknown) => {
        assert.ok(error instanceof DmError, String(error));
        assert.equal(error.code, 'INDEX_BUILD_FAILED');
        assert.equal(error.category, 'limit');
        assert.match(error.message, /more than the indexing worker's 32 MB of memory/);
        return true;
      });
      assert.equal(pool.workers, 0);
      const small = memorySnapshot(generated(2, 2, 'b'));
      assert.equal((await buildIndex(small, none, { pool })).templates.length, 2);
    } finally {
      await pool.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a build stuck on its source ends with the abort reason and its worker terminated', async () => {
    const pool = new IndexBuildPool({ size: 1 });
    try {
      const deadline = new AbortController();
      const reason = new DmError('SYNC_TIMEOUT', 'the sync did not finish within 1 s');
      const stuck: Snapshot = {
        ...memorySnapshot(generated(3, 2, 'c')),
        read: () => {
          deadline.abort(reason);
          return new Promise(() => {});
        },
      };
      const none: KnownContent = NO_KNOWN_CONTENT;
      await assert.rejects(buildIndex(stuck, none, { pool, signal: deadline.signal }), (e) => e === reason);
      assert.equal(pool.workers, 0);
      await assert.rejects(buildIndex(stuck, none, { pool, signal: deadline.signal }), (e) => e === reason);
      assert.equal(
        (await buildIndex(memorySnapshot(generated(2, 1, 'd')), none, { pool })).templates.length,
        2,
      );
    } finally {
      await pool.close();
    }
  });

  for (const dialect of DIALECTS) {
    it(`a sync whose worker runs out of memory is a failed sync; the server answers and the next sync succeeds (${dialect})`, async () => {
      const pool = new IndexBuildPool({ size: 1, maxHeapMb: 32 });
      const server = await testServerOn(dialect, { indexPool: pool });
      const dir = tempDir('dm-index-oom-sync-');
      try {
        for (let v = 0; v < 4; v++) hostileSchema(join(dir, 'bomb', `v1.${v}`));
        const row = await server.service.add({ source: dir, name: 'local.dm/local/bomb' });
        const failed = await server.service.sync(row.id, 'manual');
        assert.equal(failed.status, 'failed');
        assert.equal(failed.error?.code, 'INDEX_BUILD_FAILED');
        const info = await server.app.request(`/api/v1/registries/${row.id}`, {
          headers: { authorization: 'Bearer test-admin-token' },
        });
        assert.equal(info.status, 200);
        const body = (await info.json()) as { sync: { status: string; error: string } };
        assert.equal(body.sync.status, 'failed');
        assert.match(body.sync.error, /^INDEX_BUILD_FAILED: /);

        for (let v = 0; v < 4; v++) {
          writeFileSync(
            join(dir, 'bomb', `v1.${v}`, 'bomb.jinja.schema'),
            'properties:\n  size:\n    type: integer\n',
          );
        }
        const ok = await server.service.sync(row.id, 'manual');
        assert.equal(ok.status, 'succeeded', JSON.stringify(ok.error));
        assert.equal(ok.versionCount, 4);
        const resolved = await server.app.request('/api/v1/resolve?ref=local.dm/local/bomb/bomb:v1');
        assert.equal(resolved.status, 200, await resolved.clone().text());
      } finally {
        await server.close();
        await pool.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

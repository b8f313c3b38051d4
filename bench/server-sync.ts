/**
 * What a GitHub sync costs (docs/server.md "Indexing"; issue targets): API requests per sync through real
 * @octokit/rest against the GitHub stand-in, and the time to index a large registry.
 *   cold index of registry-fixtures ≤ 4 · unchanged re-sync = 1 (304) · one-file change ≤ 6 ·
 *   a generated registry of 10,000 version directories (2,000 templates × 5 versions; its tree is
 *   past GitHub's 7 MB truncation) the same count as cold, indexed in < 10 s.
 * Baseline in the same run: DM's indexer made one request per collection, per template and per
 * version (plus one per file it read); its count for the same registries is printed alongside.
 * Issue 11 (docs/integrity-store.md): one published version of the 10,000 edited and synced again
 * (quarantined: requests must stay those of a one-file change), and the first-seen step alone
 * (load, decide, keep the served rows, log append) timed inside a rolled-back transaction against
 * the whole swap of the same index, also rolled back.
 * Issue 15: the swap of the same 10,000-version index on the request thread (`swapIndex`) vs in
 * the swap worker (`swapIndexOffThread`, what syncs use), both committed, best of 2 each.
 * The swap worker kept between swaps vs started per swap (100-version swaps, medians of 5).
 * Usage: node dist/bench/server-sync.js [--swap-worker: that last row alone, in seconds]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitSource } from '../client/src/source/git.js';
import { createMeter } from '../client/src/source/source.js';
import { ADMIN_ACCESS } from '../server/src/api/access.js';
import { createApp } from '../server/src/api/app.js';
import { type BuiltIndex, knownContentOf, NO_KNOWN_CONTENT } from '../server/src/indexer/build-index.js';
import { buildIndex } from '../server/src/indexer/build-index-pool.js';
import { silentLogger } from '../server/src/log.js';
import { defaultSourceFactory } from '../server/src/service.js';
import { firstSeenFlow } from '../server/src/store/first-seen.js';
import { serviceStoreOf } from '../server/src/store/open-store.js';
import { openStore, type Store } from '../server/src/store/sqlite/open.js';
import { readsOf } from '../server/src/store/sqlite/reads.js';
import { runFlow, sqliteDialect } from '../server/src/store/sqlite/runner.js';
import { swapIndex } from '../server/src/store/sqlite/swap-index.js';
import { stopSwapWorker, swapIndexOffThread } from '../server/src/store/sqlite/swap-index-thread.js';
import { commitAll, commitDirectory, startGitHubStandin } from '../test/github-standin/standin.js';
import { generatedIndex } from './generated-index.js';

function server(dir: string, githubApiUrl: string) {
  const store = openStore(join(dir, `${randomBytes(4).toString('hex')}.db`));
  const app = createApp({
    store,
    sources: defaultSourceFactory({ githubApiUrl, gitCacheDir: join(dir, 'git') }),
    secretKey: randomBytes(32),
    logger: silentLogger,
    accessLog: false,
  });
  return { store, ...app };
}

function generate(dir: string, templates: number, versions: number): void {
  for (let t = 0; t < templates; t++) {
    const name = `t${String(t).padStart(4, '0')}`;
    for (let v = 0; v < versions; v++) {
      const vdir = join(dir, name, `v1.${v}`);
      mkdirSync(vdir, { recursive: true });
      writeFileSync(
        join(vdir, `${name}.jinja`),
        `resources:\n- name: {{ env["name"] }}-${name}-${v}\n  type: t\n`,
      );
      writeFileSync(
        join(vdir, `${name}.jinja.schema`),
        `info:\n  title: Template ${name}\n  description: generated template ${t} version ${v}\nproperties:\n  size${t % 50}: {type: integer}\n`,
      );
      writeFileSync(join(vdir, 'example.yaml'), `resources:\n- name: ${name}\n  type: ${name}.jinja\n`);
    }
  }
}

/** DM's per-directory walk: one request per collection listing, per template, per version, per file read. */
function dmRequestCount(collections: number, templates: number, versions: number, files: number): number {
  return 1 + collections + templates + versions + files;
}

/** The first-seen step's time against the whole swap of the same 10,000-version index (both rolled back). */
async function firstSeenCost(store: Store, repo: string): Promise<string> {
  const opened = await new GitSource({ location: repo }).open({ meter: createMeter() });
  if (opened.status !== 'changed') throw new Error('the bench repository did not open');
  const byGit = store.sqlite.prepare('SELECT sha256 FROM files WHERE git_sha = ?').pluck();
  const content = store.sqlite.prepare('SELECT content FROM files WHERE sha256 = ?').pluck();
  const known = knownContentOf({
    sha256ForGitSha: (g: string) => (byGit.get(g) as string | undefined) ?? undefined,
    content: (sha: string) => (content.get(sha) as Buffer | undefined) ?? undefined,
  });
  const db = store.sqlite;
  const registry = db
    .prepare('SELECT id, name FROM registries WHERE name = ?')
    .get('github.com/acme/big') as {
    id: number;
    name: string;
  };
  const rollback = new Error('rollback');
  const timed = async (work: (built: BuiltIndex) => void): Promise<number> => {
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const built = await buildIndex(opened, known);
      const started = performance.now();
      try {
        db.transaction(() => {
          work(built);
          throw rollback;
        })();
      } catch (error) {
        if (error !== rollback) throw error;
      }
      runs.push(performance.now() - started);
    }
    return Math.min(...runs);
  };
  const meta = { registryId: registry.id, registry: registry.name, syncId: null, now: Date.now() };
  const step = await timed((built) => {
    runFlow(db, firstSeenFlow(sqliteDialect, built, meta, undefined));
  });
  const swap = await timed((built) => {
    swapIndex(store, built, { registryId: registry.id, commit: 'bench', etag: null, now: meta.now });
  });
  return `first-seen step on 10,000 versions ${step.toFixed(0)} ms of a ${swap.toFixed(0)} ms swap (${((100 * step) / swap).toFixed(1)} %; swap without it ≈ ${(swap - step).toFixed(0)} ms, ratio ${(swap / (swap - step)).toFixed(2)}×)`;
}

/**
 * Cheap detection: building the 10,000-version index (after the one edit) from the git source, which
 * lists tree SHAs, without vs with the stored versions (`previous`): time, blobs read, and stored
 * content loaded (schemas to parse) — best of 3 each.
 */
async function cheapDetection(store: Store, repo: string, registryId: number): Promise<string> {
  const opened = await new GitSource({ location: repo }).open({ meter: createMeter() });
  if (opened.status !== 'changed') throw new Error('the bench repository did not open');
  let reads = 0;
  let loads = 0;
  const snapshot = {
    ...opened,
    read: (entries: Parameters<typeof opened.read>[0]) => {
      reads += entries.length;
      return opened.read(entries);
    },
  };
  const known = serviceStoreOf(store).knownContent();
  const counted = {
    ...known,
    contents: async (shas: readonly string[]) => {
      const found = await known.contents(shas);
      loads += found.size;
      return found;
    },
  };
  // The stored rows came from the tarball (no tree SHAs): store this source's index first.
  await serviceStoreOf(store).swap(await buildIndex(opened, known), {
    registryId,
    commit: 'bench-git',
    etag: null,
    now: Date.now(),
  });
  const previous = await serviceStoreOf(store).syncs.versionTrees(registryId);
  const run = async (withPrevious: boolean) => {
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) {
      reads = 0;
      loads = 0;
      const started = performance.now();
      await buildIndex(snapshot, counted, withPrevious ? { previous } : {});
      runs.push(performance.now() - started);
    }
    return { ms: Math.min(...runs), reads, loads };
  };
  const full = await run(false);
  const cheap = await run(true);
  return `build of 10,000 versions, 1 edited (git tree SHAs): every version ${full.ms.toFixed(0)} ms (${full.reads} blobs read, ${full.loads} stored contents loaded), unchanged trees reused ${cheap.ms.toFixed(0)} ms (${cheap.reads} read, ${cheap.loads} loaded; ${previous.size} stored versions with a tree SHA), ratio ${(cheap.ms / full.ms).toFixed(2)}×`;
}

/** The swap of one built index on the calling thread vs in the swap worker (both committed). */
async function swapThreads(store: Store, repo: string): Promise<string> {
  const opened = await new GitSource({ location: repo }).open({ meter: createMeter() });
  if (opened.status !== 'changed') throw new Error('the bench repository did not open');
  const built = await buildIndex(opened, NO_KNOWN_CONTENT);
  const registryId = (
    store.sqlite.prepare('SELECT id FROM registries WHERE name = ?').get('github.com/acme/big') as {
      id: number;
    }
  ).id;
  const meta = { registryId, commit: 'bench', etag: null, now: Date.now() };
  const best = async (run: () => unknown) => {
    const runs: number[] = [];
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      await run();
      runs.push(performance.now() - started);
    }
    return Math.min(...runs);
  };
  const inThread = await best(() => swapIndex(store, built, meta));
  const offThread = await best(() => swapIndexOffThread(store, built, meta));
  return `swap of 10,000 versions (every file's content carried): request thread ${inThread.toFixed(0)} ms, swap worker ${offThread.toFixed(0)} ms (ratio ${(offThread / inThread).toFixed(2)}×; the request thread is free meanwhile)`;
}

/**
 * What keeping the swap worker saves: small swaps (100 versions) through the worker kept between
 * swaps vs a worker started for each swap (as before: `stopSwapWorker` ends it first), alternating,
 * medians of 5 each.
 */
async function swapWorkerStart(store: Store): Promise<string> {
  const built = generatedIndex(100);
  const registryId = (
    store.sqlite.prepare('SELECT id FROM registries WHERE name = ?').get('github.com/acme/big') as {
      id: number;
    }
  ).id;
  const meta = { registryId, commit: 'bench-small', etag: null, now: Date.now() };
  const kept: number[] = [];
  const fresh: number[] = [];
  await swapIndexOffThread(store, built, meta);
  for (let i = 0; i < 5; i++) {
    let started = performance.now();
    await swapIndexOffThread(store, built, meta);
    kept.push(performance.now() - started);
    await stopSwapWorker(store);
    started = performance.now();
    await swapIndexOffThread(store, built, meta);
    fresh.push(performance.now() - started);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return `swap of 100 versions: worker kept ${median(kept).toFixed(0)} ms, worker started per swap ${median(fresh).toFixed(0)} ms (saves ${(median(fresh) - median(kept)).toFixed(0)} ms a swap; load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')})`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sync-'));
  try {
    const sample = join(dir, 'sample');
    commitDirectory(join(process.cwd(), 'registry-fixtures'), sample);
    const generated = join(dir, 'generated');
    mkdirSync(generated);
    generate(generated, 2000, 5);
    const big = join(dir, 'big');
    commitDirectory(generated, big);
    const standin = await startGitHubStandin({
      repos: { 'acme/templates': { gitDir: sample }, 'acme/big': { gitDir: big } },
    });
    const rows: string[] = [];
    const s = server(dir, standin.url);
    const reg = await s.service.add({ source: 'github.com/acme/templates' });
    const cold = await s.service.sync(reg.id, 'cli');
    const unchanged = await s.service.sync(reg.id, 'cli');
    writeFileSync(
      join(sample, 'redis', 'v1.1', 'example.yaml'),
      'resources:\n- name: bench\n  type: redis.jinja\n',
    );
    commitAll(sample, 'one-file change');
    const changed = await s.service.sync(reg.id, 'cli');
    const info = await s.service.info(await s.service.find(reg.id, ADMIN_ACCESS), { viewer: ADMIN_ACCESS });
    rows.push(
      `registry-fixtures cold       ${String(cold.apiRequests).padStart(3)} requests (target ≤ 4)   [${cold.status}; ${info.counts.versions} versions; DM-style walk ≈ ${dmRequestCount(6, info.counts.templates, info.counts.versions, info.counts.versions * 3)}]`,
      `registry-fixtures unchanged  ${String(unchanged.apiRequests).padStart(3)} requests (target = 1)   [${unchanged.status}]`,
      `registry-fixtures one file   ${String(changed.apiRequests).padStart(3)} requests (target ≤ 6)   [${changed.status}]`,
    );

    // The stand-in builds an archive with `git archive` in this process on first request; GitHub
    // has it ready. Warm it so the timing is the indexer's (the warm-up is not a sync request).
    const head = (await (await fetch(`${standin.url}/repos/acme/big/commits/HEAD`)).json()) as {
      sha: string;
    };
    await (await fetch(`${standin.url}/repos/acme/big/tarball/${head.sha}`)).arrayBuffer();
    const b = server(dir, standin.url);
    const bigReg = await b.service.add({ source: 'github.com/acme/big' });
    const started = performance.now();
    const bigSync = await b.service.sync(bigReg.id, 'cli');
    const seconds = (performance.now() - started) / 1000;
    const truncated = standin.requests.some((r) => r.path.includes('/repos/acme/big/tarball/'));
    rows.push(
      `10,000 versions cold         ${String(bigSync.apiRequests).padStart(3)} requests (target = cold) in ${seconds.toFixed(2)} s (target < 10 s)   [${bigSync.status}; ${bigSync.versionCount} versions; tree truncated → tarball: ${truncated}; DM-style walk ≈ ${dmRequestCount(1, 2000, 10000, 30000)}]`,
    );
    const again = await b.service.sync(bigReg.id, 'cli');
    rows.push(
      `10,000 versions unchanged    ${String(again.apiRequests).padStart(3)} requests [${again.status}]`,
    );
    writeFileSync(
      join(big, 't0042', 'v1.3', 'example.yaml'),
      'resources:\n- name: edited\n  type: t0042.jinja\n',
    );
    commitAll(big, 'edit a published version');
    const editStarted = performance.now();
    const edited = await b.service.sync(bigReg.id, 'cli');
    const editSeconds = (performance.now() - editStarted) / 1000;
    const open = await readsOf(b.store).openQuarantines(bigReg.id);
    rows.push(
      `10,000 versions, 1 edited    ${String(edited.apiRequests).padStart(3)} requests (target: a one-file change, ≤ 6) in ${editSeconds.toFixed(2)} s   [${edited.status}; quarantined: ${open.map((q) => `${q.template}@${q.version} ${q.changedFiles.map((f) => f.path).join(',')}`).join('; ')}]`,
    );
    rows.push(await firstSeenCost(b.store, big));
    rows.push(await cheapDetection(b.store, big, bigReg.id));
    rows.push(await swapThreads(b.store, big));
    rows.push(await swapWorkerStart(b.store));
    console.log(
      `sync bench: GitHub API requests per sync through @octokit/rest against the stand-in (load: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')})`,
    );
    for (const r of rows) console.log(r);
    console.log(`rate-limit budget left after the run: ${bigSync.rateLimitRemaining ?? 'unknown'}`);
    await s.service.stop();
    await b.service.stop();
    s.store.close();
    b.store.close();
    await standin.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--swap-worker') {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sync-'));
  try {
    const store = openStore(join(dir, 'r.db'));
    store.sqlite
      .prepare('INSERT INTO registries (name, source_type, source, created_at) VALUES (?, ?, ?, ?)')
      .run('github.com/acme/big', 'directory', dir, Date.now());
    console.log(await swapWorkerStart(store));
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else await main();

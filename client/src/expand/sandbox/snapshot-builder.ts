/**
 * Makes a renderer's startup snapshot (renderer-snapshot.ts; docs/expansion.md, "Speed"): run
 * by dm in the background, at the lowest priority, as `node snapshot-builder.js <job>` (an entry
 * of the CLI bundle). One builder per snapshot at a time (a `.building` file; one older than ten
 * minutes is a builder that died). The snapshot is built to a temporary file by
 * `node --build-snapshot` with the renderer's own V8 flags and an empty environment, then a
 * renderer is started from it exactly as dm starts one and must render a probe right; only then
 * is it renamed into place, its size in its name.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { forkRenderer, rendererV8Flags } from './fork-renderer.js';
import type { RenderAnswer } from './render-protocol.js';
import type { SnapshotJob } from './renderer-snapshot.js';

const STALE_MS = 10 * 60_000;
const LIMIT_MS = 5 * 60_000;

/** Takes the job's `.building` file; false when another live builder has it. */
function lock(path: string): boolean {
  try {
    writeFileSync(path, String(process.pid), { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (statSync(path).mtimeMs > Date.now() - STALE_MS) return false;
    rmSync(path, { force: true });
    writeFileSync(path, String(process.pid), { flag: 'wx' });
    return true;
  }
}

/** A rendering with a schema check, from the snapshot at `blob`: what it answers. */
async function probe(job: SnapshotJob, blob: string): Promise<RenderAnswer> {
  const forked = forkRenderer({
    entry: job.entry,
    readTrees: [],
    readFiles: [job.entry],
    digest: job.digest,
    memoryMb: job.memoryMb,
    label: 'the Jinja renderer (snapshot probe)',
    snapshot: blob,
  });
  const timer = setTimeout(() => forked.child.kill('SIGKILL'), LIMIT_MS);
  try {
    const child = await forked.ready;
    const answered = new Promise<RenderAnswer>((resolve, reject) => {
      child.on('message', (m: unknown) => {
        if ((m as { id?: unknown }).id === 1) resolve(m as RenderAnswer);
      });
      child.once('exit', () => reject(new Error('the probe renderer stopped')));
    });
    child.send([
      {
        id: 1,
        name: 'probe.jinja',
        source: 'a: {{ properties.x + 1 }}\nb: {{ env.name | upper }}\n',
        context: { properties: {}, env: { name: 'p' } },
        filesId: 1,
        files: {},
        parse: { source: 'probe.jinja', maxNodes: 100 },
        schema: 'probe.schema',
        schemaFiles: { 'probe.schema': 'properties:\n  x: {type: integer, default: 41}\n' },
        schemaFilesId: 2,
        check: { subject: 'probe', mode: 'strict' },
      },
    ]);
    return await answered;
  } finally {
    clearTimeout(timer);
    forked.child.kill('SIGKILL');
  }
}

export async function buildRendererSnapshot(job: SnapshotJob): Promise<void> {
  mkdirSync(job.dir, { recursive: true, mode: 0o700 });
  const lockFile = join(job.dir, `${job.key}.building`);
  if (!lock(lockFile)) return;
  const temporary = join(job.dir, `${job.key}.tmp-${process.pid}`);
  try {
    const built = spawnSync(
      process.execPath,
      [
        ...rendererV8Flags(job.memoryMb, true),
        '--snapshot-blob',
        temporary,
        '--build-snapshot',
        job.entry,
        job.digest,
      ],
      { env: {}, stdio: 'ignore', timeout: LIMIT_MS },
    );
    if (built.status !== 0) throw new Error(`--build-snapshot failed (${built.status ?? built.signal})`);
    const answer = await probe(job, temporary);
    const expected = { id: 1, ok: true, data: { a: 42, b: 'P' }, properties: { x: 41 }, violations: [] };
    if (!isDeepStrictEqual(answer, expected)) throw new Error(`the probe answered ${JSON.stringify(answer)}`);
    const name = `${job.key}.${statSync(temporary).size}.blob`;
    renameSync(temporary, join(job.dir, name));
    // Snapshots of earlier builds of the renderer for this Node and heap limit are of no more use.
    const earlier = job.key.slice(0, job.key.length - job.digest.length);
    for (const other of readdirSync(job.dir)) {
      if (other.startsWith(earlier) && /\.(blob|wanted)$/.test(other) && other !== name)
        rmSync(join(job.dir, other), { force: true });
    }
  } finally {
    rmSync(temporary, { force: true });
    rmSync(lockFile, { force: true });
  }
}

if (process.argv.length === 3 && process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    setPriority(19);
  } catch {}
  buildRendererSnapshot(JSON.parse(process.argv[2] as string) as SnapshotJob).then(
    () => process.exit(0),
    () => process.exit(1),
  );
}

/**
 * The Jinja renderer's startup snapshot (docs/expansion.md, "Speed"): a V8 heap in which the
 * renderer's bundle is loaded, schema validation (Ajv) too, and the engine's code compiled by a
 * warm-up (renderer-warm-up.ts), so that a process started from it skips all of that. Kept in
 * dm's cache directory (the user's own, as the compile cache: docs/client.md, "The CLI bundle"),
 * one file per Node version, architecture, heap limit and bundle digest; made in the background
 * (snapshot-builder.ts) when a run misses one that an earlier run missed too (a cache directory
 * used once, as a fresh CI machine's, is not worth the build), and taken only when it is whole: its size
 * is in its name, V8 checks its checksum at start, and the process started from it must name the
 * bundle's digest (fork-renderer.ts). One that fails any of these is deleted, and made again.
 * The process started from it runs under the same permission model and limits as any renderer.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RendererCode } from './fork-renderer.js';

/** Where the snapshots are kept, in dm's cache directory (dmDirectories(env).cache). */
export function rendererSnapshotDir(dmCacheDir: string): string {
  return join(dmCacheDir, 'renderer-snapshots');
}

/** What a renderer's snapshot is made from and kept by. */
export interface SnapshotJob {
  dir: string;
  /** The file name before `.<size>.blob`. */
  key: string;
  entry: string;
  digest: string;
  memoryMb: number;
}

function jobFor(dir: string, code: RendererCode, memoryMb: number): SnapshotJob | undefined {
  if (!code.digest || code.readTrees.length > 0) return undefined;
  const key = `jinja-child-${process.version}-${process.arch}-m${memoryMb}-${code.digest}`;
  return { dir, key, entry: code.entry, digest: code.digest, memoryMb };
}

/**
 * The snapshot file of `key` in dir, if there is one whose size is the one in its name; one that
 * is not whole is deleted (`discarded`).
 */
function findSnapshot(job: SnapshotJob): { path?: string; discarded?: boolean } {
  let names: string[];
  try {
    names = readdirSync(job.dir);
  } catch {
    return {};
  }
  let discarded = false;
  for (const name of names) {
    if (!name.startsWith(`${job.key}.`)) continue;
    const size = /^\.(\d+)\.blob$/.exec(name.slice(job.key.length))?.[1];
    if (size === undefined) continue;
    const path = join(job.dir, name);
    try {
      if (statSync(path).size === Number(size)) return { path };
    } catch {
      continue;
    }
    discardSnapshot(path);
    discarded = true;
  }
  return { discarded };
}

/** Deletes a snapshot that was not whole (findSnapshot then has it made again). */
function discardSnapshot(path: string): void {
  rmSync(path, { force: true });
}

/** A snapshot that did not start (damaged, or of another build): deleted, and made again. */
export function snapshotFailed(dir: string, code: RendererCode, memoryMb: number, path: string): void {
  discardSnapshot(path);
  const job = jobFor(dir, code, memoryMb);
  if (job) buildInBackground(job);
}

let building = false;
/** The snapshots this run found missing first (it asks twice: early start, then the sandbox). */
const markedNow = new Set<string>();

/** Starts making the snapshot in a process of its own that dm does not wait for (once per run). */
function buildInBackground(job: SnapshotJob): void {
  if (building || existsSync(join(job.dir, `${job.key}.building`))) return;
  building = true;
  // Beside this module in the CLI bundle (scripts/bundle.mjs), as its own entry.
  const builder = join(dirname(fileURLToPath(import.meta.url)), 'snapshot-builder.js');
  if (!existsSync(builder)) return;
  try {
    const child = spawn(process.execPath, [builder, JSON.stringify(job)], {
      detached: true,
      stdio: 'ignore',
      env: {},
    });
    child.on('error', () => {});
    child.unref();
  } catch {
    // Not made this time: the renderer starts without it.
  }
}

/**
 * The snapshot to start the renderer `code` from, with this heap limit, when dm's cache keeps one
 * (`dir`: rendererSnapshotDir); when it does not, it is made for a later run and this one starts
 * the renderer from its file. Only a bundled renderer has one.
 */
export function rendererSnapshot(
  dir: string | undefined,
  code: RendererCode,
  memoryMb: number,
): string | undefined {
  if (dir === undefined) return undefined;
  const job = jobFor(dir, code, memoryMb);
  if (!job) return undefined;
  const found = findSnapshot(job);
  if (found.discarded) buildInBackground(job);
  else if (!found.path) {
    // The second run that misses it has it made.
    const wanted = join(dir, `${job.key}.wanted`);
    if (markedNow.has(wanted)) return undefined;
    if (existsSync(wanted)) buildInBackground(job);
    else {
      markedNow.add(wanted);
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        writeFileSync(wanted, '');
      } catch {}
    }
  }
  return found.path;
}

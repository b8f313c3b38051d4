/**
 * Sources (docs/server.md "Indexing"): where a registry's files come from. One interface, implemented by
 * GitHub (REST API), git (the `git` binary: a local repository or a URL) and a plain directory;
 * an upstream registry server (§5, mirroring) will be a fourth.
 *
 * A sync opens a snapshot (one commit of the source) and reads the blobs it needs in batches.
 * Sources keep the request count small: the indexer tells them which blobs it already stores
 * (by git blob id), so a re-sync reads only what changed.
 */
import { createHash } from 'node:crypto';
import { DmError } from '../error.js';
import type { TreeEntry } from '../registry/types.js';

/** What one snapshot of a source may hold; the server's bound on every source kind. */
export interface SourceLimits {
  /** Largest single file, bytes. */
  maxFileBytes: number;
  /** Largest sum of the files under the registry root, bytes. */
  maxTotalBytes: number;
  /** Most tree entries. */
  maxEntries: number;
  /**
   * Most files in one version (docs/registry-layout.md, `VERSION_TOO_MANY_FILES`): a version over it
   * is a finding of the tree scan (dm lint and the indexer alike) and is not served, so no resolve
   * answer, page or archive has to carry more.
   */
  maxVersionFiles: number;
}

export const DEFAULT_SOURCE_LIMITS: SourceLimits = {
  maxFileBytes: 32 * 1024 * 1024,
  maxTotalBytes: 256 * 1024 * 1024,
  maxEntries: 500_000,
  maxVersionFiles: 1000,
};

/**
 * Checks a snapshot's tree against the limits before anything is read (git and GitHub trees carry
 * blob sizes); throws SOURCE_TOO_LARGE naming the first excess.
 */
export function checkSourceSize(
  entries: readonly TreeEntry[],
  description: string,
  limits: SourceLimits = DEFAULT_SOURCE_LIMITS,
): void {
  const fail = (what: string) =>
    new DmError('SOURCE_TOO_LARGE', `${description}: ${what}`, { category: 'limit' });
  if (entries.length > limits.maxEntries) throw fail(`more than ${limits.maxEntries} entries`);
  let total = 0;
  for (const e of entries) {
    if (e.type !== 'blob' || e.size === undefined) continue;
    if (e.size > limits.maxFileBytes) {
      throw fail(`'${e.path}' is ${e.size} bytes, more than ${limits.maxFileBytes}`);
    }
    total += e.size;
    if (total > limits.maxTotalBytes) throw fail(`files sum to more than ${limits.maxTotalBytes} bytes`);
  }
}

/** Counts what a sync costs: API requests made and the rate-limit budget left afterwards. */
export interface SyncMeter {
  requests: number;
  rateLimitRemaining: number | null;
}

export function createMeter(): SyncMeter {
  return { requests: 0, rateLimitRemaining: null };
}

export interface OpenOptions {
  /** ETag of the previous answer for the branch commit (GitHub), for a conditional request. */
  etag?: string | null;
  /** Commit of the serving index: a snapshot of the same commit is `unchanged`. */
  commit?: string | null;
  meter: SyncMeter;
  signal?: AbortSignal;
}

export interface Snapshot {
  commit: string;
  /** The ETag to remember for the next conditional request, when the source has one. */
  etag?: string | null;
  /** Every entry under the registry root, paths relative to it, blobs with `gitSha`. */
  entries: TreeEntry[];
  /** Reads blobs (entries of this snapshot) in one batch; keyed by path. */
  read(entries: readonly TreeEntry[]): Promise<Map<string, Buffer>>;
}

export type OpenResult = { status: 'unchanged'; commit: string } | ({ status: 'changed' } & Snapshot);

export interface Source {
  readonly kind: 'github' | 'git' | 'directory';
  /** What the source is, as a user wrote it (never with credentials). */
  readonly description: string;
  open(options: OpenOptions): Promise<OpenResult>;
}

/** The git blob id of content: sha1 over `blob <size>\0<content>`. */
export function gitBlobSha(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** Keeps the entries under `root` (a registry path inside a repository), paths made relative to it. */
export function entriesUnder(entries: readonly TreeEntry[], root: string): TreeEntry[] {
  const prefix = root.replace(/^\/+|\/+$/g, '');
  if (prefix === '') return [...entries];
  const out: TreeEntry[] = [];
  for (const e of entries) {
    if (e.path.startsWith(`${prefix}/`)) out.push({ ...e, path: e.path.slice(prefix.length + 1) });
  }
  return out;
}

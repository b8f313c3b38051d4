/**
 * `.../archive.tar.gz` (docs/server.md "HTTP API"): the files of one version directory as a gzipped ustar
 * archive under the template's name, byte-for-byte deterministic for a version digest (the one
 * writer's entries, client/src/registry/version-tar.ts), so its ETag can be the version digest.
 */
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import { comparePaths, TAR_END, TAR_GZIP_OPTIONS, tarEntry } from '../../../client/src/registry/index.js';
import { nextTurn } from '../store/slices.js';
import { Admission, type AdmissionOptions } from './admission.js';

/** Where a build reads a version's files: their paths, then each file's content, one at a time. */
export interface ArchiveSource {
  paths(): Promise<readonly string[]>;
  content(path: string): Promise<Buffer>;
}

/**
 * Built archives by version digest (docs/server.md, "Bounds on one caller's work"): an archive is
 * a pure function of the digest, so it is built once and kept in a byte-bounded LRU (64 MiB by
 * default); concurrent requests for one digest share one build. A build is bounded work of its own
 * (`work="archive"`: 2 at a time, 16 waiting, 503 beyond) and never holds the request thread: it
 * reads one file at a time with a turn of the event loop before each, and the gzip stream
 * compresses on libuv's worker threads as the entries are written (waiting for it to drain), so it
 * holds one file's content and the compressed archive, never every file at once.
 */
export class ArchiveCache {
  private readonly built: LRUCache<string, Buffer>;
  private readonly building = new Map<string, Promise<Buffer>>();
  readonly admission: Admission;
  /** Archives built so far (for tests and metrics). */
  builds = 0;

  constructor(maxBytes = 64 * 1024 * 1024, admission: AdmissionOptions = { concurrency: 2, queue: 16 }) {
    this.built = new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (b) => b.length || 1 });
    this.admission = new Admission('archive builds', admission);
  }

  async get(digest: string, root: string, source: ArchiveSource): Promise<Buffer> {
    const key = `${digest}\0${root}`;
    const hit = this.built.get(key);
    if (hit) return hit;
    const pending = this.building.get(key);
    if (pending) return pending;
    const promise = this.admission
      .run(async () => {
        this.builds++;
        const archive = await buildArchive(source, root);
        this.built.set(key, archive);
        return archive;
      })
      .finally(() => this.building.delete(key));
    this.building.set(key, promise);
    return promise;
  }
}

/**
 * The archive of `source`'s files under `root/`: the same bytes as `versionTarGz` of them (deflate
 * without flushes does not depend on how its input is split; a test compares the two).
 */
async function buildArchive(source: ArchiveSource, root: string): Promise<Buffer> {
  const gzip = createGzip(TAR_GZIP_OPTIONS);
  const out: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = once(gzip, 'end');
  // An error of the gzip stream rejects `ended`; awaited below, or the build's own error wins.
  ended.catch(() => {});
  try {
    const paths = [...(await source.paths())].sort(comparePaths);
    for (const path of paths) {
      await nextTurn();
      const content = await source.content(path);
      for (const part of tarEntry(root ? `${root}/${path}` : path, content)) {
        if (!gzip.write(part)) await once(gzip, 'drain');
      }
    }
    gzip.end(TAR_END);
    await ended;
  } catch (error) {
    gzip.destroy();
    throw error;
  }
  return Buffer.concat(out);
}

/** The process's archive cache (shared by every app in it; bounded). */
export const archiveCache = new ArchiveCache();

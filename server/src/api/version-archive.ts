/**
 * `.../archive.tar.gz` (docs/server.md "HTTP API"): the files of one version directory as a gzipped ustar
 * archive under the template's name, byte-for-byte deterministic for a version digest (the one
 * writer, client/src/registry/version-tar.ts), so its ETag can be the version digest.
 */
import { LRUCache } from 'lru-cache';
import { versionTarGz } from '../../../client/src/registry/index.js';

/**
 * Built archives by version digest (docs/server.md, "HTTP API"): an archive is a pure function of
 * the digest, so it is built once — compressed on libuv's worker threads, off the request thread —
 * and kept in a byte-bounded LRU (64 MiB by default); concurrent requests for one digest share one
 * build.
 */
export class ArchiveCache {
  private readonly built: LRUCache<string, Buffer>;
  private readonly building = new Map<string, Promise<Buffer>>();
  /** Archives built so far (for tests and metrics). */
  builds = 0;

  constructor(maxBytes = 64 * 1024 * 1024) {
    this.built = new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (b) => b.length || 1 });
  }

  async get(
    digest: string,
    root: string,
    files: () =>
      | readonly { path: string; content: Buffer }[]
      | Promise<readonly { path: string; content: Buffer }[]>,
  ): Promise<Buffer> {
    const key = `${digest}\0${root}`;
    const hit = this.built.get(key);
    if (hit) return hit;
    const pending = this.building.get(key);
    if (pending) return pending;
    const promise = (async () => {
      this.builds++;
      const archive = await versionTarGz(await files(), root);
      this.built.set(key, archive);
      return archive;
    })().finally(() => this.building.delete(key));
    this.building.set(key, promise);
    return promise;
  }
}

/** The process's archive cache (shared by every app in it; bounded). */
export const archiveCache = new ArchiveCache();

/**
 * `.../archive.tar.gz` (docs/server.md "HTTP API"): the files of one version directory as a gzipped ustar
 * archive, byte-for-byte deterministic for a version digest (sorted paths, mtime 0, mode 0644,
 * no owner names), so its ETag can be the version digest.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { LRUCache } from 'lru-cache';

const gzipAsync = promisify(gzip);

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(path: string, size: number): Buffer {
  const block = Buffer.alloc(512, 0);
  let name = path;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = path.lastIndexOf('/', 155);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
    if (cut <= 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155) {
      throw new Error(`path too long for a ustar archive: ${path}`);
    }
  }
  block.write(name, 0, 100, 'utf8');
  block.write(octal(0o644, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(0, 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write('0', 156, 'ascii');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  block.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(sum, 7), 148, 'ascii');
  block.write(' ', 155, 'ascii');
  return block;
}

/** The ustar archive of `files` (paths relative to the version directory) under `root`. */
function tarOf(root: string, files: readonly { path: string; content: Buffer }[]): Buffer {
  const parts: Buffer[] = [];
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const f of sorted) {
    parts.push(header(`${root}/${f.path}`, f.content.length), f.content);
    const pad = (512 - (f.content.length % 512)) % 512;
    if (pad) parts.push(Buffer.alloc(pad, 0));
  }
  parts.push(Buffer.alloc(1024, 0));
  return Buffer.concat(parts);
}

/**
 * Built archives by version digest (docs/server.md, "Archives"): an archive is a pure function of
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
      const archive = await gzipAsync(tarOf(root, await files()), { level: 9 });
      this.built.set(key, archive);
      return archive;
    })().finally(() => this.building.delete(key));
    this.building.set(key, promise);
    return promise;
  }
}

/** The process's archive cache (shared by every app in it; bounded). */
export const archiveCache = new ArchiveCache();

/**
 * The one deterministic archive of a version's files (docs/oci.md "The artifact", docs/server.md
 * "Archives"): a ustar archive with sorted paths, mtime 0, mode 0644, uid/gid 0 and no owner names,
 * gzipped at level 9 with a zero mtime in its header. The same files give the same bytes, so the
 * server's `archive.tar.gz`, its OCI layers and `dm push` agree for a version digest.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { DmError } from '../error.js';
import { comparePaths } from './compare-paths.js';

const gzipAsync = promisify(gzip);

export interface TarFile {
  /** Relative to the version directory, `/` separators. */
  path: string;
  content: Buffer;
}

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
      throw new DmError(
        'INVALID_PATH',
        `'${path}' is too long for a ustar archive (a name of at most 100 bytes after a directory of at most 155)`,
        { category: 'invalid-input' },
      );
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

/**
 * One file's ustar entry: its header, its content (not copied) and the zeros that end its last
 * 512-byte block. An archive is its files' entries in `comparePaths` order, then TAR_END.
 */
export function tarEntry(path: string, content: Buffer): Buffer[] {
  const parts = [header(path, content.length), content];
  const pad = (512 - (content.length % 512)) % 512;
  if (pad) parts.push(Buffer.alloc(pad, 0));
  return parts;
}

/** The end of a ustar archive: two zero blocks. */
export const TAR_END = Buffer.alloc(1024, 0);

/** The ustar archive of `files`, each under `root/` (or at the archive's top when `root` is ''). */
export function versionTar(files: readonly TarFile[], root = ''): Buffer {
  const parts: Buffer[] = [];
  const sorted = [...files].sort((a, b) => comparePaths(a.path, b.path));
  for (const f of sorted) parts.push(...tarEntry(root ? `${root}/${f.path}` : f.path, f.content));
  parts.push(TAR_END);
  return Buffer.concat(parts);
}

/** gzip's options for an archive (level 9; Node writes mtime 0): the same for every writer. */
export const TAR_GZIP_OPTIONS = { level: 9 } as const;

/** `versionTar` gzipped (on libuv's worker threads, off the calling thread). */
export function versionTarGz(files: readonly TarFile[], root = ''): Promise<Buffer> {
  return gzipAsync(versionTar(files, root), TAR_GZIP_OPTIONS);
}

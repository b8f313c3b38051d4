/**
 * Hand-built tar archives for the safe-extraction tests: tar writers refuse to produce hostile
 * entries, so the headers are written here byte by byte (ustar).
 */
import { gzipSync } from 'node:zlib';

export interface TarEntry {
  path: string;
  content?: string;
  /** '0' file, '2' symlink, '1' hard link, '5' directory. */
  type?: '0' | '1' | '2' | '5';
  linkpath?: string;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

export function tarOf(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.content ?? '', 'utf8');
    const h = Buffer.alloc(512, 0);
    h.write(e.path, 0, 100, 'utf8');
    h.write(octal(0o644, 8), 100, 'ascii');
    h.write(octal(0, 8), 108, 'ascii');
    h.write(octal(0, 8), 116, 'ascii');
    h.write(octal(e.type === '0' || e.type === undefined ? body.length : 0, 12), 124, 'ascii');
    h.write(octal(0, 12), 136, 'ascii');
    h.write('        ', 148, 'ascii');
    h.write(e.type ?? '0', 156, 'ascii');
    if (e.linkpath) h.write(e.linkpath, 157, 100, 'utf8');
    h.write('ustar\0', 257, 'ascii');
    h.write('00', 263, 'ascii');
    let sum = 0;
    for (const b of h) sum += b;
    h.write(octal(sum, 7), 148, 'ascii');
    parts.push(h);
    if (e.type === '0' || e.type === undefined) {
      parts.push(body, Buffer.alloc((512 - (body.length % 512)) % 512, 0));
    }
  }
  parts.push(Buffer.alloc(1024, 0));
  return Buffer.concat(parts);
}

/** A GitHub-like tarball (one top directory) with one hostile path among normal files. */
export function hostileTarball(path: string): Buffer {
  return gzipSync(
    tarOf([
      { path: 'acme-hostile-0000000/', type: '5' },
      { path: 'acme-hostile-0000000/redis/v1/redis.jinja', content: 'x' },
      { path: `acme-hostile-0000000/${path}`, content: 'evil' },
    ]),
  );
}

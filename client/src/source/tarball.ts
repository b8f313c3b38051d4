/**
 * Reading a repository archive (a GitHub tarball) in memory, untrusted: entries whose path is
 * absolute, contains `..` or a NUL, hard links, and symbolic links pointing outside
 * the archive are rejected (the whole archive: a source that produces them is hostile or broken).
 * A symbolic link is never followed: like git, it is a file whose content is its target, so
 * digests agree with the git tree and the client. Special files are skipped; sizes and entry
 * counts are bounded. Nothing is written to disk.
 *
 * Every bound rejects promptly: the archive is decompressed here, as a stream, counting the bytes
 * it inflates to (a few KiB of gzip can inflate to GiBs), and any error of the decompressor or the
 * parser settles the read at once (the parser's own "aborted" errors end no stream).
 */
import { posix } from 'node:path';
import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { DmError } from '../error.js';
import { pathProblem } from '../registry/content-names.js';

export interface TarballLimits {
  /** Largest archive accepted (compressed), bytes. Default 512 MiB. */
  maxArchiveBytes?: number;
  /** Largest sum of file sizes, bytes; the decompressed archive may exceed it by its headers only. Default 1 GiB. */
  maxTotalBytes?: number;
  /** Largest single file, bytes. Default 32 MiB. */
  maxFileBytes?: number;
  /** Most entries. Default 500,000. */
  maxEntries?: number;
}

export interface TarballContents {
  /** Regular files by path (first path segment stripped when `stripFirst`). */
  files: Map<string, Buffer>;
  /** Paths of links and special entries that were skipped. */
  skipped: string[];
}

export interface ReadTarballOptions extends TarballLimits {
  /** Drop the first path segment (GitHub's `owner-repo-sha/` prefix). */
  stripFirst?: boolean;
  /** Where the archive came from, for messages. */
  source?: string;
}

function unsafe(path: string, why: string, source: string): DmError {
  return new DmError('UNSAFE_ARCHIVE', `${source}: archive entry '${path}' ${why}`, {
    category: 'blocked',
    details: { path, source },
  });
}

/** Checks an archive path; returns it normalised (no leading `./`, no trailing `/`). */
export function checkArchivePath(path: string, source = 'archive'): string {
  if (path.includes('\0')) throw unsafe(path, 'contains a NUL character', source);
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) throw unsafe(path, 'is an absolute path', source);
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) throw unsafe(path, "escapes the archive with '..'", source);
  return parts.join('/');
}

/** Reads a (gzipped or plain) tar archive into memory, safely. */
export async function readTarball(
  archive: Buffer,
  options: ReadTarballOptions = {},
): Promise<TarballContents> {
  const source = options.source ?? 'archive';
  const maxArchive = options.maxArchiveBytes ?? 512 * 1024 * 1024;
  const maxTotal = options.maxTotalBytes ?? 1024 * 1024 * 1024;
  const maxFile = options.maxFileBytes ?? 32 * 1024 * 1024;
  const maxEntries = options.maxEntries ?? 500_000;
  if (archive.length > maxArchive) {
    throw new DmError(
      'ARCHIVE_TOO_LARGE',
      `${source}: archive is ${archive.length} bytes, more than ${maxArchive}`,
      {
        category: 'limit',
      },
    );
  }
  const files = new Map<string, Buffer>();
  const skipped: string[] = [];
  let total = 0;
  let count = 0;
  let failure: unknown;
  // Headers and padding: at most 1.5 KiB per entry (header, long-name header, padding) besides content.
  const maxInflated = maxTotal + Math.min(maxEntries, 100_000) * 1536 + 1024 * 1024;
  const tooLarge = (what: string) =>
    new DmError('ARCHIVE_TOO_LARGE', `${source}: ${what}`, { category: 'limit', details: { source } });

  await new Promise<void>((resolve) => {
    let settled = false;
    const parser = new Parser({
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        if (failure) {
          entry.resume();
          return;
        }
        try {
          count++;
          if (count > maxEntries) throw tooLarge(`more than ${maxEntries} entries`);
          const raw = String(entry.path);
          let path = checkArchivePath(raw, source);
          if (entry.type === 'Link') throw unsafe(raw, 'is a hard link', source);
          if (options.stripFirst) path = path.split('/').slice(1).join('/');
          // A name the one rule for content names refuses (a backslash, a control character:
          // docs/registry-layout.md "Paths and names") is not read: it is skipped, as git trees and
          // directories leave it out, and the scanner reports it where the tree lists it.
          if (path !== '' && pathProblem(path) !== undefined) {
            skipped.push(path);
            entry.resume();
            return;
          }
          if (entry.type === 'SymbolicLink') {
            // As git stores it: a file whose content is the link's target (never followed).
            const target = String(entry.linkpath ?? '');
            if (
              target.startsWith('/') ||
              posix.normalize(posix.join(posix.dirname(raw), target)).startsWith('..')
            ) {
              throw unsafe(raw, `is a link to '${target}', outside the archive`, source);
            }
            if (path !== '') files.set(path, Buffer.from(target, 'utf8'));
            entry.resume();
            return;
          }
          if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'ContiguousFile') {
            if (entry.type !== 'Directory' && path !== '') skipped.push(path);
            entry.resume();
            return;
          }
          if (path === '') {
            entry.resume();
            return;
          }
          const size = entry.size ?? 0;
          if (size > maxFile) throw tooLarge(`'${path}' is ${size} bytes, more than ${maxFile}`);
          total += size;
          if (total > maxTotal) throw tooLarge(`files sum to more than ${maxTotal} bytes`);
          const chunks: Buffer[] = [];
          entry.on('data', (chunk: Buffer) => chunks.push(chunk));
          entry.on('end', () => files.set(path, Buffer.concat(chunks)));
        } catch (error) {
          fail(error);
          entry.resume();
        }
      },
    });
    const gzipped = archive.length >= 2 && archive[0] === 0x1f && archive[1] === 0x8b;
    const gunzip = gzipped ? createGunzip() : undefined;
    function fail(error: unknown): void {
      failure ??= error;
      finish();
    }
    function finish(): void {
      if (settled) return;
      settled = true;
      if (failure) {
        gunzip?.destroy();
        parser.abort(new Error('stopped'));
      }
      resolve();
    }
    parser.on('error', fail);
    parser.on('abort', fail);
    parser.on('close', finish);
    parser.on('end', finish);
    if (!gunzip) {
      try {
        parser.end(archive);
      } catch (error) {
        fail(error);
      }
      return;
    }
    let inflated = 0;
    gunzip.on('data', (chunk: Buffer) => {
      if (failure) return;
      inflated += chunk.length;
      if (inflated > maxInflated) {
        fail(tooLarge(`decompresses to more than ${maxInflated} bytes`));
        return;
      }
      try {
        parser.write(chunk);
      } catch (error) {
        fail(error);
      }
    });
    gunzip.on('error', fail);
    gunzip.on('end', () => {
      if (failure) return;
      try {
        parser.end();
      } catch (error) {
        fail(error);
      }
    });
    gunzip.end(archive);
  });
  if (failure) {
    if (failure instanceof DmError) throw failure;
    throw new DmError(
      'INVALID_ARCHIVE',
      `${source}: not a readable tar archive: ${(failure as Error).message}`,
      {
        category: 'invalid-input',
      },
    );
  }
  return { files, skipped };
}

/**
 * The content-addressed cache (docs/client.md "Cache"): files stored by sha256 under
 * `$XDG_CACHE_HOME/dm/content/sha256/<2>/<62>`, shared across projects, verified on every read
 * (a corrupted entry is discarded with a warning so the caller fetches it again), written with
 * temp file + rename so that concurrent `dm` processes never see a partial file. Metadata (version
 * lists, resolutions) lives beside it under `meta/`, with the ETag and the time it was fetched.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { DmError } from '../error.js';

export interface ContentCacheOptions {
  /** The cache root, usually `config.dirs.cache`. */
  root: string;
  /** Called with one sentence when something is wrong but recoverable (a corrupted entry). */
  warn?: (message: string) => void;
}

export interface CacheEntry {
  digest: string;
  size: number;
  modified: Date;
}

export interface MetaRecord<T> {
  value: T;
  etag?: string | undefined;
  /** Milliseconds since the epoch. */
  fetchedAt: number;
}

const HEX = /^[0-9a-f]{64}$/;

/** `sha256:<hex>` of the bytes. */
export function sha256Digest(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** Accepts `sha256:<hex>` or a bare hex digest; returns the hex part, or throws. */
export function digestHex(digest: string): string {
  const hex = digest.startsWith('sha256:') ? digest.slice(7) : digest;
  if (!HEX.test(hex)) {
    throw new DmError('INVALID_DIGEST', `'${digest}' is not a sha256 digest`, { category: 'invalid-input' });
  }
  return hex;
}

export class ContentCache {
  readonly root: string;
  private readonly warn: (message: string) => void;
  private readonly warned = new Set<string>();

  constructor(options: ContentCacheOptions) {
    this.root = options.root;
    this.warn = options.warn ?? (() => {});
  }

  /** Where the content with this digest lives. */
  pathOf(digest: string): string {
    const hex = digestHex(digest);
    return join(this.root, 'content', 'sha256', hex.slice(0, 2), hex.slice(2));
  }

  /** The content, verified against its digest; undefined when absent or corrupted (then removed). */
  async read(digest: string): Promise<Buffer | undefined> {
    const path = this.pathOf(digest);
    let data: Buffer;
    try {
      data = await readFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const expected = `sha256:${digestHex(digest)}`;
    if (sha256Digest(data) !== expected) {
      if (!this.warned.has(expected)) {
        this.warned.add(expected);
        this.warn(`cache entry ${expected} was corrupted; discarded it and will fetch it again`);
      }
      await unlink(path).catch(() => {});
      return undefined;
    }
    return data;
  }

  async has(digest: string): Promise<boolean> {
    return (await this.read(digest)) !== undefined;
  }

  /**
   * Stores content and returns its digest. With `expected`, content whose digest differs is rejected
   * (DIGEST_MISMATCH) and nothing is written.
   */
  async write(data: Buffer | string, expected?: string): Promise<string> {
    const digest = sha256Digest(data);
    if (expected !== undefined && digest !== `sha256:${digestHex(expected)}`) {
      throw new DmError('DIGEST_MISMATCH', `content expected to be ${expected} has digest ${digest}`, {
        details: { expected, actual: digest },
      });
    }
    const path = this.pathOf(digest);
    try {
      const existing = await stat(path);
      if (existing.size === Buffer.byteLength(data) && (await this.read(digest)) !== undefined) return digest;
    } catch {
      // not cached yet
    }
    await mkdir(join(path, '..'), { recursive: true });
    await writeFileAtomic(path, data);
    return digest;
  }

  /** Every content entry. */
  async list(): Promise<CacheEntry[]> {
    const base = join(this.root, 'content', 'sha256');
    const out: CacheEntry[] = [];
    let prefixes: string[];
    try {
      prefixes = await readdir(base);
    } catch {
      return out;
    }
    for (const prefix of prefixes.sort()) {
      for (const rest of (await readdir(join(base, prefix))).sort()) {
        if (!HEX.test(prefix + rest)) continue; // temp files of writers in progress
        const s = await stat(join(base, prefix, rest));
        out.push({ digest: `sha256:${prefix}${rest}`, size: s.size, modified: s.mtime });
      }
    }
    return out;
  }

  /** Re-hashes every entry; corrupted ones are removed and returned. */
  async verify(): Promise<{ checked: number; corrupted: string[] }> {
    const corrupted: string[] = [];
    const entries = await this.list();
    for (const entry of entries) {
      const data = await readFile(this.pathOf(entry.digest));
      if (sha256Digest(data) !== entry.digest) {
        corrupted.push(entry.digest);
        await unlink(this.pathOf(entry.digest)).catch(() => {});
      }
    }
    return { checked: entries.length, corrupted };
  }

  /** Removes content (and metadata) entries last modified before `olderThan`, or everything. */
  async clean(options: { olderThan?: Date } = {}): Promise<{ removed: number; bytes: number }> {
    let removed = 0;
    let bytes = 0;
    for (const entry of await this.list()) {
      if (options.olderThan && entry.modified >= options.olderThan) continue;
      await unlink(this.pathOf(entry.digest)).catch(() => {});
      removed++;
      bytes += entry.size;
    }
    if (!options.olderThan) await rm(join(this.root, 'meta'), { recursive: true, force: true });
    return { removed, bytes };
  }

  private metaPath(key: string): string {
    const hex = createHash('sha256').update(key).digest('hex');
    return join(this.root, 'meta', hex.slice(0, 2), `${hex.slice(2)}.json`);
  }

  /**
   * The metadata records whose key starts with `prefix`, reading at most `limit` files of at most
   * `maxBytes` each (shell completion lists remembered references with it; unreadable ones are skipped).
   */
  async listMeta<T>(
    prefix: string,
    options: { limit: number; maxBytes: number },
  ): Promise<{ key: string; value: T }[]> {
    const base = join(this.root, 'meta');
    const out: { key: string; value: T }[] = [];
    let read = 0;
    const dirs = await readdir(base).catch(() => [] as string[]);
    for (const dir of dirs.sort()) {
      const files = await readdir(join(base, dir)).catch(() => [] as string[]);
      for (const file of files.sort()) {
        if (read++ >= options.limit) return out;
        try {
          const path = join(base, dir, file);
          if ((await stat(path)).size > options.maxBytes) continue;
          const record = JSON.parse(await readFile(path, 'utf8')) as { key?: unknown; value: T };
          if (typeof record.key === 'string' && record.key.startsWith(prefix)) {
            out.push({ key: record.key, value: record.value });
          }
        } catch {}
      }
    }
    return out;
  }

  /** Metadata stored under `key` (any string: a URL, a reference), or undefined. */
  async readMeta<T>(key: string): Promise<MetaRecord<T> | undefined> {
    try {
      const record = JSON.parse(await readFile(this.metaPath(key), 'utf8')) as MetaRecord<T> & {
        key: string;
      };
      return record.key === key ? record : undefined;
    } catch {
      return undefined; // absent or unreadable: treated as a miss, rewritten on the next fetch
    }
  }

  async writeMeta<T>(
    key: string,
    value: T,
    options: { etag?: string | undefined; now?: number } = {},
  ): Promise<void> {
    const path = this.metaPath(key);
    await mkdir(join(path, '..'), { recursive: true });
    const record = { key, value, etag: options.etag, fetchedAt: options.now ?? Date.now() };
    await writeFileAtomic(path, JSON.stringify(record));
  }
}

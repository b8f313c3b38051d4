/**
 * One command's resolutions (docs/client.md "dm install, step by step"): references — registry
 * references and plain URLs alike — go through the resolver chain once each, and every file is
 * read from the content cache or fetched through the chain once, verified against its digest.
 * `dm install` and the registry template source (expand, deploy, install's render-time discovery)
 * share one session, so a reference a template emits resolves exactly as the ones written in the
 * configuration do.
 */
import { DmError } from '../error.js';
import type { ContentCache } from '../fetch/content-cache.js';
import { formatReference, type Reference } from '../reference/reference.js';
import { fetchThroughChain, type Resolver, resolveThroughChain } from './resolver.js';
import type { ResolvedFile, ResolvedVersion } from './types.js';

export interface ResolutionSessionOptions {
  chain: readonly Resolver[];
  cache: ContentCache;
  /** A file not in the cache is OFFLINE_MISSING (exit 5) rather than fetched. */
  offline: boolean;
}

export class ResolutionSession {
  /** Canonical reference → its resolution (`reference` is that key). */
  readonly resolved = new Map<string, ResolvedVersion>();
  /** Canonical reference → the name of the resolver that answered it. */
  readonly answeredBy = new Map<string, string>();
  /** Digests fetched from a source (not the cache) in this session. */
  readonly fetched = new Set<string>();
  private readonly pending = new Map<string, Promise<void>>();
  /** One read or fetch per digest, however many files and callers share it. */
  private readonly files = new Map<string, Promise<Buffer>>();

  constructor(readonly options: ResolutionSessionOptions) {}

  /** Resolves references (in one batch through the chain for those not yet resolved), in order. */
  async resolve(refs: readonly Reference[]): Promise<ResolvedVersion[]> {
    const keys = refs.map(formatReference);
    const todo = new Map<string, Reference>();
    keys.forEach((key, i) => {
      if (!this.resolved.has(key) && !this.pending.has(key)) todo.set(key, refs[i]!);
    });
    if (todo.size > 0) {
      const batch = resolveThroughChain(this.options.chain, [...todo.values()]).then(
        ({ resolved, answeredBy }) => {
          [...todo.keys()].forEach((key, i) => {
            this.resolved.set(key, { ...resolved[i]!, reference: key });
            this.answeredBy.set(key, answeredBy[i]!);
          });
        },
      );
      for (const key of todo.keys()) this.pending.set(key, batch);
      batch
        .finally(() => {
          for (const key of todo.keys()) this.pending.delete(key);
        })
        .catch(() => {});
    }
    await Promise.all(keys.map((key) => this.pending.get(key)));
    return keys.map((key) => this.resolved.get(key)!);
  }

  /** Whether a file's bytes were read or fetched in this session. */
  hasRead(sha256: string): boolean {
    return this.files.has(sha256);
  }

  /** A file's bytes: from the cache, else fetched through the chain and stored (verified). */
  file(resolved: ResolvedVersion, file: ResolvedFile): Promise<Buffer> {
    let read = this.files.get(file.sha256);
    if (!read) {
      read = fetchFile(this.options, resolved, file, this.fetched);
      this.files.set(file.sha256, read);
    }
    return read;
  }

  /** Every file of a version, path → bytes. */
  async contents(resolved: ResolvedVersion): Promise<Map<string, Buffer>> {
    const contents = new Map<string, Buffer>();
    for (const file of resolved.files) contents.set(file.path, await this.file(resolved, file));
    return contents;
  }
}

/** A file's bytes from the cache, else fetched through the chain and stored (verified against its digest). */
async function fetchFile(
  { chain, cache, offline }: ResolutionSessionOptions,
  resolved: ResolvedVersion,
  file: ResolvedFile,
  fetched: Set<string>,
): Promise<Buffer> {
  const cached = await cache.read(file.sha256);
  if (cached) return cached;
  const where = `${file.path} of ${resolved.version ? `${resolved.template}:${resolved.version}` : resolved.template}`;
  let data: Buffer;
  try {
    data = await fetchThroughChain(chain, resolved, file);
  } catch (error) {
    if (offline && error instanceof DmError && error.code === 'CONTENT_NOT_FOUND') {
      throw new DmError(
        'OFFLINE_MISSING',
        `${where} is not in the cache, and --offline forbids fetching it`,
        {
          category: 'unreachable',
          hint: 'run dm install once with network access',
        },
      );
    }
    throw error;
  }
  fetched.add(file.sha256);
  try {
    await cache.write(data, file.sha256);
  } catch (error) {
    if (error instanceof DmError && error.code === 'DIGEST_MISMATCH') {
      throw new DmError('DIGEST_MISMATCH', `${where} does not match its recorded digest (${file.sha256})`, {
        category: 'validation',
        // A plain URL (no version) changed at its address; a registry under a locked version.
        hint: resolved.version
          ? 'the registry changed under a locked version; run dm update to re-lock it deliberately'
          : 'the URL now serves other bytes than dm.lock recorded; review them, then run dm update to re-lock it deliberately',
      });
    }
    throw error;
  }
  return data;
}

/**
 * The mirror in front of the resolve endpoints (docs/mirroring.md): decides, per reference, whether
 * the local answer stands (content already stored, a floating reference checked within the upstream
 * TTL, or an upstream known down) or the upstreams are asked (pull-through), and says which in a
 * `Cache-Status` header. References of registries this server indexes itself never go upstream.
 */
import { LRUCache } from 'lru-cache';
import { DmError, httpStatusFor } from '../../../client/src/error.js';
import { parseReference } from '../../../client/src/reference/index.js';
import {
  cacheStatus,
  type MirrorTarget,
  type PullResult,
  PullThrough,
  type Revalidation,
  type VersionKey,
} from './pull-through.js';
import { isUpstreamFault, type Upstream } from './upstream.js';

/** A resolve answer as the catalog gives it: status and ready JSON. */
export interface LocalAnswer {
  status: number;
  body: string;
}

export interface MirroredAnswer extends LocalAnswer {
  cacheStatus: string;
  /** Seconds since the mirror last heard from the upstream about this reference (stale answers). */
  age?: number;
}

export interface MirrorOptions {
  upstreams: readonly Upstream[];
  target: MirrorTarget;
  /** Whether this server indexes the registry itself (its references never go upstream). */
  ownRegistry(name: string): boolean;
  /** Brings what `ownRegistry` answers from up to date (awaited before each answer). */
  refreshOwn?(): Promise<void>;
  /** Registry for short references, as the catalog has it. */
  defaultRegistry?: () => string | undefined;
  /** How long what a floating reference resolves to is trusted before asking again, ms (default 300 s). */
  ttlMs?: number;
  negativeTtlMs?: number;
  now?: () => number;
  /** Drops cached answers after content was stored. */
  onStored(registry: string): void;
  /** A stored version the upstream no longer serves (a floating reference to it went not-found). */
  onRemovedUpstream?(key: { registry: string; collection: string; template: string; version: string }): void;
  /**
   * The versions this mirror holds of `registry` were answered from its store and the upstream's
   * version list was not asked about them for `ttlMs`: revalidate their quarantine and acceptance
   * state (docs/mirroring.md, "Versions held"). Called in the background, at most once per
   * `ttlMs` per registry; must not throw.
   */
  revalidateHeld?(registry: string): void;
}

const BATCH_CONCURRENCY = 8;

export class Mirror {
  readonly pullThrough: PullThrough;
  /** Per floating reference: when the upstream last answered about it, and that answer's ETag. */
  private readonly checked: LRUCache<string, { at: number; revalidate?: Revalidation | undefined }>;
  /** When an upstream last answered about each registry (for the staleness the registries API shows). */
  private readonly heard = new Map<string, number>();
  /** Per registry (lower case): since when what the mirror holds of it counts as revalidated. */
  private readonly heldChecked = new LRUCache<string, number>({ max: 100_000 });
  readonly ttlMs: number;
  private readonly now: () => number;

  constructor(private readonly options: MirrorOptions) {
    this.pullThrough = new PullThrough({
      upstreams: options.upstreams,
      target: options.target,
      ...(options.negativeTtlMs === undefined ? {} : { negativeTtlMs: options.negativeTtlMs }),
    });
    this.ttlMs = options.ttlMs ?? 300_000;
    this.now = options.now ?? Date.now;
    this.checked = new LRUCache({
      maxSize: 16 * 1024 * 1024,
      sizeCalculation: (v, k) => k.length * 2 + 64 + (v.revalidate?.etag.length ?? 0) * 2,
    });
  }

  get upstreams(): readonly Upstream[] {
    return this.options.upstreams;
  }

  /** The configured upstream a mirrored registry's source (`<upstream url>/<name>`) names. */
  upstreamFor(source: string): Upstream | undefined {
    return this.options.upstreams.find((u) => source.startsWith(`${u.url}/`));
  }

  /** Notes that the upstream answered about `registry` now. */
  noteHeard(registry: string): void {
    if (this.heard.size > 100_000) this.heard.clear();
    this.heard.set(registry.toLowerCase(), this.now());
  }

  /** When an upstream last answered about `registry` in this process (ms), or undefined. */
  heardAt(registry: string): number | undefined {
    return this.heard.get(registry.toLowerCase());
  }

  /** The registry a reference names, or undefined when it does not parse (the catalog answers that). */
  private registryOf(ref: string): { name: string; exact: boolean } | undefined {
    try {
      const parsed = parseReference(ref, {
        defaultRegistry: this.options.defaultRegistry?.(),
        allowMissingVersion: true,
      });
      if (parsed.kind !== 'registry') return undefined;
      return { name: `${parsed.host}/${parsed.owner}/${parsed.repo}`, exact: parsed.version?.exact === true };
    } catch {
      return undefined;
    }
  }

  /** Whether `ref` could involve an upstream at all. */
  involves(ref: string): boolean {
    const registry = this.registryOf(ref);
    return registry !== undefined && !this.options.ownRegistry(registry.name);
  }

  /**
   * Answers one reference: `local()` is the catalog's answer (called again after a store).
   * Never throws for upstream trouble: a stored answer is served stale, otherwise the answer is
   * `UPSTREAM_UNAVAILABLE` (502) naming the upstream.
   */
  async resolve(ref: string, local: () => LocalAnswer | Promise<LocalAnswer>): Promise<MirroredAnswer> {
    const registry = this.registryOf(ref);
    await this.options.refreshOwn?.();
    const first = await local();
    if (!registry || this.options.ownRegistry(registry.name)) return { ...first, cacheStatus: '' };
    const key = ref;
    const checked = this.checked.get(key);
    const checkedAt = checked?.at;
    if (first.status === 200) {
      if (registry.exact || (checkedAt !== undefined && this.now() - checkedAt < this.ttlMs)) {
        // The content is never revalidated; its quarantine and acceptance state is, per registry.
        this.heldDue(registry.name, first.body);
        return { ...first, cacheStatus: cacheStatus({ hit: true }) };
      }
      if (this.pullThrough.allOpen()) return this.stale(first, checkedAt);
    } else if (this.pullThrough.allOpen()) {
      // Known down and nothing stored: fail at once, naming the upstream.
      return this.unavailable(first);
    }
    let result: PullResult;
    try {
      // A floating reference answered before is revalidated conditionally (docs/mirroring.md).
      result = await this.pullThrough.pull(
        ref,
        undefined,
        first.status === 200 ? checked?.revalidate : undefined,
      );
    } catch (error) {
      if (isUpstreamFault(error)) {
        if (first.status === 200) return this.stale(first, checkedAt);
        return {
          status: httpStatusFor(error),
          body: JSON.stringify(error.toJSON()),
          cacheStatus: cacheStatus({ fwd: 'miss', detail: 'upstream-unreachable' }),
        };
      }
      throw error;
    }
    if (result.kind === 'unchanged') {
      this.checked.set(key, { at: this.now(), revalidate: checked?.revalidate });
      this.noteHeard(registry.name);
      const after = await local();
      if (after.status !== 200) return { ...after, cacheStatus: cacheStatus({ fwd: 'miss' }) };
      return { ...after, cacheStatus: `${cacheStatus({ hit: true, fwd: 'stale' })}; fwd-status=304` };
    }
    this.checked.set(key, {
      at: this.now(),
      revalidate:
        result.kind !== 'not-found' && result.etag !== undefined
          ? { upstream: result.upstream, etag: result.etag }
          : undefined,
    });
    if (result.kind === 'not-found') {
      if (first.status === 200) {
        this.removedUpstream(first.body);
        return {
          ...(await local()),
          cacheStatus: cacheStatus({ hit: true, fwd: 'stale', detail: 'removed-upstream' }),
        };
      }
      return {
        status: result.status,
        body: JSON.stringify({ error: result.error }),
        cacheStatus: cacheStatus({ fwd: 'miss' }),
      };
    }
    this.noteHeard(result.resolution.registry);
    if (result.kind === 'stored') {
      this.heldSince(result.resolution.registry);
      this.options.onStored(result.resolution.registry);
    }
    // A changed answer about a version it holds: the registry's other versions may have changed too.
    if (result.kind === 'present') this.heldDue(result.resolution.registry);
    const after = await local();
    // A caller who may not read what was stored (a private registry) learns nothing of it: the
    // answer is the catalog's not-found, with the Cache-Status of an upstream that had nothing.
    if (after.status !== 200) return { ...after, cacheStatus: cacheStatus({ fwd: 'miss' }) };
    if (result.kind === 'stored')
      return { ...after, cacheStatus: cacheStatus({ fwd: 'miss', stored: true }) };
    if (result.kind === 'mismatch') {
      return {
        ...after,
        cacheStatus: cacheStatus({ hit: true, fwd: 'stale', detail: 'upstream-digest-differs' }),
      };
    }
    return { ...after, cacheStatus: `${cacheStatus({ hit: true, fwd: 'stale' })}; fwd-status=200` };
  }

  /**
   * Makes sure an exact version is stored before its content (files, schema, archive) is served:
   * a version of a registry this server does not index itself and does not hold is pulled through
   * (single flight, verified, stored). Returns the `Cache-Status` to send ('' when no upstream is
   * involved); an upstream that is down throws `UPSTREAM_UNAVAILABLE`. A version the upstream does
   * not have is left to the caller's own not-found answer.
   */
  async ensureVersion(key: VersionKey): Promise<string> {
    await this.options.refreshOwn?.();
    if (this.options.ownRegistry(key.registry)) return '';
    if ((await this.options.target.storedDigest(key)) !== undefined) return cacheStatus({ hit: true });
    if (this.pullThrough.allOpen()) {
      throw this.unavailableError({ status: 404, body: '' });
    }
    const name = [key.registry, key.collection, key.template].filter(Boolean).join('/');
    const result = await this.pullThrough.pull(`${name}:=${key.version}`);
    if (result.kind === 'not-found') return cacheStatus({ fwd: 'miss' });
    this.noteHeard(key.registry);
    if (result.kind === 'stored') {
      this.heldSince(result.resolution.registry);
      this.options.onStored(result.resolution.registry);
      return cacheStatus({ fwd: 'miss', stored: true });
    }
    return cacheStatus({ hit: true });
  }

  /**
   * Starts the revalidation clock of a registry the mirror just pulled a version of, unless it
   * runs already: what was just pulled is fresh, and a registry pulled from often is still
   * revalidated every TTL.
   */
  private heldSince(registry: string): void {
    const key = registry.toLowerCase();
    if (!this.heldChecked.has(key)) this.heldChecked.set(key, this.now());
  }

  /**
   * Asks for the revalidation of the held versions of `registry` (spelt as the stored answer
   * `body` names it, when given) when the last one is older than the TTL (docs/mirroring.md,
   * "Versions held"). The answer never waits for it; nothing is asked while every upstream is
   * known down.
   */
  private heldDue(registry: string, body?: string): void {
    const hook = this.options.revalidateHeld;
    if (!hook || this.pullThrough.allOpen()) return;
    const key = registry.toLowerCase();
    const since = this.heldChecked.get(key);
    if (since !== undefined && this.now() - since < this.ttlMs) return;
    this.heldChecked.set(key, this.now());
    // The stored name (the reference may spell the host in another case).
    let name = registry;
    try {
      const r = body === undefined ? undefined : (JSON.parse(body) as { registry?: unknown });
      if (typeof r?.registry === 'string') name = r.registry;
    } catch {
      // Not a resolution: the name as the reference gave it.
    }
    hook(name);
  }

  /** Answers many references, pulling at most a few at a time. */
  async resolveMany(
    refs: readonly string[],
    local: (ref: string) => LocalAnswer | Promise<LocalAnswer>,
  ): Promise<MirroredAnswer[]> {
    const out: MirroredAnswer[] = new Array(refs.length);
    let next = 0;
    const worker = async () => {
      while (next < refs.length) {
        const i = next++;
        const ref = refs[i]!;
        out[i] = await this.resolve(ref, () => local(ref));
      }
    };
    await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, refs.length) }, worker));
    return out;
  }

  /** Flags the version a stored answer names as removed upstream (it keeps being served). */
  private removedUpstream(body: string): void {
    try {
      const r = JSON.parse(body) as Partial<
        Record<'registry' | 'collection' | 'template' | 'version', string>
      >;
      if (r.registry && typeof r.collection === 'string' && r.template && r.version) {
        this.options.onRemovedUpstream?.({
          registry: r.registry,
          collection: r.collection,
          template: r.template,
          version: r.version,
        });
      }
    } catch {
      // Not a resolution: nothing to flag.
    }
  }

  private stale(answer: LocalAnswer, checkedAt: number | undefined): MirroredAnswer {
    return {
      ...answer,
      cacheStatus: cacheStatus({ hit: true, fwd: 'stale', detail: 'upstream-unreachable' }),
      ...(checkedAt === undefined ? {} : { age: Math.max(0, Math.floor((this.now() - checkedAt) / 1000)) }),
    };
  }

  private unavailable(first: LocalAnswer): MirroredAnswer {
    const error = this.unavailableError(first);
    return {
      status: httpStatusFor(error),
      body: JSON.stringify(error.toJSON()),
      cacheStatus: cacheStatus({ fwd: 'miss', detail: 'upstream-unreachable' }),
    };
  }

  private unavailableError(first: LocalAnswer): DmError {
    const upstream = this.options.upstreams.find((u) => u.isOpen()) ?? this.options.upstreams[0];
    const state = upstream?.state();
    const why =
      state?.state === 'unreachable'
        ? `unreachable since ${state.since} (${state.detail})`
        : state?.state === 'unauthorized'
          ? `refusing this mirror's credentials since ${state.since}`
          : state?.state === 'rate-limited'
            ? `rate-limiting this mirror until ${state.until}`
            : 'unavailable';
    return new DmError('UPSTREAM_UNAVAILABLE', `the upstream registry ${upstream?.url ?? ''} is ${why}`, {
      category: 'upstream',
      details: { upstream: upstream?.url, local: first.status },
    });
  }
}

/** Summarises the Cache-Status of a batch: the most telling of its answers. */
export function batchCacheStatus(answers: readonly MirroredAnswer[]): string {
  const statuses = answers.map((a) => a.cacheStatus).filter(Boolean);
  return (
    statuses.find((s) => s.includes('upstream-unreachable')) ??
    statuses.find((s) => s.includes('stored')) ??
    statuses.find((s) => s.includes('fwd=')) ??
    statuses[0] ??
    ''
  );
}

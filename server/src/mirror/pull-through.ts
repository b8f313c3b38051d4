/**
 * Pull-through (docs/mirroring.md): a reference the mirror cannot answer, or a floating reference
 * whose version list is older than the upstream TTL, is resolved through the upstreams in order;
 * the version it names is fetched once (resolve + archive: two requests), verified against the
 * upstream's own file list and digest, and stored, after which it is served like indexed content.
 *
 * - Concurrent first requests for one reference share one upstream exchange (single flight).
 * - An upstream 404 is remembered for the negative TTL, so a probe for a missing name costs the
 *   upstream nothing for that long.
 * - A version the mirror already stored with another digest is never replaced: the exchange
 *   reports a mismatch and the mirror keeps serving the bytes it has.
 * - An open breaker (a known-down upstream) answers at once; no caller waits on a dead upstream.
 * - A floating reference revalidated after the TTL sends the ETag of the upstream's last resolve
 *   answer (`If-None-Match`): an unchanged answer is a `304` with no body.
 */
import { LRUCache } from 'lru-cache';
import { DmError } from '../../../client/src/error.js';
import { isRegistryName, pathProblem, versionNameProblem } from '../../../client/src/registry/index.js';
import { readTarball } from '../../../client/src/source/index.js';
import type { QuarantineInfo } from '../../../client/src/wire/registry-api.js';
import type { Resolution } from '../api/shapes.js';
import { canonicalTemplate } from '../store/first-seen.js';
import { isUpstreamFault, type Upstream } from './upstream.js';
import { type VerifiedFile, verifyVersionContent } from './verify-version.js';

/** What the mirror stores and reads back; server/src/mirror/store-target.ts implements it over the store. */
export interface MirrorTarget {
  /** The digest stored for this exact version, or undefined. */
  storedDigest(version: VersionKey): Promise<string | undefined>;
  /** Stores a verified version in one transaction (creating its registry and template as needed). */
  store(version: PulledVersion): Promise<void>;
  /** The upstream now answers another digest for a version the mirror stored (never applied). */
  reportMismatch(mismatch: DigestMismatch): void | Promise<void>;
  /**
   * The upstream serves this version quarantined (its source changed it after it was first seen
   * there): the mirror shows it quarantined too (docs/integrity-store.md §6).
   */
  upstreamQuarantined?(version: UpstreamQuarantine): void | Promise<void>;
}

/** An exact version of a registry. */
export type VersionKey = Pick<Resolution, 'registry' | 'collection' | 'template' | 'version'>;

export interface DigestMismatch {
  /** The exact pin: `github.com/o/r/redis:=v1.0.3`. */
  reference: string;
  registry: string;
  storedDigest: string;
  upstreamDigest: string;
  upstream: string;
}

export interface PulledVersion {
  resolution: Resolution;
  files: VerifiedFile[];
  upstream: string;
  /** The upstream serves this registry only to token holders: private on the mirror too. */
  private: boolean;
  /** The stored digest this version replaces: a change the upstream accepted (its log says so). */
  supersedes?: string | undefined;
}

export type PullResult =
  | {
      kind: 'stored' | 'present' | 'mismatch';
      resolution: Resolution;
      upstream: string;
      /** The ETag of the upstream's resolve answer, for the next revalidation. */
      etag?: string | undefined;
    }
  /** The upstream answered `304` to a revalidation: the reference still resolves as it did. */
  | { kind: 'unchanged'; upstream: string }
  | { kind: 'not-found'; status: number; error: { code: string; message: string; details?: unknown } };

/** What a revalidation sends: the ETag `upstream` gave with its last resolve answer. */
export interface Revalidation {
  upstream: string;
  etag: string;
}

export interface PullThroughOptions {
  upstreams: readonly Upstream[];
  target: MirrorTarget;
  /** How long an upstream's not-found answer is remembered, ms (default 60 s). */
  negativeTtlMs?: number;
  /** Largest archive accepted from an upstream, bytes (default 64 MiB). */
  maxArchiveBytes?: number;
}

const RESOLUTION_LIMIT = 8 * 1024 * 1024;

function isString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= 4096;
}

/** An upstream is a registry server, not a trusted one: its resolution is checked before use. */
function checkResolution(value: unknown, upstream: string): Resolution {
  const r = value as Partial<Resolution> | null;
  const ok =
    r !== null &&
    typeof r === 'object' &&
    isString(r.resolved) &&
    isString(r.registry) &&
    typeof r.collection === 'string' &&
    isString(r.template) &&
    isString(r.version) &&
    isString(r.digest) &&
    /^sha256:[0-9a-f]{64}$/.test(r.digest) &&
    Array.isArray(r.files) &&
    r.files.length <= 100_000 &&
    r.files.every(
      (f) =>
        f !== null &&
        typeof f === 'object' &&
        pathProblem(f.path) === undefined &&
        typeof f.size === 'number' &&
        Number.isSafeInteger(f.size) &&
        f.size >= 0 &&
        /^[0-9a-f]{64}$/.test(String(f.sha256)),
    ) &&
    // The names and paths every way content enters is held to (docs/registry-layout.md).
    versionNameProblem({ collection: r.collection, template: r.template, version: r.version }) ===
      undefined &&
    isRegistryName(r.registry);
  if (!ok) {
    throw new DmError('UPSTREAM_INVALID_ANSWER', `${upstream} answered a resolution dm cannot use`, {
      category: 'upstream',
      details: { upstream },
    });
  }
  return r as Resolution;
}

/** A version the upstream serves quarantined, with what the upstream says changed. */
export interface UpstreamQuarantine {
  registry: string;
  collection: string;
  template: string;
  version: string;
  /** The digest served (the first-seen one). */
  digest: string;
  quarantined: QuarantineInfo;
}

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * An upstream's `quarantined` field (a resolve answer's or a version list entry's), checked: at
 * most 10,000 changed files, digests and times in their forms. Absent → undefined.
 */
export function checkQuarantine(value: unknown, upstream: string): QuarantineInfo | undefined {
  if (value === undefined) return undefined;
  const q = value as Partial<QuarantineInfo> | null;
  const sha = (x: unknown) => x === null || (typeof x === 'string' && SHA256.test(x));
  const ok =
    q !== null &&
    typeof q === 'object' &&
    typeof q.since === 'string' &&
    !Number.isNaN(Date.parse(q.since)) &&
    typeof q.newDigest === 'string' &&
    /^sha256:[0-9a-f]{64}$/.test(q.newDigest) &&
    Array.isArray(q.changedFiles) &&
    q.changedFiles.length <= 10_000 &&
    q.changedFiles.every(
      (f) => f !== null && typeof f === 'object' && isString(f.path) && sha(f.old) && sha(f.new),
    );
  if (!ok) {
    throw new DmError('UPSTREAM_INVALID_ANSWER', `${upstream} answered a quarantine dm cannot use`, {
      category: 'upstream',
      details: { upstream },
    });
  }
  return { since: q.since!, newDigest: q.newDigest!, changedFiles: q.changedFiles! };
}

/** The archive URL path of an exact version on a registry server. */
export function archivePath(r: Pick<Resolution, 'registry' | 'collection' | 'template' | 'version'>): string {
  const parts = [...r.registry.split('/'), ...(r.collection ? [r.collection] : []), r.template];
  return `/api/v1/templates/${parts.map(encodeURIComponent).join('/')}/versions/${encodeURIComponent(r.version)}/archive.tar.gz`;
}

export class PullThrough {
  private readonly flights = new Map<string, Promise<PullResult>>();
  private readonly negative: LRUCache<string, Extract<PullResult, { kind: 'not-found' }>>;
  private readonly maxArchiveBytes: number;
  /** Upstream requests made for pulls (for metrics and tests). */
  requests = 0;

  constructor(private readonly options: PullThroughOptions) {
    this.negative = new LRUCache({
      maxSize: 8 * 1024 * 1024,
      sizeCalculation: (value, key) => key.length * 2 + value.error.message.length * 2 + 64,
      ttl: options.negativeTtlMs ?? 60_000,
    });
    this.maxArchiveBytes = options.maxArchiveBytes ?? 64 * 1024 * 1024;
  }

  get upstreams(): readonly Upstream[] {
    return this.options.upstreams;
  }

  /** Whether every upstream is known down right now (an unseen reference fails at once). */
  allOpen(): boolean {
    return this.options.upstreams.every((u) => u.isOpen());
  }

  /**
   * Resolves `ref` through the upstreams (or only `from`, for a mirrored registry) and stores what
   * it names; one exchange per reference at a time. With `revalidate`, the resolve sent to that
   * upstream is conditional and may come back `unchanged`.
   */
  pull(ref: string, from?: Upstream, revalidate?: Revalidation): Promise<PullResult> {
    const key = from ? `${from.url} ${ref}` : ref;
    const remembered = this.negative.get(key);
    if (remembered) return Promise.resolve(remembered);
    const running = this.flights.get(key);
    if (running) return running;
    const flight = this.exchange(ref, key, from ? [from] : this.options.upstreams, revalidate).finally(() =>
      this.flights.delete(key),
    );
    this.flights.set(key, flight);
    return flight;
  }

  private async exchange(
    ref: string,
    key: string,
    upstreams: readonly Upstream[],
    revalidate: Revalidation | undefined,
  ): Promise<PullResult> {
    let notFound: Extract<PullResult, { kind: 'not-found' }> | undefined;
    let failure: DmError | undefined;
    for (const upstream of upstreams) {
      try {
        const etag = revalidate?.upstream === upstream.url ? revalidate.etag : undefined;
        const result = await this.exchangeWith(upstream, ref, etag);
        if (result.kind !== 'not-found') return result;
        notFound ??= result;
      } catch (error) {
        if (isUpstreamFault(error)) {
          failure ??= error;
          continue;
        }
        throw error;
      }
    }
    if (notFound && !failure) {
      this.negative.set(key, notFound);
      return notFound;
    }
    if (failure) throw failure;
    throw new DmError('UPSTREAM_UNAVAILABLE', 'no upstream registry is configured', { category: 'upstream' });
  }

  private async exchangeWith(upstream: Upstream, ref: string, etag: string | undefined): Promise<PullResult> {
    this.requests += 1;
    const answer = await upstream.getJson<unknown>({
      path: `/api/v1/resolve?ref=${encodeURIComponent(ref)}`,
      etag,
      maxBodyBytes: RESOLUTION_LIMIT,
    });
    if (answer.status === 304 && etag !== undefined) return { kind: 'unchanged', upstream: upstream.url };
    // Only "not found" is relayed: the reference was checked here, so an upstream's 400 is its
    // fault (502 below), never the caller's (docs/mirroring.md).
    if (answer.status === 404) {
      const body = answer.json as
        | { error?: { code?: unknown; message?: unknown; details?: unknown } }
        | undefined;
      const code = typeof body?.error?.code === 'string' ? body.error.code.slice(0, 64) : 'NOT_FOUND';
      const message =
        typeof body?.error?.message === 'string'
          ? body.error.message.slice(0, 1000)
          : `${ref} was not found upstream`;
      return {
        kind: 'not-found',
        status: answer.status,
        error: { code, message, details: body?.error?.details },
      };
    }
    if (answer.status !== 200) {
      throw new DmError(
        'UPSTREAM_INVALID_ANSWER',
        `${upstream.url} answered HTTP ${answer.status} to a resolve`,
        {
          category: 'upstream',
          details: { upstream: upstream.url },
        },
      );
    }
    const resolution = checkResolution(answer.json, upstream.url);
    const quarantined = checkQuarantine(resolution.quarantined, upstream.url);
    const answerEtag = answer.headers.get('etag') ?? undefined;
    const target = this.options.target;
    const stored = await target.storedDigest(resolution);
    const noteQuarantine = async () => {
      if (quarantined) await target.upstreamQuarantined?.({ ...resolution, quarantined });
    };
    if (stored === resolution.digest) {
      await noteQuarantine();
      return { kind: 'present', resolution, upstream: upstream.url, etag: answerEtag };
    }
    const logged = {
      template: canonicalTemplate(resolution.registry, resolution.collection, resolution.template),
      version: resolution.version,
      digest: resolution.digest,
    };
    let supersedes: string | undefined;
    if (stored !== undefined) {
      // A change the upstream accepted: its log's newest record replaces what is stored here.
      this.requests += 1;
      const record = await upstream.log.record(logged);
      if (record?.digest === resolution.digest && record.supersedes === stored) supersedes = stored;
    } else if (upstream.log.verifying) {
      this.requests += 1;
      await upstream.log.record(logged); // throws UPSTREAM_CHECKSUM_MISMATCH: nothing is stored
    }
    if (stored !== undefined && supersedes === undefined) {
      await target.reportMismatch({
        reference: resolution.resolved,
        registry: resolution.registry,
        storedDigest: stored,
        upstreamDigest: resolution.digest,
        upstream: upstream.url,
      });
      return { kind: 'mismatch', resolution, upstream: upstream.url, etag: answerEtag };
    }
    this.requests += 1;
    const archive = await upstream.get({ path: archivePath(resolution), maxBodyBytes: this.maxArchiveBytes });
    if (archive.status !== 200) {
      throw new DmError(
        'UPSTREAM_INVALID_ANSWER',
        `${upstream.url} answered HTTP ${archive.status} for the archive of ${resolution.resolved}`,
        { category: 'upstream', details: { upstream: upstream.url } },
      );
    }
    const declared = resolution.files.reduce((n, f) => n + f.size, 0);
    let files: VerifiedFile[];
    try {
      const contents = await readTarball(archive.body, {
        stripFirst: true,
        source: `${upstream.url} (${resolution.resolved})`,
        maxArchiveBytes: this.maxArchiveBytes,
        maxTotalBytes: Math.min(declared + 1, 1024 * 1024 * 1024),
        maxEntries: resolution.files.length + 1,
      });
      files = verifyVersionContent(resolution, contents.files, upstream.url);
    } catch (error) {
      // An archive that is not one, holds what the indexer refuses, or is not what the upstream's
      // own resolve said: the upstream's fault (502), never the caller's (docs/mirroring.md).
      if (!(error instanceof DmError)) throw error;
      throw new DmError('UPSTREAM_INVALID_ANSWER', error.message, {
        category: 'upstream',
        details: { upstream: upstream.url, cause: error.code },
        cause: error,
      });
    }
    const cacheControl = archive.headers.get('cache-control') ?? '';
    await target.store({
      resolution,
      files,
      upstream: upstream.url,
      private: /(^|[\s,])private([\s,]|$)/.test(cacheControl),
      supersedes,
    });
    await noteQuarantine();
    return { kind: 'stored', resolution, upstream: upstream.url, etag: answerEtag };
  }
}

/** The `Cache-Status` value (RFC 9211) of an answer that involved an upstream, or could have. */
export function cacheStatus(parts: {
  hit?: boolean;
  fwd?: 'miss' | 'stale' | 'uri-miss';
  stored?: boolean;
  detail?: string;
}): string {
  const items = ['dm-registry'];
  if (parts.hit) items.push('hit');
  if (parts.fwd) items.push(`fwd=${parts.fwd}`);
  if (parts.stored) items.push('stored');
  if (parts.detail) items.push(`detail=${parts.detail}`);
  return items.join('; ');
}

/**
 * An upstream registry server, as a mirror talks to it (docs/mirroring.md): bounded requests with a
 * deadline, a circuit breaker so that a known-down upstream costs nothing (no waiting on a dead
 * socket while a client waits), and a state that the registries API and page report.
 *
 * The breaker opens on the first failure that says "not now" (connection refused or reset, DNS,
 * timeout, 5xx, 429, 401/403) and stays open for a backoff that doubles on each consecutive
 * failure (1 s up to 5 min; a 429's `Retry-After` wins). While open, every call fails at once with
 * `UPSTREAM_UNAVAILABLE`; after the backoff one call is let through (half-open) and its outcome
 * closes or re-opens the breaker. The upstream's own error text is never passed through: callers
 * get one sentence naming the upstream and what went wrong: `UPSTREAM_TIMEOUT` (504) for the call
 * that waited out the deadline, an `upstream` error (502) for everything else the upstream did,
 * including an open breaker's refusal (docs/mirroring.md, "When the upstream fails").
 */

import { DmError, networkFailure } from '../../../client/src/error.js';
import { readBounded } from '../../../client/src/fetch/read-bounded.js';
import type { CheckpointMemory } from '../../../client/src/integrity/index.js';
import { UpstreamLog } from './upstream-log.js';

export type UpstreamState =
  | { state: 'ok'; checkedAt: string | null }
  | { state: 'unreachable'; since: string; detail: string }
  | { state: 'unauthorized'; since: string; status: number }
  | { state: 'rate-limited'; until: string };

export interface UpstreamOptions {
  /** Base URL of the upstream dm-registry, e.g. `https://registry.example`. */
  url: string;
  /** Bearer token sent to the upstream (never logged, never shown). */
  token?: string | undefined;
  /** The upstream checksum log's verifier key: versions pulled are verified against its log. */
  checksumKey?: string | undefined;
  /** Where the latest verified checkpoint of the upstream's log is kept (default memory). */
  checkpointMemory?: CheckpointMemory | undefined;
  /** Deadline of one request, ms (default 10 s). */
  timeoutMs?: number;
  /** Largest body accepted from the upstream, bytes (default 64 MiB). */
  maxBodyBytes?: number;
  /** First backoff after a failure, ms (default 1 s), doubled per consecutive failure up to `maxBackoffMs`. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** The clock (ms since the epoch); tests pass their own. */
  now?: () => number;
  /** fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

export interface UpstreamResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

export interface UpstreamRequest {
  /** Path and query below the upstream URL, starting with `/`. */
  path: string;
  /** `If-None-Match` for a conditional request. */
  etag?: string | null | undefined;
  /** Accept answers up to this size (default: the upstream's `maxBodyBytes`). */
  maxBodyBytes?: number;
}

/** How a failure is classified for the breaker and the state. */
type Failure =
  | { kind: 'unreachable'; detail: string }
  | { kind: 'unauthorized'; status: number }
  | { kind: 'rate-limited'; retryAfterMs: number | null }
  | { kind: 'server-error'; status: number };

/** Whether `error` is an upstream's fault (502 or 504): another upstream may be asked, a stored answer served. */
export function isUpstreamFault(error: unknown): error is DmError {
  return error instanceof DmError && (error.category === 'upstream' || error.category === 'upstream-timeout');
}

/** The statuses that mean "the upstream answered, and this is the answer" (not a failure). */
function isAnswer(status: number): boolean {
  return (
    (status >= 200 && status < 300) ||
    status === 304 ||
    (status >= 400 && status < 500 && ![401, 403, 408, 429].includes(status))
  );
}

function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, 3600) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.min(date - now, 3_600_000));
}

/** `timed out`, or the network's reason in the client's words (docs/errors.md "Unreachable: the reason"). */
function describeNetworkError(error: unknown): string {
  const network = networkFailure(error);
  if ((error as { name?: string } | undefined)?.name === 'TimeoutError' || network?.kind === 'timeout')
    return 'timed out';
  if (network) return network.reason;
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' ? `network error ${code}` : 'network error';
}

export class Upstream {
  readonly url: string;
  private readonly token: string | undefined;
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;
  private readonly baseBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly now: () => number;
  private readonly fetchImpl: typeof fetch;

  private failures = 0;
  private openUntil = 0;
  private probing = false;
  private current: UpstreamState = { state: 'ok', checkedAt: null };
  /** Requests sent (not counting calls refused by the open breaker). */
  requests = 0;
  /** The upstream's checksum log (docs/mirroring.md). */
  readonly log: UpstreamLog;

  constructor(options: UpstreamOptions) {
    this.url = Upstream.normaliseUrl(options.url);
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxBodyBytes = options.maxBodyBytes ?? 64 * 1024 * 1024;
    this.baseBackoffMs = options.baseBackoffMs ?? 1000;
    this.maxBackoffMs = options.maxBackoffMs ?? 300_000;
    this.now = options.now ?? Date.now;
    this.fetchImpl = options.fetch ?? fetch;
    this.log = new UpstreamLog({
      url: this.url,
      token: options.token,
      key: options.checksumKey,
      ...(options.checkpointMemory ? { memory: options.checkpointMemory } : {}),
      timeoutMs: this.timeoutMs,
    });
  }

  /** Checks and normalises an upstream URL (http or https, no credentials, no query, no trailing slash). */
  static normaliseUrl(text: string): string {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new DmError(
        'INVALID_UPSTREAM',
        `'${text}' is not an upstream URL: expected http(s)://host[:port][/path]`,
        {
          category: 'usage',
        },
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new DmError(
        'INVALID_UPSTREAM',
        `'${text}' is not an upstream URL: only http and https are supported`,
        {
          category: 'usage',
        },
      );
    }
    if (url.username || url.password || url.search || url.hash) {
      throw new DmError(
        'INVALID_UPSTREAM',
        `'${url.host}': an upstream URL carries no credentials, query or fragment (use --upstream-token-env for a token)`,
        { category: 'usage' },
      );
    }
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  }

  /** The state the registries API and page show. */
  state(): UpstreamState {
    return this.current;
  }

  /** Whether a call now would be refused without contacting the upstream. */
  isOpen(): boolean {
    return this.failures > 0 && (this.now() < this.openUntil || this.probing);
  }

  private unavailable(): DmError {
    const s = this.current;
    const why =
      s.state === 'unreachable'
        ? `unreachable since ${s.since}: ${s.detail}`
        : s.state === 'unauthorized'
          ? `refusing this mirror's credentials since ${s.since} (HTTP ${s.status})`
          : s.state === 'rate-limited'
            ? `rate-limiting this mirror until ${s.until}`
            : 'unavailable';
    return new DmError('UPSTREAM_UNAVAILABLE', `the upstream registry ${this.url} is ${why}`, {
      category: 'upstream',
      details: { upstream: this.url, ...s },
    });
  }

  private fail(failure: Failure): DmError {
    const now = this.now();
    const iso = new Date(now).toISOString();
    this.failures += 1;
    let backoff = Math.min(this.maxBackoffMs, this.baseBackoffMs * 2 ** Math.min(this.failures - 1, 30));
    switch (failure.kind) {
      case 'unreachable':
        this.current = {
          state: 'unreachable',
          since: this.current.state === 'unreachable' ? this.current.since : iso,
          detail: failure.detail,
        };
        break;
      case 'server-error':
        this.current = {
          state: 'unreachable',
          since: this.current.state === 'unreachable' ? this.current.since : iso,
          detail: `HTTP ${failure.status}`,
        };
        break;
      case 'unauthorized':
        this.current = {
          state: 'unauthorized',
          since: this.current.state === 'unauthorized' ? this.current.since : iso,
          status: failure.status,
        };
        break;
      case 'rate-limited':
        if (failure.retryAfterMs !== null) backoff = Math.max(failure.retryAfterMs, this.baseBackoffMs);
        this.current = { state: 'rate-limited', until: new Date(now + backoff).toISOString() };
        break;
    }
    this.openUntil = now + backoff;
    return this.unavailable();
  }

  /** The call that waited for an answer that did not come in time (the breaker is open now). */
  private timedOut(path: string): DmError {
    return new DmError(
      'UPSTREAM_TIMEOUT',
      `the upstream registry ${this.url} did not answer ${path.split('?')[0]} within ${this.timeoutMs / 1000} s`,
      { category: 'upstream-timeout', details: { upstream: this.url, timeoutMs: this.timeoutMs } },
    );
  }

  private succeed(): void {
    this.failures = 0;
    this.openUntil = 0;
    this.current = { state: 'ok', checkedAt: new Date(this.now()).toISOString() };
  }

  /**
   * One GET to the upstream. Answers (2xx, 304, and 4xx other than 401/403/408/429) are returned;
   * everything else opens the breaker and throws `UPSTREAM_UNAVAILABLE`. A body over the bound is
   * a failure of that request only (`UPSTREAM_ANSWER_TOO_LARGE`), not of the upstream.
   */
  async get(request: UpstreamRequest): Promise<UpstreamResponse> {
    if (this.failures > 0) {
      if (this.now() < this.openUntil || this.probing) throw this.unavailable();
      this.probing = true; // half-open: this call is the probe; concurrent calls fail fast
    }
    const headers: Record<string, string> = { accept: 'application/json, */*' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (request.etag) headers['if-none-match'] = request.etag;
    const limit = request.maxBodyBytes ?? this.maxBodyBytes;
    this.requests += 1;
    try {
      let response: Response;
      let body: Buffer;
      try {
        response = await this.fetchImpl(`${this.url}${request.path}`, {
          headers,
          redirect: 'error',
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        body = await readBoundedAnswer(response, limit, this.url);
      } catch (error) {
        if (error instanceof DmError) throw error;
        const detail = describeNetworkError(error);
        const unavailable = this.fail({ kind: 'unreachable', detail });
        throw detail === 'timed out' ? this.timedOut(request.path) : unavailable;
      }
      if (isAnswer(response.status)) {
        this.succeed();
        return { status: response.status, headers: response.headers, body };
      }
      if (response.status === 401 || response.status === 403) {
        throw this.fail({ kind: 'unauthorized', status: response.status });
      }
      if (response.status === 429) {
        throw this.fail({
          kind: 'rate-limited',
          retryAfterMs: retryAfterMs(response.headers.get('retry-after'), this.now()),
        });
      }
      if (response.status === 408) {
        this.fail({ kind: 'unreachable', detail: 'timed out' });
        throw this.timedOut(request.path);
      }
      throw this.fail({ kind: 'server-error', status: response.status });
    } finally {
      this.probing = false;
    }
  }

  /** A JSON answer; a body that is not JSON is an upstream failure named as such. */
  async getJson<T>(
    request: UpstreamRequest,
  ): Promise<{ status: number; headers: Headers; json: T | undefined }> {
    const response = await this.get(request);
    if (response.status === 304) return { status: 304, headers: response.headers, json: undefined };
    const type = response.headers.get('content-type') ?? '';
    if (!type.includes('json')) {
      throw new DmError(
        'UPSTREAM_NOT_A_REGISTRY',
        `${this.url} is not a dm registry server (it answered ${type.split(';')[0] || 'no content type'} for ${request.path.split('?')[0]})`,
        { category: 'upstream', details: { upstream: this.url } },
      );
    }
    try {
      return {
        status: response.status,
        headers: response.headers,
        json: JSON.parse(response.body.toString('utf8')) as T,
      };
    } catch {
      throw new DmError(
        'UPSTREAM_NOT_A_REGISTRY',
        `${this.url} answered malformed JSON for ${request.path.split('?')[0]}`,
        {
          category: 'upstream',
          details: { upstream: this.url },
        },
      );
    }
  }
}

/** Reads a response body, refusing (and cancelling) it once it passes `limit` bytes. */
function readBoundedAnswer(response: Response, limit: number, upstream: string): Promise<Buffer> {
  return readBounded(response, limit, () => tooLarge(upstream, limit));
}

function tooLarge(upstream: string, limit: number): DmError {
  // The upstream's fault, not the caller's: 502 (docs/mirroring.md).
  return new DmError('UPSTREAM_ANSWER_TOO_LARGE', `${upstream} sent an answer larger than ${limit} bytes`, {
    category: 'upstream',
    details: { upstream, limit },
  });
}

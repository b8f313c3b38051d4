/**
 * A client of the OCI distribution API (docs/oci.md "Credentials" and "Bounds"): manifests, blobs,
 * uploads and tag lists, with the ecosystem's authentication — anonymous, basic, and the bearer
 * token flow a `WWW-Authenticate` challenge names. Every answer is bounded in size and time, every
 * manifest and blob is checked against its digest before it is used, and every failure is one
 * sentence naming the registry, the repository and what was asked.
 */
import { DmError } from '../error.js';
import { readBounded } from '../fetch/read-bounded.js';
import { noAnswer, PLAIN_HTTP_HINT } from '../http-limit.js';
import { MANIFEST_MEDIA_TYPE, MAX_MANIFEST_BYTES, ociDigest } from './artifact.js';
import { type BasicCredentials, findCredentials, parseChallenge } from './auth.js';

export interface OciClientOptions {
  /** `host[:port]`. */
  host: string;
  /** Plain HTTP instead of HTTPS (loopback and test registries; `--plain-http`). */
  plainHttp?: boolean;
  /** Auth files to read credentials from (docs/oci.md "Credentials"). */
  authFiles?: readonly string[];
  /** Per-request time limit, ms (default 30 s). */
  timeoutMs?: number;
  onRequest?: (method: string, url: string) => void;
}

interface RequestOptions {
  headers?: Record<string, string>;
  body?: Buffer;
  /** `pull` or `pull,push`: the access a bearer token is asked for. */
  access: 'pull' | 'pull,push';
  /** Statuses that are answers, not errors (e.g. 404 of a HEAD). */
  accept?: readonly number[];
  /** What the request is, for messages ("the manifest of acme/redis:v1"). */
  what: string;
  /** Do not follow redirects (upload locations). */
  manualRedirect?: boolean;
}

const MAX_ERROR_BODY = 64 * 1024;
const MAX_TOKEN_BODY = 1024 * 1024;
const MAX_TAGS_BODY = 16 * 1024 * 1024;

/** Reads at most `max` bytes of a body; more is an error naming `what`. */
function readLimited(response: Response, max: number, what: string): Promise<Buffer> {
  return readBounded(
    response,
    max,
    () =>
      new DmError('OCI_TOO_LARGE', `${what} is more than the ${max} bytes dm reads`, { category: 'limit' }),
  );
}

/** The first error of an OCI error body (`{errors: [{code, message}]}`), printable, or ''. */
async function errorOf(response: Response): Promise<string> {
  try {
    const body = await readLimited(response, MAX_ERROR_BODY, 'an error answer');
    const first = (JSON.parse(body.toString('utf8')) as { errors?: { code?: unknown; message?: unknown }[] })
      .errors?.[0];
    if (!first) return '';
    // Printable characters only (an error body is the registry's text, shown to the user).
    const clean = (v: unknown) =>
      [...String(v ?? '')]
        .map((c) =>
          c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f) ? ' ' : c,
        )
        .join('')
        .slice(0, 200);
    return `${clean(first.code)}${first.message ? `: ${clean(first.message)}` : ''}`;
  } catch {
    return '';
  }
}

export class OciClient {
  readonly host: string;
  readonly base: string;
  private readonly timeoutMs: number;
  /** Authorization header values by scope, once a challenge was answered. */
  private readonly authorizations = new Map<string, string>();

  constructor(private readonly options: OciClientOptions) {
    this.host = options.host;
    this.base = `${options.plainHttp ? 'http' : 'https'}://${options.host}`;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /**
   * A body read within `max` bytes; the connection lost or timed out in the middle of it is
   * OCI_UNREACHABLE with the reason, as a request that got no answer (docs/errors.md).
   */
  private async readAnswer(response: Response, max: number, what: string): Promise<Buffer> {
    try {
      return await readLimited(response, max, what);
    } catch (error) {
      if (error instanceof DmError) throw error;
      throw noAnswer('OCI_UNREACHABLE', `the OCI registry ${this.host} for ${what}`, error, {
        timeoutMs: this.timeoutMs,
      });
    }
  }

  /** `host/repository` for messages. */
  private where(repository: string): string {
    return `${this.host}/${repository}`;
  }

  private credentials(repository: string): BasicCredentials | undefined {
    return findCredentials(this.options.authFiles ?? [], this.host, repository);
  }

  private async send(method: string, url: string, init: RequestInit, what: string): Promise<Response> {
    this.options.onRequest?.(method, url);
    try {
      return await fetch(url, { ...init, method, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      throw noAnswer('OCI_UNREACHABLE', `the OCI registry ${this.host} for ${what}`, error, {
        timeoutMs: this.timeoutMs,
        ...(this.options.plainHttp
          ? {}
          : {
              tlsHint: PLAIN_HTTP_HINT,
            }),
      });
    }
  }

  /** Answers a challenge: basic credentials as they are, or a bearer token from the realm. */
  private async authorize(
    response: Response,
    repository: string,
    access: string,
    what: string,
  ): Promise<string> {
    const challenge = parseChallenge(response.headers.get('www-authenticate'));
    await response.body?.cancel();
    const creds = this.credentials(repository);
    const basic = creds
      ? `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}`
      : undefined;
    if (challenge?.scheme === 'basic') {
      if (!basic) throw this.unauthorized(repository, what, undefined);
      return basic;
    }
    if (challenge?.scheme !== 'bearer' || !challenge.params.realm) {
      throw new DmError(
        'OCI_UNAUTHORIZED',
        `the OCI registry ${this.host} refused ${what} and named no way to authenticate`,
        { category: 'unauthorized' },
      );
    }
    let realm: URL;
    try {
      realm = new URL(challenge.params.realm);
    } catch {
      throw new DmError(
        'OCI_REGISTRY_ERROR',
        `the OCI registry ${this.host} named a token realm that is not a URL`,
        {
          category: 'upstream',
        },
      );
    }
    if (realm.protocol !== 'https:' && !(this.options.plainHttp && realm.protocol === 'http:')) {
      throw new DmError(
        'OCI_REGISTRY_ERROR',
        `the OCI registry ${this.host} named a token realm that is not https`,
        {
          category: 'upstream',
        },
      );
    }
    if (challenge.params.service) realm.searchParams.set('service', challenge.params.service);
    realm.searchParams.set('scope', challenge.params.scope ?? `repository:${repository}:${access}`);
    const answer = await this.send(
      'GET',
      realm.href,
      { headers: basic ? { authorization: basic } : {} },
      `a token for ${what}`,
    );
    if (answer.status === 401 || answer.status === 403) {
      await answer.body?.cancel();
      throw this.unauthorized(repository, what, creds);
    }
    if (!answer.ok) {
      await answer.body?.cancel();
      throw new DmError(
        'OCI_REGISTRY_ERROR',
        `the token service of ${this.host} answered ${answer.status} for ${what}`,
        {
          category: 'upstream',
        },
      );
    }
    const body = await this.readAnswer(answer, MAX_TOKEN_BODY, `the token answer of ${this.host}`);
    let token: unknown;
    try {
      const data = JSON.parse(body.toString('utf8')) as { token?: unknown; access_token?: unknown };
      token = data.token ?? data.access_token;
    } catch {
      token = undefined;
    }
    if (typeof token !== 'string' || token === '') {
      throw new DmError(
        'OCI_REGISTRY_ERROR',
        `the token service of ${this.host} answered no token for ${what}`,
        {
          category: 'upstream',
        },
      );
    }
    return `Bearer ${token}`;
  }

  private unauthorized(repository: string, what: string, creds: BasicCredentials | undefined): DmError {
    return new DmError(
      'OCI_UNAUTHORIZED',
      creds
        ? `the OCI registry ${this.host} refused the credentials for ${creds.username} (from ${creds.file}) for ${what}`
        : `the OCI registry ${this.host} needs credentials for ${what}, and none are configured for it`,
      {
        category: 'unauthorized',
        ...(creds
          ? {}
          : {
              hint: `log in with podman login / docker login ${this.host}, or set REGISTRY_AUTH_FILE (docs/oci.md)`,
            }),
        details: { repository: this.where(repository) },
      },
    );
  }

  /** One request with authentication; errors are DmErrors naming `what`. */
  async request(
    method: string,
    repository: string,
    pathOrUrl: string,
    options: RequestOptions,
  ): Promise<Response> {
    const url = /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : `${this.base}${pathOrUrl}`;
    const key = `${repository}\0${options.access}`;
    const init = (authorization: string | undefined): RequestInit => ({
      headers: { ...(options.headers ?? {}), ...(authorization ? { authorization } : {}) },
      ...(options.body ? { body: options.body } : {}),
      ...(options.manualRedirect ? { redirect: 'manual' as const } : {}),
    });
    let response = await this.send(method, url, init(this.authorizations.get(key)), options.what);
    if (response.status === 401) {
      const authorization = await this.authorize(response, repository, options.access, options.what);
      this.authorizations.set(key, authorization);
      response = await this.send(method, url, init(authorization), options.what);
      if (response.status === 401) {
        await response.body?.cancel();
        throw this.unauthorized(repository, options.what, this.credentials(repository));
      }
    }
    if (response.ok || (options.accept ?? []).includes(response.status)) return response;
    if (response.status >= 300 && response.status < 400 && options.manualRedirect) return response;
    const said = method === 'HEAD' ? '' : await errorOf(response);
    if (method === 'HEAD') await response.body?.cancel();
    const suffix = said ? ` (${said})` : '';
    if (response.status === 404) {
      throw new DmError('OCI_NOT_FOUND', `${options.what} does not exist on ${this.host}${suffix}`, {
        category: 'not-found',
        details: { repository: this.where(repository) },
      });
    }
    if (response.status === 403) {
      throw new DmError('OCI_FORBIDDEN', `the OCI registry ${this.host} refused ${options.what}${suffix}`, {
        category: 'forbidden',
      });
    }
    throw new DmError(
      'OCI_REGISTRY_ERROR',
      `the OCI registry ${this.host} answered ${response.status} to ${options.what}${suffix}`,
      { category: 'upstream' },
    );
  }

  /** A manifest's bytes and digest, by tag or digest, checked against the digest. */
  async getManifest(
    repository: string,
    reference: string,
  ): Promise<{ bytes: Buffer; digest: string; mediaType: string }> {
    const what = `the manifest ${this.where(repository)}${reference.startsWith('sha256:') ? '@' : ':'}${reference}`;
    const response = await this.request('GET', repository, `/v2/${repository}/manifests/${reference}`, {
      access: 'pull',
      what,
      headers: { accept: `${MANIFEST_MEDIA_TYPE}, application/vnd.oci.image.index.v1+json` },
    });
    const bytes = await this.readAnswer(response, MAX_MANIFEST_BYTES, what);
    const digest = ociDigest(bytes);
    const stated = response.headers.get('docker-content-digest');
    if (
      (reference.startsWith('sha256:') && reference !== digest) ||
      (stated?.startsWith('sha256:') && stated !== digest)
    ) {
      throw new DmError('DIGEST_MISMATCH', `${what} is not the content its digest names`);
    }
    return { bytes, digest, mediaType: response.headers.get('content-type') ?? '' };
  }

  /** The digest a tag points at, or undefined when the tag does not exist. */
  async headManifest(repository: string, tag: string): Promise<string | undefined> {
    const what = `the manifest ${this.where(repository)}:${tag}`;
    const response = await this.request('HEAD', repository, `/v2/${repository}/manifests/${tag}`, {
      access: 'pull',
      what,
      accept: [404],
      headers: { accept: MANIFEST_MEDIA_TYPE },
    });
    if (response.status === 404) return undefined;
    const digest = response.headers.get('docker-content-digest');
    if (digest) return digest;
    return (await this.getManifest(repository, tag)).digest;
  }

  /** A blob's bytes, at most `max`, checked against its digest. */
  async getBlob(repository: string, digest: string, max: number): Promise<Buffer> {
    const what = `the blob ${this.where(repository)}@${digest}`;
    const response = await this.request('GET', repository, `/v2/${repository}/blobs/${digest}`, {
      access: 'pull',
      what,
    });
    const bytes = await this.readAnswer(response, max, what);
    if (ociDigest(bytes) !== digest)
      throw new DmError('DIGEST_MISMATCH', `${what} is not the content its digest names`);
    return bytes;
  }

  async hasBlob(repository: string, digest: string): Promise<boolean> {
    const response = await this.request('HEAD', repository, `/v2/${repository}/blobs/${digest}`, {
      access: 'pull,push',
      what: `the blob ${this.where(repository)}@${digest}`,
      accept: [404],
    });
    return response.status !== 404;
  }

  /** Uploads a blob unless the repository has it: one POST for a location, one PUT with the bytes. */
  async putBlob(repository: string, digest: string, bytes: Buffer): Promise<void> {
    if (await this.hasBlob(repository, digest)) return;
    const what = `an upload of ${digest} to ${this.where(repository)}`;
    const started = await this.request('POST', repository, `/v2/${repository}/blobs/uploads/`, {
      access: 'pull,push',
      what,
      manualRedirect: true,
    });
    await started.body?.cancel();
    const location = started.headers.get('location');
    if (!location) {
      throw new DmError(
        'OCI_REGISTRY_ERROR',
        `the OCI registry ${this.host} gave no upload location for ${what}`,
        {
          category: 'upstream',
        },
      );
    }
    const url = new URL(location, this.base);
    if (url.origin !== new URL(this.base).origin) {
      throw new DmError(
        'OCI_REGISTRY_ERROR',
        `the OCI registry ${this.host} named an upload location on another host`,
        {
          category: 'upstream',
        },
      );
    }
    url.searchParams.set('digest', digest);
    const done = await this.request('PUT', repository, url.href, {
      access: 'pull,push',
      what,
      body: bytes,
      headers: { 'content-type': 'application/octet-stream' },
    });
    await done.body?.cancel();
  }

  async putManifest(
    repository: string,
    tag: string,
    bytes: Buffer,
    mediaType = MANIFEST_MEDIA_TYPE,
  ): Promise<void> {
    const response = await this.request('PUT', repository, `/v2/${repository}/manifests/${tag}`, {
      access: 'pull,push',
      what: `the manifest ${this.where(repository)}:${tag}`,
      body: bytes,
      headers: { 'content-type': mediaType },
    });
    await response.body?.cancel();
  }

  /** Every tag of a repository (following `Link: <…>; rel="next"` pages); [] when it does not exist. */
  async listTags(repository: string): Promise<string[]> {
    const tags: string[] = [];
    let next: string | undefined = `/v2/${repository}/tags/list?n=1000`;
    for (let page = 0; next && page < 1000; page++) {
      const what = `the tags of ${this.where(repository)}`;
      const response = await this.request('GET', repository, next, { access: 'pull', what, accept: [404] });
      if (response.status === 404) {
        await response.body?.cancel();
        return tags;
      }
      const body = await this.readAnswer(response, MAX_TAGS_BODY, what);
      let list: unknown;
      try {
        list = (JSON.parse(body.toString('utf8')) as { tags?: unknown }).tags;
      } catch {
        list = undefined;
      }
      if (list !== null && list !== undefined && !Array.isArray(list)) {
        throw new DmError('OCI_REGISTRY_ERROR', `${what}: the answer is not a tag list`, {
          category: 'upstream',
        });
      }
      for (const t of (list as unknown[] | null) ?? []) if (typeof t === 'string') tags.push(t);
      const link = /<([^>]+)>\s*;\s*rel="?next"?/.exec(response.headers.get('link') ?? '');
      next = link ? link[1] : undefined;
      if (next && /^https?:\/\//.test(next) && new URL(next).origin !== new URL(this.base).origin)
        next = undefined;
    }
    return tags;
  }
}

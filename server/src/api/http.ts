/**
 * HTTP plumbing shared by the API's sub-apps: the app's environment type, JSON error bodies
 * (docs/errors.md: `{error: {code, message, details?}}`), conditional requests for immutable
 * content, and query-parameter parsing.
 */
import type { Context } from 'hono';
import { DmError, httpStatusFor } from '../../../client/src/error.js';
import type { RegistryService } from '../service.js';
import type { RequestAccess } from './access.js';

export interface AppEnv {
  /** `requestStarted`: when the request tracker began it (performance.now(), api/tracking.ts). */
  Variables: { requestId: string; service: RegistryService; requestStarted: number };
}

export async function accessOf(c: Context<AppEnv>): Promise<RequestAccess> {
  return c.get('service').tokens.accessFor(c.req.header('authorization'));
}

/**
 * The cluster refusing the server's own kubeconfig (docs/manager.md, "Errors"): for a caller of the
 * API that is the service's upstream failing, not the caller's token, whatever kubectl said.
 */
const SERVICE_CREDENTIAL_REFUSALS = new Set(['CLUSTER_UNAUTHORIZED', 'CLUSTER_FORBIDDEN']);

/** A DmError as an HTTP response; 429 carries Retry-After, and so does a 503 that says when. */
export function errorResponse(c: Context<AppEnv>, error: DmError): Response {
  const status = (SERVICE_CREDENTIAL_REFUSALS.has(error.code) ? 502 : httpStatusFor(error)) as 400;
  if (status === (503 as number) && error.details?.retryAfter !== undefined) {
    c.header('Retry-After', String(Math.max(1, Math.ceil(Number(error.details.retryAfter) || 1))));
  }
  if (status === (429 as number)) {
    const retry = Number(error.details?.retryAfter ?? 60);
    c.header('Retry-After', String(Number.isFinite(retry) && retry > 0 ? Math.ceil(retry) : 60));
  }
  if (status === (401 as number)) c.header('WWW-Authenticate', 'Bearer realm="dm-registry"');
  return c.json(error.toJSON(), status);
}

/**
 * `Content-Disposition: attachment` with a filename safe in any client: ASCII letters, digits,
 * `.`, `_` and `-` only (anything else becomes `_`), never starting with a dot, at most 200 bytes.
 */
export function attachment(filename: string): string {
  const safe = filename
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 200);
  return `attachment; filename="${safe || 'download'}"`;
}

export const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * Cache-Control for immutable content of a registry: public content may be kept by any cache;
 * a private registry's only by the caller's own (`private`), and `Vary: Authorization` keeps a
 * cache from answering one caller with another's copy (docs/server.md, "Caching").
 */
export function immutableCaching(visibility: string): Record<string, string> {
  return visibility === 'public'
    ? { 'cache-control': IMMUTABLE }
    : { 'cache-control': 'private, max-age=31536000, immutable', vary: 'Authorization' };
}

/** Whether the request's `If-None-Match` matches the strong ETag `etag` (quoted). */
export function notModified(c: Context<AppEnv>, etag: string): boolean {
  return matchesEtag(c.req.header('if-none-match'), etag);
}

/**
 * Whether an `If-None-Match` header value matches the strong ETag `etag` (quoted): the one rule,
 * for the routes (`notModified`) and the listener's fast path (listener.ts).
 */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** The Content-Security-Policy of served content: nothing may run or load, in a sandbox. */
export const CONTENT_POLICY = "default-src 'none'; sandbox";

type Content = string | Uint8Array;

/** What a conditional answer is sent with (see `conditionalAnswer`). */
export interface Conditional {
  etag: string;
  /** The answer's caching headers, a plain object completed here. */
  headers: Record<string, string>;
  contentType: string;
}

/**
 * A read answered conditionally, decided in this one place (docs/server.md "Caching"): the
 * caching headers go on the `304` and on the full answer alike, with the ETag; `body` is called
 * only when the client does not have the answer (`If-None-Match`). Bytes are sent as they are,
 * never copied (a cached archive is up to 64 MiB): they are immutable once made.
 */
export function conditionalAnswer(c: Context<AppEnv>, answer: Conditional, body: () => Content): Response;
export function conditionalAnswer(
  c: Context<AppEnv>,
  answer: Conditional,
  body: () => Content | Promise<Content>,
): Response | Promise<Response>;
export function conditionalAnswer(
  c: Context<AppEnv>,
  { etag, headers, contentType }: Conditional,
  body: () => Content | Promise<Content>,
): Response | Promise<Response> {
  const status = notModified(c, etag) ? 304 : 200;
  conditionalHeaders(status, { etag, headers, contentType });
  if (status === 304) return c.body(null, 304, headers);
  // Hono's body type names Uint8Array over an ArrayBuffer; a Buffer's may be shared: the same bytes.
  const respond = (content: Content): Response =>
    c.body(content as string | Uint8Array<ArrayBuffer>, 200, headers);
  const content = body();
  return content instanceof Promise ? content.then(respond) : respond(content);
}

/**
 * A conditional answer's headers for its status, completed in `answer.headers`: the ETag on the
 * `304` and on the full answer alike, the content type on the full answer only.
 */
export function conditionalHeaders(
  status: 200 | 304,
  { etag, headers, contentType }: Conditional,
): Record<string, string> {
  headers.etag = etag;
  if (status === 200) headers['content-type'] = contentType;
  return headers;
}

/**
 * Immutable content of a registry (files, schema, archive): `conditionalAnswer` with a strong
 * ETag and immutable caching for the registry's visibility.
 */
export function immutableContent(
  c: Context<AppEnv>,
  etag: string,
  contentType: string,
  body: () => Content | Promise<Content>,
  visibility: string,
): Response | Promise<Response> {
  const headers = {
    ...immutableCaching(visibility),
    // A template's file is data, never a page: not sniffed into HTML, and opened in a browser it
    // runs nothing and loads nothing (docs/server.md, "HTTP API").
    'x-content-type-options': 'nosniff',
    'content-security-policy': CONTENT_POLICY,
  };
  return conditionalAnswer(c, { etag, headers, contentType }, body);
}

export function intParam(
  c: Context<AppEnv>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const text = c.req.query(name);
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new DmError(
      'INVALID_PARAMETER',
      `${name} must be a whole number from ${min} to ${max}, not '${text}'`,
      {
        category: 'invalid-input',
        details: { parameter: name },
      },
    );
  }
  return value;
}

/** Parses a JSON request body; a malformed one is a 400 naming the problem. */
export async function jsonBody(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw new DmError('INVALID_JSON', 'the request body is not valid JSON', { category: 'invalid-input' });
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new DmError('INVALID_JSON', 'the request body must be a JSON object', {
      category: 'invalid-input',
    });
  }
  return body as Record<string, unknown>;
}

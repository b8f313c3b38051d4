/**
 * Reading what a registry server (`--registry-url`) answers, the one way `dm resolve`, `install`,
 * `versions` and `search` do it (docs/client.md "The resolver chain"). A URL that answers something
 * other than JSON (a web page, a proxy's login page) is not a registry server: dm says so, exit 5,
 * and does not fall back to another source. A server that cannot be reached is named with the
 * reason in plain words (docs/errors.md "Unreachable: the reason"), at once.
 */
import { DmError, relayedError } from '../error.js';
import { readBounded } from '../fetch/read-bounded.js';
import { noAnswer } from '../http-limit.js';
import { DEFAULT_SOURCE_LIMITS } from '../source/source.js';

/** The most bytes of JSON dm reads from a registry server (a batch resolve of 500 large versions fits). */
const MAX_JSON_BYTES = 64 * 1024 * 1024;
/** The most bytes of one file: the largest file a server's source may hold. */
export const MAX_FILE_BYTES = DEFAULT_SOURCE_LIMITS.maxFileBytes;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function notARegistry(base: string, answered: string): DmError {
  return new DmError(
    'NOT_A_REGISTRY_SERVER',
    `${base} is not a dm registry server (it answered ${answered})`,
    {
      hint: 'check --registry-url: it names a server started with dm-registry start, e.g. http://localhost:8080',
      details: { url: base },
    },
  );
}

function contentType(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim() || 'no content type';
}

/**
 * An answer's body, at most `limit` bytes (REGISTRY_ANSWER_TOO_LARGE past it). A connection lost or
 * timed out in the middle of the body is REGISTRY_UNREACHABLE, as one that never answered.
 */
export async function registryBody(
  response: Response,
  base: string,
  options: { limit: number; timeoutMs?: number | undefined; tooLarge?: () => DmError },
): Promise<Buffer> {
  try {
    return await readBounded(
      response,
      options.limit,
      options.tooLarge ??
        (() =>
          new DmError(
            'REGISTRY_ANSWER_TOO_LARGE',
            `the registry server at ${base} answered ${new URL(response.url || base).pathname} with more than ${options.limit} bytes`,
          )),
    );
  } catch (error) {
    if (error instanceof DmError) throw error;
    throw registryUnreachable(base, error, options.timeoutMs);
  }
}

/** The JSON body of a successful answer (bounded, registryBody), or NOT_A_REGISTRY_SERVER. */
export async function registryJson<T>(response: Response, base: string, timeoutMs?: number): Promise<T> {
  if (!JSON_TYPE.test(response.headers.get('content-type') ?? '')) {
    await response.body?.cancel();
    throw notARegistry(base, contentType(response));
  }
  const body = await registryBody(response, base, { limit: MAX_JSON_BYTES, timeoutMs });
  try {
    return JSON.parse(body.toString('utf8')) as T;
  } catch {
    throw notARegistry(base, 'JSON that does not parse');
  }
}

/**
 * The DmError of a failed answer: the server's own error when it sent one; a page (HTML, …) from
 * something that is not a registry server is NOT_A_REGISTRY_SERVER, except for a gateway's 5xx page,
 * which says the server behind it is down (REMOTE_ERROR, unreachable).
 */
export async function registryFailure(
  response: Response,
  base: string,
  what: string,
  timeoutMs?: number,
): Promise<DmError> {
  if (!JSON_TYPE.test(response.headers.get('content-type') ?? '')) {
    await response.body?.cancel();
    if (response.status < 500)
      return notARegistry(base, `${contentType(response)} with HTTP ${response.status}`);
    return relayedError(response.status, undefined, (message) => `${what}: ${message}`);
  }
  const body = await registryBody(response, base, { limit: MAX_JSON_BYTES, timeoutMs });
  let error: unknown;
  try {
    error = (JSON.parse(body.toString('utf8')) as { error?: unknown } | null)?.error;
  } catch {
    return notARegistry(base, 'JSON that does not parse');
  }
  const answer = error !== null && typeof error === 'object' ? (error as Record<string, unknown>) : undefined;
  return relayedError(
    response.status,
    withApiPathHint(answer, response.status, base),
    (message) => `${what}: ${message}`,
  );
}

/**
 * A 404 from a base URL that ends in the API path (`http://host:8080/api/v1`, copied from a curl
 * line): the hint names the server's own address, which --registry-url wants.
 */
function withApiPathHint(
  answer: Record<string, unknown> | undefined,
  status: number,
  base: string,
): Record<string, unknown> | undefined {
  if (status !== 404) return answer;
  const url = new URL(base);
  const api = /\/api\/v\d+\/*$/.exec(url.pathname)?.[0];
  if (!api) return answer;
  const server = `${url.origin}${url.pathname.slice(0, url.pathname.length - api.length)}`;
  return {
    ...answer,
    hint: `--registry-url is the server's address, without ${api.replace(/\/+$/, '')}: --registry-url ${server}`,
  };
}

/** REGISTRY_UNREACHABLE for a request that got no answer, with the reason in plain words. */
export function registryUnreachable(
  base: string,
  error: unknown,
  timeoutMs?: number,
  tlsHint = 'a server that speaks plain HTTP is named http://… in --registry-url',
): DmError {
  return noAnswer('REGISTRY_UNREACHABLE', `the registry server at ${base}`, error, {
    timeoutMs,
    hint: 'check --registry-url, or use --offline to work from dm.lock and the cache',
    ...(base.startsWith('https:') ? { tlsHint } : {}),
  });
}

/**
 * Reading what a registry server (`--registry-url`) answers, the one way `dm resolve`, `install`,
 * `versions` and `search` do it (docs/client.md "The resolver chain"). A URL that answers something
 * other than JSON (a web page, a proxy's login page) is not a registry server: dm says so, exit 5,
 * and does not fall back to another source. A server that cannot be reached is named with the
 * reason in plain words (docs/errors.md "Unreachable: the reason"), at once.
 */
import { DmError, relayedError } from '../error.js';
import { noAnswer } from '../http-limit.js';

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

/** The JSON body of a successful answer, or NOT_A_REGISTRY_SERVER. */
export async function registryJson<T>(response: Response, base: string): Promise<T> {
  if (!JSON_TYPE.test(response.headers.get('content-type') ?? '')) {
    await response.body?.cancel();
    throw notARegistry(base, contentType(response));
  }
  try {
    return (await response.json()) as T;
  } catch {
    throw notARegistry(base, 'JSON that does not parse');
  }
}

/**
 * The DmError of a failed answer: the server's own error when it sent one; a page (HTML, …) from
 * something that is not a registry server is NOT_A_REGISTRY_SERVER, except for a gateway's 5xx page,
 * which says the server behind it is down (REMOTE_ERROR, unreachable).
 */
export async function registryFailure(response: Response, base: string, what: string): Promise<DmError> {
  if (!JSON_TYPE.test(response.headers.get('content-type') ?? '')) {
    await response.body?.cancel();
    if (response.status < 500)
      return notARegistry(base, `${contentType(response)} with HTTP ${response.status}`);
    return relayedError(response.status, undefined, (message) => `${what}: ${message}`);
  }
  let error: unknown;
  try {
    error = ((await response.json()) as { error?: unknown } | null)?.error;
  } catch {
    return notARegistry(base, 'JSON that does not parse');
  }
  return relayedError(
    response.status,
    error !== null && typeof error === 'object' ? (error as Record<string, unknown>) : undefined,
    (message) => `${what}: ${message}`,
  );
}

/** REGISTRY_UNREACHABLE for a request that got no answer, with the reason in plain words. */
export function registryUnreachable(base: string, error: unknown, timeoutMs?: number): DmError {
  return noAnswer('REGISTRY_UNREACHABLE', `the registry server at ${base}`, error, {
    timeoutMs,
    hint: 'check --registry-url, or use --offline to work from dm.lock and the cache',
  });
}

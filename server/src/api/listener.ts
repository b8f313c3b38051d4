/**
 * The server's Node request listener (docs/server.md "Read path"), what `dm-registry start` serves:
 * a `GET /api/v1/resolve` whose answer is in memory (the caller's access decided without waiting,
 * the answer in the catalog's cache) is answered here from the answer's prepared bytes, without
 * building a Request, a Hono context or a Response; every other request goes to the Hono app
 * through @hono/node-server's listener. The fast path decides nothing of its own: the access is the
 * token book's (`accessInMemory`), the answer and who may have it the catalog's (`cachedAnswer`),
 * the status and headers `resolveHead`'s (the route's ETag/304 rule), the request id, metrics and
 * access-log line the tracker's; a request it is not sure to read exactly as the app would (a URL
 * or Host header @hono/node-server would rewrite, a repeated Authorization header) goes to the app.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { getQueryParam } from 'hono/utils/url';
import { answerBytes, type CachedAnswer } from '../resolve/catalog.js';
import type { RegistryApp } from './app.js';
import { resolveHead } from './routes-read.js';
import { SELF_TRACKED_ROUTE } from './tracking.js';

const PATH = SELF_TRACKED_ROUTE.path;
const PREFIX = `${PATH}?`;
/**
 * A request target @hono/node-server hands to the app as it is (its `reValidRequestUrl`, plus `%`,
 * which only makes it re-serialise the URL, leaving the query as it is; without `'`, which that
 * would escape): the fast path reads the same query the route would.
 */
const PLAIN_TARGET = /^[A-Za-z0-9!$&()*+,\-./:;=?@_~%]*$/;
/** A Host header @hono/node-server takes as it is (its `reValidHost`); another may be refused there. */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;

export type Listener = ((req: IncomingMessage, res: ServerResponse) => void) & {
  /** Requests answered by the fast path so far (the tests check it is taken). */
  readonly fastAnswers: number;
};

/** The listener of `registry` (see the module comment). */
export function appListener(registry: RegistryApp): Listener {
  const { app, service, tracker, logger } = registry;
  const hono = getRequestListener(app.fetch);
  // Only while the app would answer GET /api/v1/resolve with the resolve route alone: a middleware
  // added on that path some day (it would change the answer) turns the fast path off.
  const enabled = app.router.match('GET', PATH)[0].length === 1;
  /** Per answer (a new object after every index swap): its body's bytes and their length. */
  const lengths = new WeakMap<CachedAnswer, string>();
  let fastAnswers = 0;

  const cached = (req: IncomingMessage): CachedAnswer | undefined => {
    const url = req.url;
    if (req.method !== 'GET' || url === undefined || !url.startsWith(PREFIX) || !PLAIN_TARGET.test(url)) {
      return undefined;
    }
    const host = req.headers.host;
    if (host === undefined || !PLAIN_HOST.test(host)) return undefined;
    const ref = getQueryParam(url, 'ref') as string | undefined;
    if (!ref || service.mirror?.involves(ref)) return undefined;
    const authorization = req.headers.authorization;
    // Node keeps the first of repeated Authorization headers, the app reads them joined.
    if (authorization !== undefined && repeated(req.rawHeaders, 'authorization')) return undefined;
    const access = service.tokens.accessInMemory(authorization);
    return access && service.catalog.cachedAnswer(ref, access);
  };

  const answer = (req: IncomingMessage, res: ServerResponse, cachedAnswer: CachedAnswer, started: number) => {
    const given = req.headers['x-request-id'];
    const requestId = tracker.requestId(typeof given === 'string' ? given : undefined);
    const headers: Record<string, string> = { 'x-request-id': requestId };
    const status = resolveHead(cachedAnswer, req.headers['if-none-match'], headers);
    tracker.record(requestId, 'GET', PATH, PATH, status, started);
    fastAnswers++;
    if (status === 304) {
      res.writeHead(status, headers);
      res.end();
      return;
    }
    const bytes = answerBytes(cachedAnswer);
    let length = lengths.get(cachedAnswer);
    if (length === undefined) {
      length = String(bytes.byteLength);
      lengths.set(cachedAnswer, length);
    }
    headers['content-length'] = length;
    res.writeHead(status, headers);
    res.end(bytes);
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    if (enabled) {
      const started = performance.now();
      let hit: CachedAnswer | undefined;
      try {
        hit = cached(req);
      } catch (error) {
        // Deciding starts and changes nothing: the app answers, and says what went wrong.
        logger.log('warn', 'resolve fast path declined', { error: String(error) });
      }
      if (hit) {
        answer(req, res, hit, started);
        return;
      }
    }
    void hono(req, res);
  };
  return Object.defineProperty(listener, 'fastAnswers', { get: () => fastAnswers }) as Listener;
}

function repeated(rawHeaders: readonly string[], lowerName: string): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === lowerName.length && name.toLowerCase() === lowerName && ++seen > 1) return true;
  }
  return false;
}

/**
 * Serves `registry` on `port` and `hostname` with `appListener` (what @hono/node-server's `serve`
 * does with the app's fetch alone); `onListening` gets the address.
 */
export function serveApp(
  registry: RegistryApp,
  options: { port: number; hostname?: string | undefined },
  onListening?: (info: AddressInfo) => void,
): Server & { listener: Listener } {
  const listener = appListener(registry);
  const server = createServer({}, listener) as Server & { listener: Listener };
  server.listener = listener;
  server.listen(options.port, options.hostname, () => onListening?.(server.address() as AddressInfo));
  return server;
}

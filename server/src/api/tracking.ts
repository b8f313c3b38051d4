/**
 * Per-request bookkeeping: a request id (X-Request-Id, taken from the request when it is a safe
 * token), Prometheus counters and latency, one JSON access-log line. One middleware
 * (`trackServedRoutes`) attaches it to every route the app serves, read from the app's own route
 * table, with one documented exception: `GET /api/v1/resolve` calls the tracker inline, because a
 * route matched by one handler only is dispatched by Hono synchronously, without the middleware
 * chain's promises, which is what lets resolve stay near bare Hono's throughput (docs/server.md
 * "Read path"). Requests no route matches are tracked by the app's not-found handler.
 */
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from '../log.js';
import type { RegistryService } from '../service.js';
import type { AppEnv } from './http.js';
import { observeDuration, type RequestSlot, type ServerMetrics } from './metrics.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** At most this many method/route/status slots are kept; past it, requests take prom-client's own path. */
const MAX_SLOTS = 1000;

export class RequestTracker {
  /** Per route, method and status (nested: no key string is built per request). */
  private readonly slots = new Map<string, Map<string, Map<number, RequestSlot>>>();
  private slotCount = 0;
  private readonly boot = Date.now().toString(36);
  private counter = 0;

  constructor(
    private readonly service: RegistryService,
    private readonly metrics: ServerMetrics,
    private readonly logger: Logger,
    private readonly accessLog: boolean,
  ) {}

  /**
   * Starts tracking a request (once): id, service, start time. Call before the response exists.
   * `setHeader: false` leaves X-Request-Id to the caller (the resolve route puts it in a plain
   * header object: a Headers instance costs @hono/node-server its fastest write path).
   */
  begin(c: Context<AppEnv>, setHeader = true): string {
    const existing = c.get('requestId');
    if (existing !== undefined) return existing;
    const requestId = this.requestId(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    c.set('service', this.service);
    // Before the response exists: a header set on a finished response makes Hono rebuild it as a
    // stream, which costs a third of the throughput on @hono/node-server.
    if (setHeader) c.header('X-Request-Id', requestId);
    c.set('requestStarted', performance.now());
    return requestId;
  }

  /** A request's id: the client's `X-Request-Id` when it is a safe token, else a new one. */
  requestId(given: string | undefined): string {
    return given && REQUEST_ID.test(given) ? given : `${this.boot}-${(++this.counter).toString(36)}`;
  }

  /**
   * Records a finished request (once: a second call for the same request does nothing). `route`
   * is the registered path, when the caller knows it (else read from the match).
   */
  end(c: Context<AppEnv>, status: number, route = routePath(c)): void {
    const started = c.get('requestStarted');
    if (started === undefined) return;
    c.set('requestStarted', undefined as unknown as number);
    this.record(c.get('requestId'), c.req.method, c.req.path, route, status, started);
  }

  /**
   * The metrics and the access-log line of one finished request that began at `started`
   * (performance.now()): `end` for a request Hono answered, and the listener's fast path
   * (listener.ts) for one it answered itself.
   */
  record(
    requestId: string,
    method: string,
    path: string,
    route: string,
    status: number,
    started: number,
  ): void {
    const seconds = (performance.now() - started) / 1000;
    // Slots per method, route and status: counted in plain numbers (metrics.ts).
    const slot = this.slotFor(method, route, status);
    if (slot) {
      slot.pending++;
      observeDuration(slot.durations, seconds);
    } else {
      this.metrics.requests.inc({ method, route, status: String(status) });
      this.metrics.duration.observe({ route }, seconds);
    }
    if (this.accessLog)
      this.logger.request(requestId, method, path, status, Math.round(seconds * 10000) / 10);
  }

  private slotFor(method: string, route: string, status: number): RequestSlot | undefined {
    let byMethod = this.slots.get(route);
    if (byMethod === undefined) {
      if (this.slotCount >= MAX_SLOTS) return undefined;
      byMethod = new Map();
      this.slots.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      if (this.slotCount >= MAX_SLOTS) return undefined;
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let slot = byStatus.get(status);
    if (slot === undefined && this.slotCount < MAX_SLOTS) {
      slot = this.metrics.requestSlot(method, route, status);
      byStatus.set(status, slot);
      this.slotCount++;
    }
    return slot;
  }
}

/** The one route that tracks itself (see the module comment). */
export const SELF_TRACKED_ROUTE = { method: 'GET', path: '/api/v1/resolve' } as const;

/**
 * Tracks every route of `served` with one middleware on `app`, registered for the method and path
 * each route was registered with (so a route added anywhere is tracked without a list to keep), and
 * before `served` is mounted on `app`, so that it runs first. The resolve fast path is left out.
 */
export function trackServedRoutes(app: Hono<AppEnv>, served: Hono<AppEnv>, tracker: RequestTracker): void {
  const middleware: MiddlewareHandler<AppEnv> = async (c, next) => {
    // Two registered paths may match one request (e.g. `/x/*` and `/x/:id`): track it once.
    if (c.get('requestId') !== undefined) return next();
    tracker.begin(c);
    await next();
    tracker.end(c, c.res.status);
  };
  const seen = new Set<string>();
  for (const { method, path } of served.routes) {
    const key = `${method} ${path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (method === SELF_TRACKED_ROUTE.method && path === SELF_TRACKED_ROUTE.path) continue;
    app.on(method, path, middleware);
  }
}

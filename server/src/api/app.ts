/**
 * The registry server's HTTP app (docs/server.md "HTTP API"): `createApp(deps)` composes the sub-apps over
 * one RegistryService. Errors become `{error: {code, message, details}}` with the status of their
 * category, in one place (`onError`); every request gets an id (X-Request-Id), a JSON log line and
 * metrics; responses never carry stack traces or secrets.
 */

import { Hono } from 'hono';
import { TrieRouter } from 'hono/router/trie-router';
import { DmError, isDmError } from '../../../client/src/error.js';
import { FileCheckpointMemory } from '../../../client/src/integrity/index.js';
import { createLogger, type Logger } from '../log.js';
import type { DeploymentManager } from '../manager/deployment-manager.js';
import { type ManagerConfig, mountManager } from '../manager/mount.js';
import { Mirror } from '../mirror/mirror.js';
import { storeTarget } from '../mirror/store-target.js';
import { Upstream } from '../mirror/upstream.js';
import { notFoundPage, pageRoutes } from '../pages/routes.js';
import type { MirrorFactory } from '../service/context.js';
import { PRIVATE_LABEL, RegistryService, type ServiceDeps } from '../service.js';
import { hashToken } from '../store/secrets.js';
import { bearerToken } from './access.js';
import { Admission, type AdmissionOptions, PerCaller } from './admission.js';
import { type AppEnv, accessOf, errorResponse } from './http.js';
import { ServerMetrics } from './metrics.js';
import { OPENAPI } from './openapi.js';
import { MemoRouter } from './router.js';
import { checksumRoutes } from './routes-checksums.js';
import { ociRoutes } from './routes-oci.js';
import { readRoutes } from './routes-read.js';
import { writeRoutes } from './routes-write.js';
import { RequestTracker, trackServedRoutes } from './tracking.js';
import { archiveCache } from './version-archive.js';

export interface CreateAppDeps extends Omit<ServiceDeps, 'log' | 'onSync' | 'mirror'> {
  logger?: Logger;
  /** Log one line per request (default true). */
  accessLog?: boolean;
  /** Largest JSON body for writes and batch resolve, bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Largest webhook body, bytes (default 25 MiB, GitHub's own limit). */
  maxWebhookBytes?: number;
  /** Batch resolves answered at a time, and waiting beyond those (default 2 and 64). */
  batchAdmission?: AdmissionOptions;
  /** How long a client may take to read a whole batch resolve answer, ms (default 60 s). */
  batchAnswerDeadlineMs?: number;
  /** Webhook deliveries read and checked at a time, and waiting beyond those (default 2 and 8). */
  webhookAdmission?: AdmissionOptions;
  /** The Deployment Manager (docs/manager.md): mounted when clusters are configured. */
  manager?: ManagerConfig | undefined;
  /** Upstream registry servers to pull through, in order (docs/mirroring.md). */
  upstreams?: readonly {
    url: string;
    token?: string | undefined;
    /** The upstream checksum log's verifier key (docs/mirroring.md). */
    checksumKey?: string | undefined;
    /** Where the latest verified checkpoint of that log is kept (default: memory). */
    checkpointFile?: string | undefined;
  }[];
  /** How long a floating reference's answer is trusted before the upstream is asked again, ms. */
  upstreamTtlMs?: number;
  /** How long an upstream's not-found answer is remembered, ms. */
  upstreamNegativeTtlMs?: number;
  /** Deadline of one request to an upstream, ms (default 10 s); a call past it is 504. */
  upstreamTimeoutMs?: number;
  /**
   * Tokens that see the private registries' sums in `/metrics` (`DM_METRICS_TOKEN`); admin
   * tokens see them too, anyone else the public series only (docs/server.md, "HTTP API").
   */
  metricsTokens?: readonly string[];
}

export interface RegistryApp {
  app: Hono<AppEnv>;
  service: RegistryService;
  metrics: ServerMetrics;
  logger: Logger;
  /** Request ids, metrics and access log (tracking.ts), for the listener's fast path too (listener.ts). */
  tracker: RequestTracker;
  manager?: DeploymentManager | undefined;
}

function isDatabaseDown(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (
      typeof code === 'string' &&
      /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|CORRUPT|NOTADB|FULL|READONLY)/.test(code)
    ) {
      return true;
    }
    // PostgreSQL: connection exceptions (08…), the server shutting down (57P…), no server there.
    if (typeof code === 'string' && /^(08|57P0)|^ECONNREFUSED$|^ECONNRESET$|^EPIPE$/.test(code)) return true;
    // Its Unix socket is gone while it is stopped.
    if (code === 'ENOENT' && (e as { syscall?: unknown }).syscall === 'connect') return true;
    if (
      e instanceof Error &&
      /database connection is not open|Connection terminated|Cannot use a pool after calling end|timeout exceeded when trying to connect/.test(
        e.message,
      )
    ) {
      return true;
    }
  }
  return false;
}

/** The pull-through mirror of `--upstream` (docs/mirroring.md) and its store side. */
function mirrorFactory(deps: CreateAppDeps, logger: Logger, metrics: ServerMetrics): MirrorFactory {
  const upstreams = deps.upstreams ?? [];
  return ({ data, catalog, quarantined, revalidateHeld }) => {
    const target = storeTarget(data.mirror, logger, {
      onStored: () => catalog.invalidate(),
      onMismatch: () => metrics.upstreamDigestMismatches.inc(),
      onQuarantine: quarantined,
    });
    // Which registries are this server's own, read before the first request needs it.
    target
      .refreshOwn()
      .catch((error: unknown) => logger.log('error', 'registries unreadable', { error: String(error) }));
    const mirror = new Mirror({
      upstreams: upstreams.map(
        (u) =>
          new Upstream({
            url: u.url,
            token: u.token,
            checksumKey: u.checksumKey,
            checkpointMemory: u.checkpointFile ? new FileCheckpointMemory(u.checkpointFile) : undefined,
            ...(deps.upstreamTimeoutMs === undefined ? {} : { timeoutMs: deps.upstreamTimeoutMs }),
          }),
      ),
      target,
      ownRegistry: (name) => target.ownRegistry(name),
      refreshOwn: () => target.refreshOwn(),
      defaultRegistry: () => catalog.defaultRegistry,
      onStored: () => undefined,
      revalidateHeld,
      onRemovedUpstream: (key) => {
        target
          .markRemoved(key)
          .catch((error: unknown) =>
            logger.log('error', 'removed-upstream mark failed', { error: String(error) }),
          );
      },
      ...(deps.upstreamTtlMs === undefined ? {} : { ttlMs: deps.upstreamTtlMs }),
      ...(deps.upstreamNegativeTtlMs === undefined ? {} : { negativeTtlMs: deps.upstreamNegativeTtlMs }),
    });
    return { mirror, target };
  };
}

export function createApp(deps: CreateAppDeps): RegistryApp {
  const logger = deps.logger ?? createLogger();
  const metrics = new ServerMetrics();
  // The composition (docs/server.md "Where things are"): the store is open; the service is built
  // from it, and builds the mirror (from the factory below) before the parts that use it; then
  // the manager and the HTTP app, each from what it needs. Nothing is assigned afterwards.
  const service = new RegistryService({
    ...deps,
    log: (level, message, fields) => logger.log(level, message, fields),
    onSync: (registry, outcome) => {
      metrics.syncs.inc({ registry, status: outcome.status });
      metrics.recordSync(outcome.registryId, registry, outcome);
    },
    checksums: {
      ...deps.checksums,
      onQuarantine: (registry, count) => metrics.quarantinedVersions.inc({ registry }, count),
    },
    mirror: deps.upstreams && deps.upstreams.length > 0 ? mirrorFactory(deps, logger, metrics) : undefined,
  });
  // Read at each scrape, so every replica reports every registry, deleted ones disappear, and the
  // private registries' versions are summed (docs/server.md, "HTTP API").
  metrics.countVersions(async () => {
    try {
      return (await service.data.registries.list()).map((r) => ({
        id: r.id,
        registry: r.visibility === 'public' ? r.name : PRIVATE_LABEL,
        versions: r.versionCount,
      }));
    } catch (error) {
      logger.log('error', 'registry versions could not be counted for /metrics', { error: String(error) });
      return undefined;
    }
  });
  // A database that does not answer leaves the gauge empty; the rest of /metrics is still served.
  metrics.countOpenQuarantines(async () => {
    try {
      return (await service.data.checksums.openCounts()).map((c) => ({
        registry: c.visibility === 'public' ? c.registry : PRIVATE_LABEL,
        open: c.open,
      }));
    } catch (error) {
      logger.log('error', 'open quarantines could not be counted for /metrics', { error: String(error) });
      return [];
    }
  });
  void service.checksums.resendUndelivered();
  const tracker = new RequestTracker(service, metrics, logger, deps.accessLog ?? true);
  const app = new Hono<AppEnv>({ router: new MemoRouter() });
  // Every route is built on `served` first; tracking is attached from its route table (tracking.ts).
  const served = new Hono<AppEnv>();

  app.onError((error, c) => {
    if (isDmError(error)) return errorResponse(c, error);
    if (isDatabaseDown(error)) {
      logger.log('error', 'database unavailable', {
        requestId: c.get('requestId'),
        error: (error as Error).message,
      });
      return errorResponse(
        c,
        new DmError('DATABASE_UNAVAILABLE', 'the database is unavailable; retry shortly', {
          category: 'unreachable',
          details: { retryAfter: 1 },
        }),
      );
    }
    logger.log('error', 'internal error', {
      requestId: c.get('requestId'),
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
    return errorResponse(
      c,
      new DmError('INTERNAL', `internal error (request ${c.get('requestId')})`, { category: 'error' }),
    );
  });

  // No route for this method and path (docs/server.md "Errors"): 405 with Allow when the path has
  // routes for other methods; else 404 — an HTML page for a browser outside /api, JSON otherwise.
  let methods: TrieRouter<string> | undefined;
  const allowedMethods = (path: string): string[] => {
    if (!methods) {
      methods = new TrieRouter<string>();
      for (const r of app.routes) if (r.method !== 'ALL') methods.add(r.method, r.path, r.method);
    }
    const allowed = new Set<string>();
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
      if (methods.match(m, path)[0].length > 0) allowed.add(m);
    if (allowed.has('GET')) allowed.add('HEAD');
    return [...allowed];
  };
  app.notFound(async (c) => {
    tracker.begin(c);
    const allowed = allowedMethods(c.req.path);
    let res: Response;
    if (allowed.length > 0) {
      const json = errorResponse(
        c,
        new DmError(
          'METHOD_NOT_ALLOWED',
          `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(', ')}`,
        ),
      );
      res = new Response(json.body, { status: 405, headers: json.headers });
      res.headers.set('Allow', allowed.join(', '));
    } else {
      const error = new DmError('NOT_FOUND', `no endpoint ${c.req.method} ${c.req.path}`, {
        category: 'not-found',
      });
      const browser = /\btext\/html\b/.test(c.req.header('accept') ?? '') && !c.req.path.startsWith('/api/');
      res = browser ? await notFoundPage(c, error) : errorResponse(c, error);
    }
    tracker.end(c, res.status);
    return res;
  });

  served.get('/healthz', (c) => c.json({ status: 'ok' }));
  served.get('/readyz', async (c) => {
    const state = await service.data.ready();
    if (state === 'migrations-pending') {
      return errorResponse(
        c,
        new DmError('NOT_READY', 'database migrations are not applied', { category: 'unreachable' }),
      );
    }
    if (state === 'unreachable') {
      return errorResponse(
        c,
        new DmError('NOT_READY', 'the database is unreachable', { category: 'unreachable' }),
      );
    }
    return c.json({ status: 'ready' });
  });
  const metricsHashes = new Set((deps.metricsTokens ?? []).filter((t) => t !== '').map(hashToken));
  served.get('/metrics', async (c) => {
    const authorization = c.req.header('authorization');
    // A metrics token, else an admin token, sees the private sums; a token neither knows is 401.
    const withPrivate =
      authorization !== undefined &&
      (metricsHashes.has(hashToken(bearerToken(authorization))) || (await accessOf(c)).admin);
    return c.body(await metrics.exposition(withPrivate, PRIVATE_LABEL), 200, {
      'Content-Type': metrics.registry.contentType,
    });
  });
  served.get('/api/v1/openapi.json', (c) => c.json(OPENAPI));
  const webhooks = new Admission('webhook deliveries', deps.webhookAdmission ?? { concurrency: 2, queue: 8 });
  metrics.watchAdmission('webhook', webhooks.counters);
  served.route('/api/v1', checksumRoutes({ maxBodyBytes: deps.maxBodyBytes ?? 1024 * 1024 }));
  const batches = new Admission('batch resolves', deps.batchAdmission ?? { concurrency: 2, queue: 64 });
  metrics.watchAdmission('batch-resolve', batches.counters);
  metrics.watchAdmission('archive', archiveCache.admission.counters);
  const batchesPerCaller = new PerCaller('batch resolves', { concurrency: 1, queue: 8 });
  served.route(
    '/api/v1',
    readRoutes(tracker, {
      batches,
      batchesPerCaller,
      ...(deps.batchAnswerDeadlineMs === undefined
        ? {}
        : { batchAnswerDeadlineMs: deps.batchAnswerDeadlineMs }),
    }),
  );
  served.route(
    '/api/v1',
    writeRoutes({
      maxBodyBytes: deps.maxBodyBytes ?? 1024 * 1024,
      maxWebhookBytes: deps.maxWebhookBytes ?? 25 * 1024 * 1024,
      webhookAdmission: webhooks,
    }),
  );
  served.route('/v2', ociRoutes());
  const manager = mountManager(served, deps.manager, service, logger);
  if (manager) metrics.watchAdmission('expand', manager.expansions.counters);
  if (manager) metrics.watchAdmission('configuration-read', manager.configurationReads.counters);
  served.route('/', pageRoutes());
  trackServedRoutes(app, served, tracker);
  app.route('/', served);
  return { app, service, metrics, logger, tracker, manager };
}

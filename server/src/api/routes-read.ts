/**
 * Read endpoints (docs/server.md "HTTP API"): registries, search, templates, resolve (single and batch),
 * and immutable content (files, schema, archive) of exact versions.
 */
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DmError } from '../../../client/src/error.js';
import { formatTemplateName } from '../../../client/src/reference/index.js';
import { batchCacheStatus } from '../mirror/mirror.js';
import { answerBytes, answerEtag, type RegistryView } from '../resolve/catalog.js';
import { nearestStored } from '../resolve/nearest-versions.js';
import { commitShown } from '../source/directory.js';
import type { QuarantineRow, ReadStore } from '../store/contract.js';
import { canonicalTemplate } from '../store/first-seen.js';
import { quarantineField } from '../store/quarantine.js';
import { nextTurn } from '../store/slices.js';
import { mayRead } from '../store/visibility.js';
import type { RequestAccess } from './access.js';
import { type Admission, callerAddress, type PerCaller } from './admission.js';
import { FILE_PAGE_DEFAULT, FILE_PAGE_MAX, filePage } from './file-list.js';
import {
  type AppEnv,
  accessOf,
  attachment,
  conditionalAnswer,
  conditionalHeaders,
  errorResponse,
  immutableContent,
  intParam,
  matchesEtag,
} from './http.js';
import { type RegistryVersionList, searchResult, syncHistory } from './shapes.js';
import { parseTemplatePath, type TemplatePath } from './template-path.js';
import { type RequestTracker, SELF_TRACKED_ROUTE } from './tracking.js';
import { archiveCache } from './version-archive.js';

const MAX_BATCH = 1000;
/** References answered between two turns of the event loop, at most (a slice costs a few ms). */
const BATCH_SLICE = 50;
/**
 * What one slice may take, ms: a slice that took longer halves the next one (down to one
 * reference), one that took less than half of it doubles the next (up to BATCH_SLICE), so on a
 * loaded machine, or for references that cost more to answer, other requests still get their turn.
 */
const BATCH_SLICE_MS = 4;
/**
 * How long a client may take to read a whole batch answer (docs/server.md, "Bounds on one caller's
 * work"): past it the connection is closed and the batch's slots are free again.
 */
export const BATCH_ANSWER_DEADLINE_MS = 60_000;

/**
 * A resolve answer's status and headers for a request with this `If-None-Match`, besides
 * X-Request-Id (and a mirror's Cache-Status and Age), in `headers` (the caller's own plain object:
 * no c.header, see `conditionalAnswer`): a resolution is answered conditionally on its ETag (the
 * catalog computes it with the answer's JSON: `answerEtag`; `conditionalHeaders` and `matchesEtag`
 * decide as for content), an error as it is. One rule for the route and the listener's fast path
 * (listener.ts); the body goes with every status but 304.
 */
export function resolveHead(
  answer: { status: number; body: string; etag?: string | undefined },
  ifNoneMatch: string | undefined,
  headers: Record<string, string>,
): number {
  if (answer.status === 200) {
    const etag = answer.etag ?? answerEtag(answer.body);
    const status = matchesEtag(ifNoneMatch, etag) ? 304 : 200;
    conditionalHeaders(status, { etag, headers, contentType: 'application/json' });
    return status;
  }
  headers['content-type'] = 'application/json';
  return answer.status;
}

/** A resolve answer as a response (`resolveHead`). */
function resolveResponse(
  c: Context<AppEnv>,
  answer: { status: number; body: string; etag?: string },
  headers: Record<string, string>,
): Response {
  const status = resolveHead(answer, c.req.header('if-none-match'), headers);
  return new Response(status === 304 ? null : answer.body, { status, headers });
}

export function readRoutes(
  tracker: RequestTracker,
  options: { batches: Admission; batchesPerCaller: PerCaller; batchAnswerDeadlineMs?: number },
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get('/registries', async (c) => {
    const service = c.get('service');
    const access = await accessOf(c);
    const rows = (await service.all()).filter((r) => access.canRead(r));
    return c.json({
      registries: await Promise.all(rows.map((r) => service.info(r, { viewer: access }))),
    });
  });

  // Admin tokens and read tokens for that registry; a registry the token may not read is not found.
  app.get('/registries/:id{[^/]+}/syncs', async (c) => {
    const service = c.get('service');
    const access = await accessOf(c);
    if (c.req.header('authorization') === undefined) {
      throw new DmError(
        'UNAUTHORIZED',
        'the sync history needs an admin token or a read token for the registry',
        {
          category: 'unauthorized',
        },
      );
    }
    const row = await service.find(c.req.param('id'), access);
    // Not for anonymous readers of a public registry: the reader must be granted it.
    if (!mayRead(access.readable(), { ...row, visibility: 'private' })) {
      throw new DmError('REGISTRY_NOT_FOUND', `no registry ${c.req.param('id')} on this server`, {
        category: 'not-found',
        details: { registry: c.req.param('id') },
      });
    }
    return c.json(syncHistory(await service.data.reads.syncs(row.id)));
  });

  // What a mirror syncs from (docs/mirroring.md): revalidated with If-None-Match; the ETag changes
  // with every index swap or added version (the registry's generation), and with the registry's
  // creation time, so a registry created anew (a new database) never answers an old ETag.
  app.get('/registries/:id{.+}/versions', async (c) => {
    const service = c.get('service');
    const row = await service.find(c.req.param('id'), await accessOf(c));
    const etag = `"${row.id}.${row.createdAt.toString(36)}.${row.generation}"`;
    const headers: Record<string, string> =
      row.visibility === 'public'
        ? { 'cache-control': 'no-cache' }
        : { 'cache-control': 'private, no-cache', vary: 'Authorization' };
    return conditionalAnswer(c, { etag, headers, contentType: 'application/json' }, async () => {
      // Open quarantines ride along, so a mirror shows them too (docs/integrity-store.md §6).
      const open = new Map(
        (await service.data.reads.openQuarantines(row.id)).map((q) => [`${q.template}@${q.version}`, q]),
      );
      const list: RegistryVersionList = {
        registry: row.name,
        commit: commitShown(row.commit),
        versions: (await service.data.reads.versionList(row.id)).map((v) => {
          const q = open.get(`${canonicalTemplate(row.name, v.collection, v.template)}@${v.version}`);
          return q ? { ...v, ...quarantineField(q) } : v;
        }),
      };
      return JSON.stringify(list);
    });
  });

  app.get('/registries/:id{.+}', async (c) => {
    const service = c.get('service');
    const access = await accessOf(c);
    const row = await service.find(c.req.param('id'), access);
    const quarantined = await service.data.reads.openQuarantines(row.id);
    return c.json({
      ...(await service.info(row, { findings: true, viewer: access })),
      ...quarantineList(quarantined),
    });
  });

  app.get('/search', async (c) => {
    const service = c.get('service');
    const access = await accessOf(c);
    const q = c.req.query('q') ?? '';
    if (q.length > 256) {
      throw new DmError('INVALID_PARAMETER', 'q must be at most 256 characters', {
        category: 'invalid-input',
      });
    }
    return c.json(
      searchResult(
        await service.data.reads.search({
          q,
          collection: c.req.query('collection'),
          registry: c.req.query('registry'),
          page: intParam(c, 'page', 1, 1, 1000),
          limit: intParam(c, 'limit', 20, 1, 100),
          reader: access.readable(),
        }),
      ),
    );
  });

  // The hot path: tracked inline and synchronous (tracking.ts), answered from the catalog's cache;
  // only a miss (or a token book being read) continues asynchronously.
  app.get('/resolve', (c) => {
    const requestId = tracker.begin(c, false);
    const fail = (error: unknown): Response => {
      if (!(error instanceof DmError)) throw error;
      c.header('X-Request-Id', requestId);
      const res = errorResponse(c, error);
      tracker.end(c, res.status, SELF_TRACKED_ROUTE.path);
      return res;
    };
    const send = (
      answer: { status: number; body: string },
      headers: Record<string, string> = { 'x-request-id': requestId },
    ): Response => {
      const res = resolveResponse(c, answer, headers);
      tracker.end(c, res.status, SELF_TRACKED_ROUTE.path);
      return res;
    };
    const answerFor = (ref: string, access: RequestAccess): Response | Promise<Response> => {
      const service = c.get('service');
      const mirror = service.mirror;
      if (mirror?.involves(ref)) {
        // A mirror's references may go upstream (docs/mirroring.md): answered asynchronously.
        return mirror
          .resolve(ref, () => service.catalog.resolveAnswer(ref, access))
          .then((m) => {
            const headers: Record<string, string> = {
              'x-request-id': requestId,
              'cache-status': m.cacheStatus,
            };
            if (m.age !== undefined) headers.age = String(m.age);
            return send(m, headers);
          }, fail);
      }
      const answer = service.catalog.resolveAnswer(ref, access);
      return answer instanceof Promise ? answer.then((a) => send(a), fail) : send(answer);
    };
    try {
      const ref = c.req.query('ref');
      if (!ref) {
        throw new DmError('INVALID_PARAMETER', 'the ref query parameter is required, e.g. ?ref=redis:v1.0', {
          category: 'invalid-input',
        });
      }
      const access = c.get('service').tokens.accessFor(c.req.header('authorization'));
      return access instanceof Promise ? access.then((a) => answerFor(ref, a), fail) : answerFor(ref, access);
    } catch (error) {
      return fail(error);
    }
  });

  // Batch resolve is work proportional to the request (docs/server.md, "Bounds on one caller's
  // work"): admitted before its body is read, each anonymous caller (by address) one batch at a time,
  // and answered as the client reads it, a slice at a time: the slot is held until the answer is
  // sent, the event loop is free between slices, and at most a slice of it is in memory.
  app.post(
    '/resolve',
    bodyLimit({
      maxSize: 1024 * 1024,
      onError: () => {
        throw new DmError('BODY_TOO_LARGE', 'the request body is larger than 1048576 bytes', {
          category: 'limit',
        });
      },
    }),
    async (c) => {
      const release = await admitBatch(c, options);
      let streaming = false;
      try {
        const refs = await batchReferences(c);
        const catalog = c.get('service').catalog;
        const access = await accessOf(c);
        const mirror = c.get('service').mirror;
        const mirrored =
          mirror && refs.some((r) => mirror.involves(r))
            ? await mirror.resolveMany(refs, (ref) => catalog.resolveAnswer(ref, access))
            : undefined;
        if (mirrored) {
          const status = batchCacheStatus(mirrored);
          if (status) c.header('Cache-Status', status);
        }
        const body = batchAnswer(
          refs,
          (ref, i) => mirrored?.[i] ?? catalog.resolveAnswer(ref, access),
          release,
          {
            ms: options.batchAnswerDeadlineMs ?? BATCH_ANSWER_DEADLINE_MS,
            cut: () => outgoingOf(c)?.destroy(),
          },
        );
        streaming = true;
        return c.body(body, 200, { 'Content-Type': 'application/json' });
      } finally {
        if (!streaming) release();
      }
    },
  );

  app.get('/templates/*', async (c) => {
    const service = c.get('service');
    const access = await accessOf(c);
    const raw = c.req.path.replace(/^.*?\/templates\//, '');
    const p = parseTemplatePath(raw);
    // A mirror pulls an exact version it does not hold through before serving its content
    // (docs/mirroring.md); the content is then answered from the store like any other.
    const cache =
      service.mirror && p.version !== undefined
        ? await service.mirror.ensureVersion({
            registry: `${p.host}/${p.owner}/${p.repo}`,
            collection: p.collection,
            template: p.template,
            version: p.version,
          })
        : '';
    // Set only once the caller may read the registry: a private one's stays unsaid.
    const { registry } = await service.catalog.locate(p, access);
    if (cache) c.header('Cache-Status', cache);
    const reads = service.data.reads;
    if (p.version === undefined) return templateInfo(c, reads, registry, p);
    return versionContent(c, reads, registry, p);
  });

  return app;
}

/**
 * A batch's slots (docs/server.md, "Bounds on one caller's work"): an anonymous caller's own share
 * first, then the server's; released together, once.
 */
async function admitBatch(
  c: Context<AppEnv>,
  options: { batches: Admission; batchesPerCaller: PerCaller },
): Promise<() => void> {
  const own =
    c.req.header('authorization') === undefined
      ? await options.batchesPerCaller.acquire(callerAddress(c))
      : undefined;
  let server: () => void;
  try {
    server = await options.batches.acquire();
  } catch (error) {
    own?.();
    throw error;
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    server();
    own?.();
  };
}

/** The references of a batch body `{"refs": [...]}`, at most MAX_BATCH. */
async function batchReferences(c: Context<AppEnv>): Promise<string[]> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw new DmError('INVALID_JSON', 'the request body is not valid JSON', {
      category: 'invalid-input',
    });
  }
  const refs = (body as { refs?: unknown } | null)?.refs;
  if (!Array.isArray(refs) || refs.some((r) => typeof r !== 'string')) {
    throw new DmError('INVALID_JSON', 'the body must be {"refs": ["<reference>", …]}', {
      category: 'invalid-input',
    });
  }
  if (refs.length > MAX_BATCH) {
    throw new DmError(
      'TOO_MANY_REFERENCES',
      `at most ${MAX_BATCH} references per request, got ${refs.length}`,
      {
        category: 'invalid-input',
      },
    );
  }
  return refs as string[];
}

const encoder = new TextEncoder();

/**
 * The Node server's response of a request (the connection's writable side, @hono/node-server's
 * `c.env.outgoing`), or undefined for a request that came through no socket (`app.request()`).
 */
function outgoingOf(c: Context<AppEnv>): { destroy(): void } | undefined {
  return (c.env as { outgoing?: { destroy(): void } } | undefined)?.outgoing;
}

/**
 * A batch answer `{"results": [...]}` as a stream the client pulls: each pull resolves one slice of
 * references (sized to take BATCH_SLICE_MS) after a turn of the event loop, and queues each result as its own chunks
 * (a resolution's bytes are shared, the catalog's `answerBytes`), so the answer is never whole in memory (1,000
 * references to a version of 1,000 files are 130 MB) and a slow reader holds back only its own
 * batch. `release` is called once the last byte is taken, the client goes away, or the deadline
 * passes: then `deadline.cut` closes the connection (the server's writer is waiting for the socket
 * to drain, not reading the stream, so ending the stream alone would leave it open) and the stream
 * errors with ANSWER_TIMEOUT.
 */
function batchAnswer(
  refs: readonly string[],
  answer: (
    ref: string,
    index: number,
  ) => { status: number; body: string } | Promise<{ status: number; body: string }>,
  release: () => void,
  deadline: { ms: number; cut: () => void },
): ReadableStream<Uint8Array> {
  let from = 0;
  let size = 8;
  let timer: NodeJS.Timeout | undefined;
  const done = () => {
    clearTimeout(timer);
    release();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        timer = setTimeout(() => {
          done();
          deadline.cut();
          controller.error(
            new DmError(
              'ANSWER_TIMEOUT',
              `the batch answer was not read within ${deadline.ms / 1000} s; the connection was closed`,
              { category: 'unreachable' },
            ),
          );
        }, deadline.ms);
        timer.unref();
      },
      async pull(controller) {
        try {
          if (from > 0) await nextTurn();
          const started = performance.now();
          const slice = refs.slice(from, from + size);
          const answers = await Promise.all(slice.map((ref, i) => answer(ref, from + i)));
          slice.forEach((ref, i) => {
            const a = answers[i]!;
            const open = `${from + i === 0 ? '{"results":[' : ','}{"ref":${JSON.stringify(ref)},`;
            if (a.status === 200) {
              controller.enqueue(encoder.encode(`${open}"resolution":`));
              controller.enqueue(answerBytes(a));
              controller.enqueue(encoder.encode('}'));
            } else {
              const error = JSON.stringify(JSON.parse(a.body).error);
              controller.enqueue(encoder.encode(`${open}"error":${error}}`));
            }
          });
          from += slice.length;
          const took = performance.now() - started;
          if (took > BATCH_SLICE_MS) size = Math.max(1, size >> 1);
          else if (took < BATCH_SLICE_MS / 2) size = Math.min(BATCH_SLICE, size * 2);
          if (from >= refs.length) {
            controller.enqueue(encoder.encode(refs.length === 0 ? '{"results":[]}' : ']}'));
            controller.close();
            done();
          }
        } catch (error) {
          done();
          controller.error(error);
        }
      },
      cancel() {
        done();
      },
    },
    // Pulled again only when what one slice queued has been taken.
    { highWaterMark: 1 },
  );
}

/** A registry status's open quarantines (docs/integrity-store.md §4), when it has any. */
function quarantineList(rows: readonly QuarantineRow[]) {
  if (rows.length === 0) return {};
  return {
    quarantined: rows.map((q) => ({
      template: q.template,
      version: q.version,
      ...quarantineField(q).quarantined,
    })),
  };
}

async function templateInfo(c: Context<AppEnv>, reads: ReadStore, registry: RegistryView, p: TemplatePath) {
  const t = await reads.template(registry.id, p.collection, p.template);
  const rows = await reads.versions(registry.id, p.collection, p.template);
  const name = formatTemplateName(p);
  const quarantined = new Map(
    (await reads.openQuarantines(registry.id)).filter((q) => q.template === name).map((q) => [q.version, q]),
  );
  return c.json({
    registry: registry.name,
    collection: p.collection,
    name: p.template,
    reference: formatTemplateName(p),
    commit: commitShown(registry.commit),
    latestVersion: t?.latestVersion ?? null,
    title: t?.title ?? null,
    description: t?.description ?? null,
    versions: rows.map((r) => ({
      version: r.version,
      kind: r.kind,
      digest: r.digest,
      templateFile: r.templateFile,
      schemaFile: r.schemaFile,
      hasExample: r.hasExample,
      firstSeenAt: r.firstSeenAt === null ? null : new Date(r.firstSeenAt).toISOString(),
      ...(r.removedUpstream ? { removedUpstream: true } : {}),
      ...quarantineField(quarantined.get(r.version)),
    })),
  });
}

async function versionContent(c: Context<AppEnv>, reads: ReadStore, registry: RegistryView, p: TemplatePath) {
  const version = p.version ?? '';
  // The one version asked for; when it does not exist, the version strings alone are read, a
  // step at a time, to name the nearest (resolve/nearest-versions.ts).
  const row = await reads.version(registry.id, p.collection, p.template, version);
  const name = formatTemplateName(p);
  if (!row) {
    const nearest = await nearestStored(
      reads,
      { registryId: registry.id, collection: p.collection, name: p.template },
      version,
    );
    throw new DmError(
      'VERSION_NOT_FOUND',
      `${name} has no version directory ${version}; content is served for exact versions only`,
      {
        category: 'not-found',
        ...(nearest.closest === undefined ? {} : { hint: `did you mean ${nearest.closest}?` }),
        details: {
          available: nearest.versions,
          versionCount: nearest.total,
          ...(nearest.closest === undefined ? {} : { closest: nearest.closest }),
        },
      },
    );
  }
  const rest = p.rest;
  if (rest.length === 1 && rest[0] === 'files') {
    // The file list a page at a time (file-list.ts); the resolution it comes from is the catalog's.
    const { files } = await c.get('service').catalog.resolutionOf(row.id);
    c.header('Cache-Control', registry.visibility === 'public' ? 'no-cache' : 'private, no-cache');
    return c.json(
      filePage(files, intParam(c, 'limit', FILE_PAGE_DEFAULT, 1, FILE_PAGE_MAX), c.req.query('continue')),
    );
  }
  if (rest[0] === 'files' && rest.length > 1) {
    const path = rest.slice(1).join('/');
    const sha256 = await reads.fileSha256(row.id, path);
    if (sha256 === undefined) {
      throw new DmError('FILE_NOT_FOUND', `${name}:${version} has no file ${path}`, {
        category: 'not-found',
        details: { path },
      });
    }
    const type = /\.(ya?ml|schema)$/.test(path)
      ? 'application/yaml; charset=utf-8'
      : /\.(jinja|py|txt|md)$/.test(path)
        ? 'text/plain; charset=utf-8'
        : 'application/octet-stream';
    return immutableContent(
      c,
      `"${sha256}"`,
      type,
      async () => (await reads.fileContent(row.id, path)) ?? '',
      registry.visibility,
    );
  }
  if (rest.length === 1 && rest[0] === 'schema') {
    const sha256 = row.schemaFile ? await reads.fileSha256(row.id, row.schemaFile) : undefined;
    if (sha256 === undefined) {
      throw new DmError('SCHEMA_NOT_FOUND', `${name}:${version} has no schema`, { category: 'not-found' });
    }
    return immutableContent(
      c,
      `"${sha256}.json"`,
      'application/json',
      () => reads.schemaJson(row.id),
      registry.visibility,
    );
  }
  if (rest.length === 1 && rest[0] === 'archive.tar.gz') {
    const etag = `"${row.digest.replace(/^sha256:/, '')}"`;
    c.header('Content-Disposition', attachment(`${p.template}-${version}.tar.gz`));
    return immutableContent(
      c,
      etag,
      'application/gzip',
      () =>
        archiveCache.get(row.digest, `${p.template}-${version}`, {
          // The files the catalog's resolution lists, then each file's bytes (version-archive.ts).
          paths: async () => (await c.get('service').catalog.resolutionOf(row.id)).files.map((f) => f.path),
          content: async (path) => {
            const content = await reads.fileContent(row.id, path);
            if (content !== undefined) return content;
            throw new DmError(
              'VERSION_NOT_FOUND',
              `${name}:${version} changed while its archive was built; ask again`,
              {
                category: 'not-found',
              },
            );
          },
        }),
      registry.visibility,
    );
  }
  throw new DmError(
    'NOT_FOUND',
    `no such endpoint under ${name}:${version}; try files, files/<path>, schema or archive.tar.gz`,
    {
      category: 'not-found',
    },
  );
}

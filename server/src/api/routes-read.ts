/**
 * Read endpoints (spec/server.md §2): registries, search, templates, resolve (single and batch),
 * and immutable content (files, schema, archive) of exact versions.
 */
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DmError } from '../../../client/src/error.js';
import { formatTemplateName } from '../../../client/src/reference/reference.js';
import { compareVersions, tryParseVersion } from '../../../client/src/reference/version.js';
import type { RegistryView } from '../resolve/catalog.js';
import type { RegistryService } from '../service.js';
import { TemplateSearch } from '../store/search.js';
import type { RequestAccess } from './access.js';
import { type AppEnv, accessOf, errorResponse, immutableContent, intParam } from './http.js';
import type { RequestTracker } from './tracking.js';
import { archiveCache } from './version-archive.js';

const MAX_BATCH = 1000;

interface TemplatePath {
  host: string;
  owner: string;
  repo: string;
  collection: string;
  template: string;
  /** After `versions/`: the version and what of it. */
  version?: string;
  rest?: string[];
}

function parseTemplatePath(raw: string): TemplatePath {
  const segments = raw
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  const at = segments[4] === 'versions' && segments.length >= 6 ? 4 : segments[5] === 'versions' ? 5 : -1;
  const head = at === -1 ? segments : segments.slice(0, at);
  if (head.length !== 4 && head.length !== 5) {
    throw new DmError('NOT_FOUND', `no such template path: ${raw}`, { category: 'not-found' });
  }
  const [host, owner, repo] = head as [string, string, string];
  const collection = head.length === 5 ? head[3]! : '';
  const template = head.at(-1)!;
  const out: TemplatePath = { host: host.toLowerCase(), owner, repo, collection, template };
  if (at !== -1) {
    out.version = segments[at + 1]!;
    out.rest = segments.slice(at + 2);
  }
  return out;
}

function versionRows(service: RegistryService, registryId: number, collection: string, template: string) {
  return service.store.sqlite
    .prepare(
      `SELECT v.id, v.version, v.kind, v.digest, v.template_file AS templateFile, v.schema_file AS schemaFile,
              v.has_example AS hasExample, v.dir
       FROM versions v JOIN templates t ON t.id = v.template_id
       WHERE t.registry_id = ? AND t.collection = ? AND t.name = ?`,
    )
    .all(registryId, collection, template) as {
    id: number;
    version: string;
    kind: string;
    digest: string;
    templateFile: string;
    schemaFile: string | null;
    hasExample: number;
    dir: string;
  }[];
}

function sortVersionsDescending<T extends { version: string }>(rows: T[]): T[] {
  return rows.sort((a, b) => {
    const va = tryParseVersion(a.version);
    const vb = tryParseVersion(b.version);
    if (!va || !vb) return a.version < b.version ? 1 : -1;
    return compareVersions(vb, va) || (a.version < b.version ? 1 : -1);
  });
}

export function readRoutes(tracker: RequestTracker): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const searches = new WeakMap<RegistryService, TemplateSearch>();

  app.get('/registries', (c) => {
    const service = c.get('service');
    const access = accessOf(c);
    const rows = service.all().filter((r) => access.canRead(r));
    return c.json({ registries: rows.map((r) => service.info(r, false)) });
  });

  app.get('/registries/:id{.+}', (c) => {
    const service = c.get('service');
    const row = service.find(c.req.param('id'), accessOf(c));
    return c.json(service.info(row, true));
  });

  app.get('/search', (c) => {
    const service = c.get('service');
    const access = accessOf(c);
    let search = searches.get(service);
    if (!search) {
      search = new TemplateSearch(service.store);
      searches.set(service, search);
    }
    const visible = [...service.catalog.registries().values()]
      .filter((r) => access.canRead(r))
      .map((r) => r.id);
    const q = c.req.query('q') ?? '';
    if (q.length > 256) {
      throw new DmError('INVALID_PARAMETER', 'q must be at most 256 characters', {
        category: 'invalid-input',
      });
    }
    return c.json(
      search.search({
        q,
        collection: c.req.query('collection'),
        registry: c.req.query('registry'),
        page: intParam(c, 'page', 1, 1, 1000),
        limit: intParam(c, 'limit', 20, 1, 100),
        visible,
      }),
    );
  });

  // The hot path: tracked inline and synchronous (tracking.ts), answered from the catalog's cache.
  app.get('/resolve', (c) => {
    const requestId = tracker.begin(c, false);
    let res: Response;
    try {
      const ref = c.req.query('ref');
      if (!ref) {
        throw new DmError('INVALID_PARAMETER', 'the ref query parameter is required, e.g. ?ref=redis:v1.0', {
          category: 'invalid-input',
        });
      }
      const answer = c.get('service').catalog.resolveAnswer(ref, accessOf(c));
      // A plain header object (not c.body with two headers, which builds a Headers instance).
      res = new Response(answer.body, {
        status: answer.status,
        headers: { 'content-type': 'application/json', 'x-request-id': requestId },
      });
    } catch (error) {
      if (!(error instanceof DmError)) throw error;
      c.header('X-Request-Id', requestId);
      res = errorResponse(c, error);
    }
    tracker.end(c, res.status);
    return res;
  });

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
      const catalog = c.get('service').catalog;
      const access = accessOf(c);
      const parts = (refs as string[]).map((ref) => {
        const answer = catalog.resolveAnswer(ref, access);
        const key = answer.status === 200 ? 'resolution' : 'error';
        const value = answer.status === 200 ? answer.body : JSON.stringify(JSON.parse(answer.body).error);
        return `{"ref":${JSON.stringify(ref)},"${key}":${value}}`;
      });
      return c.body(`{"results":[${parts.join(',')}]}`, 200, { 'Content-Type': 'application/json' });
    },
  );

  app.get('/templates/*', (c) => {
    const service = c.get('service');
    const access = accessOf(c);
    const raw = c.req.path.replace(/^.*?\/templates\//, '');
    const p = parseTemplatePath(raw);
    const { registry } = service.catalog.locate(p, access);
    if (p.version === undefined) return templateInfo(c, service, registry, p);
    return versionContent(c, service, registry, p, access);
  });

  return app;
}

function templateInfo(c: Context<AppEnv>, service: RegistryService, registry: RegistryView, p: TemplatePath) {
  const t = service.store.sqlite
    .prepare(
      'SELECT latest_version AS latestVersion, title, description FROM templates WHERE registry_id = ? AND collection = ? AND name = ?',
    )
    .get(registry.id, p.collection, p.template) as
    | { latestVersion: string | null; title: string | null; description: string | null }
    | undefined;
  const rows = sortVersionsDescending(versionRows(service, registry.id, p.collection, p.template));
  return c.json({
    registry: registry.name,
    collection: p.collection,
    name: p.template,
    reference: formatTemplateName(p),
    commit: registry.commit,
    latestVersion: t?.latestVersion ?? null,
    title: t?.title ?? null,
    description: t?.description ?? null,
    versions: rows.map((r) => ({
      version: r.version,
      kind: r.kind,
      digest: r.digest,
      templateFile: r.templateFile,
      schemaFile: r.schemaFile,
      hasExample: r.hasExample === 1,
    })),
  });
}

function versionContent(
  c: Context<AppEnv>,
  service: RegistryService,
  registry: RegistryView,
  p: TemplatePath,
  access: RequestAccess,
) {
  void access;
  const rows = versionRows(service, registry.id, p.collection, p.template);
  const version = p.version!.replace(/^=/, '');
  const row = rows.find((r) => r.version === version);
  const name = formatTemplateName(p);
  if (!row) {
    throw new DmError(
      'VERSION_NOT_FOUND',
      `${name} has no version directory ${version}; content is served for exact versions only`,
      {
        category: 'not-found',
        details: { available: sortVersionsDescending(rows).map((r) => r.version) },
      },
    );
  }
  const rest = p.rest ?? [];
  const db = service.store.sqlite;
  const fileRow = (path: string) =>
    db
      .prepare(
        'SELECT vf.sha256, vf.size, f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256 WHERE vf.version_id = ? AND vf.path = ?',
      )
      .get(row.id, path) as { sha256: string; size: number; content: Buffer } | undefined;

  if (rest[0] === 'files' && rest.length > 1) {
    const path = rest.slice(1).join('/');
    const meta = db
      .prepare('SELECT sha256 FROM version_files WHERE version_id = ? AND path = ?')
      .get(row.id, path) as { sha256: string } | undefined;
    if (!meta) {
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
    return immutableContent(c, `"${meta.sha256}"`, type, () => fileRow(path)!.content, registry.visibility);
  }
  if (rest.length === 1 && rest[0] === 'schema') {
    if (!row.schemaFile) {
      throw new DmError('SCHEMA_NOT_FOUND', `${name}:${version} has no schema`, { category: 'not-found' });
    }
    const meta = fileRow(row.schemaFile)!;
    return immutableContent(
      c,
      `"${meta.sha256}.json"`,
      'application/json',
      () => {
        const json = db.prepare('SELECT schema_json FROM versions WHERE id = ?').pluck().get(row.id) as
          | string
          | null;
        return json ?? 'null';
      },
      registry.visibility,
    );
  }
  if (rest.length === 1 && rest[0] === 'archive.tar.gz') {
    const etag = `"${row.digest.replace(/^sha256:/, '')}"`;
    return immutableContent(
      c,
      etag,
      'application/gzip',
      () =>
        archiveCache.get(
          row.digest,
          `${p.template}-${version}`,
          () =>
            db
              .prepare(
                'SELECT vf.path, f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256 WHERE vf.version_id = ?',
              )
              .all(row.id) as { path: string; content: Buffer }[],
        ),
      registry.visibility,
    );
  }
  throw new DmError(
    'NOT_FOUND',
    `no such endpoint under ${name}:${version}; try files/<path>, schema or archive.tar.gz`,
    {
      category: 'not-found',
    },
  );
}

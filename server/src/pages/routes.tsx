/**
 * The web pages (docs/pages.md), server-rendered with hono/jsx, no client-side JavaScript:
 * `/` and `/search` (the API's search, store/reads.ts), `/templates/…[/versions/{v}]`, `/registries[/{id}]`.
 * Access is the API's (`Authorization: Bearer <token>`; anonymous callers see public registries),
 * and not-found pages list what does exist. Exact-version pages are immutable like the API's
 * content (strong ETag, a year); the others are short-lived.
 */
import { createHash } from 'node:crypto';
import { type Context, Hono } from 'hono';
import { isMapping } from '../../../client/src/data.js';
import { DmError, httpStatusFor, isDmError } from '../../../client/src/error.js';
import type { RequestAccess } from '../api/access.js';
import { type AppEnv, accessOf, IMMUTABLE, intParam, notModified } from '../api/http.js';
import { searchResult } from '../api/shapes.js';
import { parseTemplatePath, type TemplatePath } from '../api/template-path.js';
import type { RegistryView } from '../resolve/catalog.js';
import { nearestStored } from '../resolve/nearest-versions.js';
import type { RegistryService } from '../service.js';
import type { VersionRow } from '../store/contract.js';
import { newestFirst } from '../store/reads.js';
import { SIMILARITY_THRESHOLD, similarity } from '../store/similar-names.js';
import { DiffPage } from './diff-page.js';
import { ErrorPage, type Suggestion } from './error-page.js';
import { CONTENT_SECURITY_POLICY } from './layout.js';
import { pagesOf, ROWS_PER_PAGE } from './pieces.js';
import { propertyRows } from './properties.js';
import { RegistriesPage } from './registries-page.js';
import { RegistryPage } from './registry-page.js';
import { relationsOf, UsedByIndex } from './relations.js';
import { SearchPage } from './search-page.js';
import { FILES_PER_PAGE, filePages, TemplatePage } from './template-page.js';
import { diffUrl, type SearchParams, templateUrl } from './urls.js';
import { isLocalSource, sourceLink } from './use-it.js';
import { versionDiff } from './version-diff.js';

/** Bumped when page markup changes, so cached exact-version pages get new ETags. */
export const PAGES_REVISION = '3';

const PAGE_SIZE = 20;
const SHORT = 'max-age=60';
const LIVE = 'max-age=10';

type PageContext = Context<AppEnv>;

interface Rendered {
  toString(): string | Promise<string>;
}

/** A rendered page, kept in memory for anonymous readers until the next index swap. */
interface PageEntry {
  status: number;
  body: string;
  headers: Record<string, string>;
}

async function renderPage(
  status: number,
  node: Rendered,
  cacheControl: string,
  etag?: string,
): Promise<PageEntry> {
  const headers: Record<string, string> = {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    'Cache-Control': cacheControl,
    Vary: 'Authorization',
  };
  if (etag) headers.ETag = etag;
  return { status, body: `<!doctype html>${await node.toString()}`, headers };
}

function send(c: PageContext, entry: PageEntry): Response {
  const etag = entry.headers.ETag;
  if (etag && notModified(c, etag)) {
    return c.body(null, 304, {
      ETag: etag,
      'Cache-Control': entry.headers['Cache-Control'] ?? '',
      Vary: 'Authorization',
    });
  }
  return c.body(entry.body, entry.status as 200, entry.headers);
}

async function html(
  c: PageContext,
  status: number,
  node: Rendered,
  cacheControl: string,
  etag?: string,
  memo?: PageMemo,
): Promise<Response> {
  const entry = await renderPage(status, node, cacheControl, etag);
  if (memo && status === 200) memo.set(entry);
  return send(c, entry);
}

/** Where one page is remembered: a key in the current generation's map. */
interface PageMemo {
  get(): PageEntry | undefined;
  set(entry: PageEntry): void;
}

const MEMO_ENTRIES = 2000;

/**
 * Pages for anonymous readers depend only on the serving indexes, which change only when the
 * catalog is invalidated (an index swap, a registry added or removed): the catalog then builds a
 * new registries map, so rendered pages are kept per map object and dropped with it. Readers with a
 * token are rendered every time.
 */
function memoizer() {
  const generations = new WeakMap<object, Map<string, PageEntry>>();
  return async (c: PageContext, key: string): Promise<PageMemo | undefined> => {
    if (c.req.header('authorization') !== undefined) return undefined;
    const generation = await c.get('service').catalog.registries();
    let map = generations.get(generation);
    if (!map) {
      map = new Map();
      generations.set(generation, map);
    }
    const pages = map;
    return {
      get: () => pages.get(key),
      set: (entry) => {
        if (pages.size >= MEMO_ENTRIES) pages.clear();
        pages.set(key, entry);
      },
    };
  };
}

/** Public pages may be kept by shared caches; pages seen with a token only by the browser. */
function scope(c: PageContext, registries: readonly RegistryView[] = []): string {
  const personal =
    c.req.header('authorization') !== undefined || registries.some((r) => r.visibility === 'private');
  return personal ? 'private' : 'public';
}

/** A plain "Not found" page for a path nothing serves (the app's notFound, for a browser). */
export function notFoundPage(c: PageContext, error: DmError): Promise<Response> {
  return html(c, 404, <ErrorPage status={404} title="Not found" message={error.message} />, 'no-store');
}

export function pageRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const memoOf = memoizer();
  const usedByIndexes = new WeakMap<RegistryService, UsedByIndex>();
  const usedByOf = (service: RegistryService) => {
    let index = usedByIndexes.get(service);
    if (!index) {
      index = new UsedByIndex(service.catalog, service.data.reads);
      usedByIndexes.set(service, index);
    }
    return index;
  };

  /** Renders DmErrors as pages with their status; anything else goes to the app's onError. */
  const page =
    (handler: (c: PageContext) => Promise<Response>) =>
    async (c: PageContext): Promise<Response> => {
      try {
        return await handler(c);
      } catch (error) {
        if (!isDmError(error)) throw error;
        return errorPage(c, error);
      }
    };

  const errorPage = (
    c: PageContext,
    error: DmError,
    list?: Suggestion[],
    listTitle?: string,
    didYouMean?: Suggestion,
    listTotal?: number,
    listMore?: Suggestion,
  ) => {
    const status = httpStatusFor(error);
    const title =
      status === 404
        ? 'Not found'
        : status === 401
          ? 'Not signed in'
          : status === 400
            ? 'Bad request'
            : 'Error';
    return html(
      c,
      status,
      <ErrorPage
        status={status}
        title={title}
        message={error.message}
        {...(list ? { list } : {})}
        {...(listTitle ? { listTitle } : {})}
        {...(listTotal === undefined ? {} : { listTotal })}
        {...(listMore === undefined ? {} : { listMore })}
        didYouMean={didYouMean}
      />,
      'no-store',
    );
  };

  /**
   * The 404 page of a version that does not exist: the versions nearest to it, how many more there
   * are (the template's page lists them all), and the one it would resolve to (the API's 404 names
   * the same, nearestVersions).
   */
  const noVersion = async (c: PageContext, registry: RegistryView, p: TemplatePath, version: string) => {
    const name = `${registry.name}/${p.collection ? `${p.collection}/` : ''}${p.template}`;
    // The version strings alone, a step at a time (resolve/nearest-versions.ts), not the rows.
    const nearest = await nearestStored(
      c.get('service').data.reads,
      { registryId: registry.id, collection: p.collection, name: p.template },
      version,
    );
    const link = (v: string): Suggestion => ({
      label: v,
      href: templateUrl(registry.name, p.collection, p.template, v),
    });
    return errorPage(
      c,
      new DmError('VERSION_NOT_FOUND', `${name} has no version ${version}`, { category: 'not-found' }),
      nearest.versions.map(link),
      nearest.total > nearest.versions.length
        ? `Versions of ${p.template} nearest to ${version}`
        : `Versions of ${p.template}`,
      nearest.closest === undefined ? undefined : link(nearest.closest),
      nearest.total,
      { label: `all versions of ${p.template}`, href: templateUrl(registry.name, p.collection, p.template) },
    );
  };

  const searchPage = page(async (c) => {
    const service = c.get('service');
    const access = await accessOf(c);
    const q = (c.req.query('q') ?? '').trim();
    if (q.length > 256) {
      throw new DmError('INVALID_PARAMETER', 'the search text must be at most 256 characters', {
        category: 'invalid-input',
      });
    }
    const params: SearchParams = {
      q,
      collection: c.req.query('collection'),
      registry: c.req.query('registry'),
      page: intParam(c, 'page', 1, 1, 1000),
    };
    const memo = await memoOf(
      c,
      `s\0${q}\0${params.collection ?? '\u0001'}\0${params.registry ?? '\u0001'}\0${params.page}`,
    );
    const hit = memo?.get();
    if (hit) return send(c, hit);
    const result = searchResult(
      await service.data.reads.search({
        q,
        collection: params.collection,
        registry: params.registry,
        page: params.page ?? 1,
        limit: PAGE_SIZE,
        reader: access.readable(),
      }),
    );
    return html(
      c,
      200,
      <SearchPage params={params} result={result} />,
      `${scope(c)}, ${SHORT}`,
      undefined,
      memo,
    );
  });
  app.get('/', searchPage);
  app.get('/search', searchPage);

  app.get(
    '/templates/*',
    page(async (c) => {
      const service = c.get('service');
      const access = await accessOf(c);
      const raw = c.req.path.replace(/^.*?\/templates\//, '');
      const p = parseTemplatePath(raw);
      if (p.rest[0] === 'diff' && p.rest.length === 2 && p.version !== undefined) {
        return diffPage(c, p, p.version, p.rest[1]!);
      }
      if (p.rest.length > 0) {
        throw new DmError(
          'NOT_FOUND',
          `no page at /templates/${raw}; a version's files are served by the API`,
          {
            category: 'not-found',
          },
        );
      }
      // Which page of the version's files (docs/pages.md, "Files"); past the last is a 404 below.
      const filesPage = intParam(c, 'files', 1, 1, 100_000);
      const versionsPage = intParam(c, 'versions', 1, 1, 100_000);
      const memo = await memoOf(
        c,
        `t\0${p.host}/${p.owner}/${p.repo}\0${p.collection}\0${p.template}\0${p.version ?? '\u0001'}\0${filesPage}\0${versionsPage}`,
      );
      const hit = memo?.get();
      if (hit) return send(c, hit);
      let registry: RegistryView;
      try {
        registry = (await service.catalog.locate(p, access)).registry;
      } catch (error) {
        if (!isDmError(error)) throw error;
        return errorPage(c, error, ...(await suggestionsFor(service, access, p, error)));
      }
      const d = service.data.reads;
      const template = await d.template(registry.id, p.collection, p.template);
      const exact = p.version !== undefined;
      // One page of versions is read whole, not every version (docs/pages.md, "Files").
      const listed = exact
        ? undefined
        : await d.versionsPage(registry.id, p.collection, p.template, versionsPage, ROWS_PER_PAGE);
      const latest =
        exact || typeof template?.latestVersion !== 'string'
          ? undefined
          : await d.version(registry.id, p.collection, p.template, template.latestVersion);
      const shown = exact
        ? await d.version(registry.id, p.collection, p.template, p.version!)
        : (latest ??
          (versionsPage === 1
            ? listed?.rows[0]
            : (await d.versionsPage(registry.id, p.collection, p.template, 1, 1)).rows[0]));
      if (!shown) {
        return noVersion(c, registry, p, p.version ?? '');
      }
      const resolution = await service.catalog.resolutionOf(shown.id);
      const versions = listed ?? { rows: [shown], total: 1 };
      if (versionsPage > pagesOf(versions.total)) {
        const total = exact
          ? (await d.versionsPage(registry.id, p.collection, p.template, 1, 1)).total
          : versions.total;
        throw new DmError(
          'NOT_FOUND',
          `${p.template} has ${total} versions, ${pagesOf(total)} page(s) of ${ROWS_PER_PAGE}${exact ? ' (listed on its page, not on a version page)' : ''}: there is no page ${versionsPage}`,
          { category: 'not-found' },
        );
      }
      if (filesPage > filePages(resolution.files.length)) {
        throw new DmError(
          'NOT_FOUND',
          `${p.template} ${shown.version} has ${resolution.files.length} files, ${filePages(resolution.files.length)} page(s) of ${FILES_PER_PAGE}: there is no page ${filesPage}`,
          { category: 'not-found' },
        );
      }
      const info =
        isMapping(resolution.schema) && isMapping(resolution.schema.info) ? resolution.schema.info : {};
      const cache = `${scope(c, [registry])}, ${exact ? IMMUTABLE.replace(/^public, /, '') : SHORT}`;
      let etag: string | undefined;
      if (exact) {
        const hash = createHash('sha256')
          .update(
            `${PAGES_REVISION}\0${new URL(c.req.url).origin}\0${registry.name}\0${p.collection}\0${p.template}\0${shown.version}\0${shown.digest}\0${filesPage}`,
          )
          .digest('hex');
        etag = `"page-${hash}"`;
        if (notModified(c, etag)) {
          return c.body(null, 304, { ETag: etag, 'Cache-Control': cache, Vary: 'Authorization' });
        }
      }
      const dir = exact ? shown.dir : shown.dir.replace(/\/[^/]*$/, '');
      const row = await service.find(registry.id, access);
      const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : null);
      const readme = resolution.files.find((f) => /^readme\.md$/i.test(f.path));
      return html(
        c,
        200,
        <TemplatePage
          registry={registry.name}
          commit={registry.commit}
          collection={p.collection}
          name={p.template}
          exact={exact}
          version={shown}
          quarantined={exact ? undefined : resolution.quarantined}
          latestVersion={template?.latestVersion ?? null}
          versions={versions}
          versionsPage={versionsPage}
          title={typeof info.title === 'string' ? info.title : exact ? null : (template?.title ?? null)}
          description={
            typeof info.description === 'string'
              ? info.description
              : exact
                ? null
                : (template?.description ?? null)
          }
          author={text(info.author)}
          license={text(info.license)}
          source={sourceLink(row, shown.dir, registry.commit)}
          serverUrl={new URL(c.req.url).origin}
          readme={readme ? await d.inlineText(shown.id, readme.path) : undefined}
          relations={
            await relationsOf(d, service.catalog, usedByOf(service), access, {
              id: shown.id,
              registry: registry.name,
              collection: p.collection,
              template: p.template,
              files: resolution.files,
              exact,
            })
          }
          properties={propertyRows(resolution.schema)}
          hasSchema={resolution.schema !== null}
          example={shown.hasExample ? await d.inlineText(shown.id, 'example.yaml') : undefined}
          files={resolution.files}
          filesPage={filesPage}
          findings={await d.findingsUnder(registry.id, dir)}
        />,
        cache,
        etag,
        memo,
      );
    }),
  );

  /** `…/versions/{from}/diff/{to}`: immutable like the exact-version pages (both are). */
  const diffPage = async (c: PageContext, p: TemplatePath, from: string, to: string) => {
    const service = c.get('service');
    const access = await accessOf(c);
    const registry = (await service.catalog.locate(p, access)).registry;
    const d = service.data.reads;
    const [a, b] = await Promise.all(
      [from, to].map((v) => d.version(registry.id, p.collection, p.template, v.replace(/^=/, ''))),
    );
    if (!a || !b) {
      return noVersion(c, registry, p, a ? to : from);
    }
    const cache = `${scope(c, [registry])}, ${IMMUTABLE.replace(/^public, /, '')}`;
    const etag = `"diff-${createHash('sha256')
      .update(
        `${PAGES_REVISION}\0${registry.name}\0${p.collection}\0${p.template}\0${a.version}\0${a.digest}\0${b.version}\0${b.digest}`,
      )
      .digest('hex')}"`;
    if (notModified(c, etag)) {
      return c.body(null, 304, { ETag: etag, 'Cache-Control': cache, Vary: 'Authorization' });
    }
    const ra = await service.catalog.resolutionOf(a.id);
    const rb = await service.catalog.resolutionOf(b.id);
    const diff = await versionDiff(
      ra.files,
      rb.files,
      propertyRows(ra.schema),
      propertyRows(rb.schema),
      (side, path) => d.inlineText(side === 'from' ? a.id : b.id, path),
    );
    return html(
      c,
      200,
      <DiffPage
        registry={registry.name}
        collection={p.collection}
        name={p.template}
        from={a.version}
        to={b.version}
        versions={pickable(
          (await d.versionsPage(registry.id, p.collection, p.template, 1, ROWS_PER_PAGE)).rows,
          [a, b],
        )}
        diff={diff}
      />,
      cache,
      etag,
    );
  };

  // The version pickers' form (GET without JavaScript): to the diff page's own address.
  app.get(
    '/compare',
    page(async (c) => {
      const template = c.req.query('template') ?? '';
      const from = c.req.query('from') ?? '';
      const to = c.req.query('to') ?? '';
      if (!template || !from || !to || template.length > 1024 || from.length > 256 || to.length > 256) {
        throw new DmError('INVALID_PARAMETER', 'compare needs template, from and to (each at most 1 KiB)', {
          category: 'invalid-input',
        });
      }
      const p = parseTemplatePath(template);
      if (p.version !== undefined || p.rest.length > 0) {
        throw new DmError('INVALID_PARAMETER', `template must name a template, not a version: ${template}`, {
          category: 'invalid-input',
        });
      }
      return c.redirect(diffUrl(`${p.host}/${p.owner}/${p.repo}`, p.collection, p.template, from, to), 302);
    }),
  );

  app.get(
    '/registries',
    page(async (c) => {
      const service = c.get('service');
      const access = await accessOf(c);
      const rows = (await service.all()).filter((r) => access.canRead(r));
      const infos = await Promise.all(rows.map((r) => service.info(r, { viewer: access })));
      return html(c, 200, <RegistriesPage registries={infos} />, `${scope(c, rows)}, ${LIVE}`);
    }),
  );

  app.get(
    '/registries/:id{.+}',
    page(async (c) => {
      const service = c.get('service');
      const access = await accessOf(c);
      let row: Awaited<ReturnType<RegistryService['find']>>;
      try {
        row = await service.find(c.req.param('id') ?? '', access);
      } catch (error) {
        if (!isDmError(error)) throw error;
        const list = (await service.all())
          .filter((r) => access.canRead(r))
          .map((r) => ({ label: r.name, href: `/registries/${r.id}` }));
        return errorPage(c, error, list, 'Registries on this server');
      }
      const templatesPage = intParam(c, 'templates', 1, 1, 100_000);
      const templates = await service.data.reads.templatesPage(row.id, templatesPage, ROWS_PER_PAGE);
      if (templatesPage > pagesOf(templates.total)) {
        throw new DmError(
          'NOT_FOUND',
          `${row.name} has ${templates.total} templates, ${pagesOf(templates.total)} page(s) of ${ROWS_PER_PAGE}: there is no page ${templatesPage}`,
          { category: 'not-found' },
        );
      }
      return html(
        c,
        200,
        <RegistryPage
          info={await service.info(row, { findings: true, viewer: access })}
          templates={templates}
          templatesPage={templatesPage}
          local={isLocalSource(row)}
          showLocalPath={access.admin}
        />,
        `${scope(c, [row])}, ${LIVE}`,
      );
    }),
  );

  return app;
}

/** The versions a picker offers: the newest ones (`newest`) and the ones `shown`, newest first. */
function pickable(newest: VersionRow[], shown: VersionRow[]): string[] {
  const offered = new Map(newest.map((v) => [v.version, v]));
  for (const v of shown) if (!offered.has(v.version)) offered.set(v.version, v);
  return newestFirst([...offered.values()]).map((v) => v.version);
}

/** What to list on a not-found page: the registries, or the templates of the registry. */
/** Most templates a not-found page lists or weighs (one page's work). */
const SUGGESTIONS = 100;

async function suggestionsFor(
  service: RegistryService,
  access: RequestAccess,
  p: TemplatePath,
  error: DmError,
): Promise<[Suggestion[], string, Suggestion?, number?]> {
  const name = `${p.host}/${p.owner}/${p.repo}`;
  const registry = await service.catalog.registry(name);
  if (error.code === 'TEMPLATE_NOT_FOUND' && registry && access.canRead(registry)) {
    // Work of one page, whatever the registry's size (docs/pages.md, "Not found"): the first
    // templates of the collection (else of the registry), and the most similar name among the
    // search's answer for the name (similar names for a typo, by store/similar-names.ts's rule).
    const reads = service.data.reads;
    const [inCollection, found] = await Promise.all([
      reads.templatesIn(registry.id, p.collection, SUGGESTIONS),
      reads.search({
        q: p.template,
        registry: registry.name,
        page: 1,
        limit: SUGGESTIONS,
        reader: access.readable(),
      }),
    ]);
    const shown =
      inCollection.total > 0 ? inCollection : await reads.templatesPage(registry.id, 1, SUGGESTIONS);
    const entry = (t: { collection: string; name: string }) => ({
      label: `${registry.name}/${t.collection ? `${t.collection}/` : ''}${t.name}`,
      href: templateUrl(registry.name, t.collection, t.name),
    });
    let best: { match: { collection: string; name: string }; score: number } | undefined;
    for (const match of found.matches) {
      if (match.registry !== registry.name) continue;
      const score = similarity(p.template, match.name);
      if (score < SIMILARITY_THRESHOLD) continue;
      // Ties go to the collection asked for.
      const sameCollection = match.collection === p.collection && best?.match.collection !== p.collection;
      if (!best || score > best.score || (score === best.score && sameCollection)) best = { match, score };
    }
    return [
      shown.rows.map(entry),
      inCollection.total > 0
        ? `Templates in ${p.collection || 'the root collection'}`
        : `Templates in ${registry.name}`,
      best ? entry(best.match) : undefined,
      shown.total,
    ];
  }
  const list = [...(await service.catalog.registries()).values()]
    .filter((r) => access.canRead(r))
    .map((r) => ({ label: r.name, href: `/registries/${r.id}` }));
  return [list, 'Registries on this server'];
}

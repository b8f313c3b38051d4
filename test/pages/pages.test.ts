/**
 * The web pages (docs/pages.md) through the real app (`app.request()`) on each database of
 * DIALECTS (a temporary SQLite file, a PostgreSQL database): status codes, cache headers, escaping, no scripts, the API's access rules.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { COPY_SCRIPT, COPY_SCRIPT_HASH } from '../../server/src/pages/layout.js';
import { propertyRows } from '../../server/src/pages/properties.js';
import { admin, DIALECTS, type DialectTestServer, FIXTURES, tempDir } from '../server/helpers.js';
import { EVIL_DESCRIPTION, EXTRAS, PRIVATE, pagesServer, SAMPLES } from './fixture.js';

const REDIS = `/templates/${SAMPLES}/redis`;

for (const dialect of DIALECTS)
  describe(`web pages (${dialect})`, () => {
    let s: DialectTestServer;
    before(async () => {
      s = await pagesServer(dialect);
    });
    after(() => s.close());

    const get = (path: string, headers: Record<string, string> = {}) => s.app.request(path, { headers });
    const page = async (path: string, headers: Record<string, string> = {}) => {
      const res = await get(path, headers);
      return { res, text: await res.text() };
    };

    it('every page answers HTML with its status, a CSP allowing only the copy script, and no other <script>', async () => {
      const cases: [string, number][] = [
        ['/', 200],
        ['/search?q=redis', 200],
        ['/search?q=redis&collection=caching', 200],
        ['/search?q=redis&page=2', 200],
        [REDIS, 200],
        [`${REDIS}/versions/v1.0.3`, 200],
        [`/templates/${SAMPLES}/security/pod-security`, 200],
        [`/templates/${EXTRAS}/caching/markup`, 200],
        ['/registries', 200],
        [`/registries/${SAMPLES}`, 200],
        [`/registries/${EXTRAS}`, 200],
        [`${REDIS}/versions/v9`, 404],
        [`/templates/${SAMPLES}/no-such-template`, 404],
        ['/templates/github.com/nobody/nothing/redis', 404],
        ['/templates/too/short', 404],
        ['/registries/github.com/nobody/nothing', 404],
        ['/search?q=redis&page=0', 400],
        ['/search?q=redis&page=abc', 400],
        [`/search?q=${'x'.repeat(300)}`, 400],
      ];
      for (const [path, status] of cases) {
        const { res, text } = await page(path);
        assert.equal(res.status, status, path);
        assert.match(res.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/, path);
        const csp = res.headers.get('content-security-policy') ?? '';
        assert.match(csp, /default-src 'none'/, path);
        assert.ok(csp.includes(`script-src '${COPY_SCRIPT_HASH}'`), path);
        assert.ok(text.startsWith('<!doctype html><html lang="en">'), path);
        // The copy buttons' script (a constant, allowed by its hash) is the only one.
        const other = text.replace(`<script>${COPY_SCRIPT}</script>`, '');
        assert.doesNotMatch(other, /<script/i, `${path} has a script tag`);
        assert.match(text, /<h1>/, path);
        assert.ok(res.headers.get('x-request-id'), `${path} is not tracked`);
      }
    });

    it('search ranks redis first, counts facets and links results to template pages', async () => {
      const { text } = await page('/search?q=redis');
      const refs = [...text.matchAll(/<a class="ref" href="([^"]+)">([^<]+)<\/a>/g)];
      assert.equal(refs[0]?.[2], `${SAMPLES}/redis`);
      assert.equal(refs[0]?.[1], REDIS);
      assert.ok(refs.some((r) => r[2] === `${EXTRAS}/caching/redis-sentinel`));
      assert.match(text, /href="\/search\?q=redis&amp;collection=caching"/);
      assert.match(text, /href="\/search\?q=redis&amp;registry=github.com%2Facme%2Fextras"/);
      const filtered = await page('/search?q=redis&collection=caching');
      const hits = [...filtered.text.matchAll(/<a class="ref" href="[^"]+">([^<]+)<\/a>/g)].map((m) => m[1]);
      assert.deepEqual(hits, [`${EXTRAS}/caching/redis-sentinel`]);
      assert.match(filtered.text, /aria-current="true">caching</);
    });

    it('the search page paginates 20 results a page', async () => {
      const first = await page('/');
      const count = (text: string) => [...text.matchAll(/<a class="ref"/g)].length;
      assert.equal(count(first.text), 20);
      assert.match(first.text, /Page 1 of 2/);
      assert.match(first.text, /<a href="\/search\?page=2" rel="next">/);
      const second = await page('/search?page=2');
      assert.ok(count(second.text) > 0 && count(second.text) < 20);
      assert.match(second.text, /<a href="\/search" rel="prev">/);
    });

    it('the template page shows the reference, versions, properties, example.yaml and findings', async () => {
      const { res, text } = await page(REDIS);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=60');
      assert.match(
        text,
        /<code class="reference" id="reference">github.com\/dm-samples\/templates\/redis:v1.1<\/code>/,
      );
      assert.match(text, /<code id="pin">github.com\/dm-samples\/templates\/redis:=v1.1<\/code>/);
      for (const v of ['v2.0.0-rc.1', 'v1.1', 'v1.0.3', 'v1.0.1', 'v1']) {
        assert.ok(text.includes(`href="${REDIS}/versions/${v}"`), v);
      }
      assert.match(
        text,
        /<code>maxMemory<\/code><\/th><td data-label="Type">string<\/td><td data-label="Default"><code>256mb<\/code>/,
      );
      assert.match(
        text,
        /<code>persistence.size<\/code><\/th><td data-label="Type">string<\/td><td data-label="Default"><code>1Gi<\/code>/,
      );
      assert.match(text, /<code id="example">resources:\n- name: session-cache/);
      assert.match(text, /No lint findings for redis\./);
      const markup = await page(`/templates/${EXTRAS}/caching/markup`);
      assert.match(markup.text, /MISSING_EXAMPLE/);
      assert.match(
        markup.text,
        /<code>replicas<\/code><\/th><td data-label="Type">integer<\/td><td data-label="Default"><code>3<\/code><\/td><td data-label="Required">yes<\/td>/,
      );
    });

    it('data is escaped: a description with <script> renders as text', async () => {
      const { text } = await page(`/templates/${EXTRAS}/caching/markup`);
      assert.ok(
        text.includes('&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;'),
      );
      assert.ok(!text.includes(EVIL_DESCRIPTION));
      assert.ok(text.includes('Markup &lt;i&gt;title&lt;/i&gt;'));
      const search = await page('/search?q=markup');
      assert.ok(search.text.includes('&lt;script&gt;alert('));
      assert.doesNotMatch(search.text, /<script|<b>bold/);
      const q = await page(`/search?q=${encodeURIComponent('"><script>x</script>')}`);
      assert.doesNotMatch(q.text, /<script/);
      assert.ok(q.text.includes('value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"'));
    });

    it('exact-version pages are immutable with a strong ETag and answer 304', async () => {
      const path = `${REDIS}/versions/v1.0.3`;
      const { res, text } = await page(path);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      const etag = res.headers.get('etag') ?? '';
      assert.match(etag, /^"page-[0-9a-f]{64}"$/);
      assert.match(text, /redis:v1.0<\/code>/);
      assert.match(text, /redis:=v1.0.3<\/code>/);
      assert.match(text, new RegExp(`href="${REDIS}">All versions of redis`));
      const again = await get(path, { 'if-none-match': etag });
      assert.equal(again.status, 304);
      assert.equal(await again.text(), '');
      const other = await get(`${REDIS}/versions/v1.1`);
      assert.notEqual(other.headers.get('etag'), etag);
      const rc = await page(`${REDIS}/versions/v2.0.0-rc.1`);
      assert.match(rc.text, /redis:v2.0.0-rc.1<\/code>/);
    });

    it('not-found pages list what exists', async () => {
      const version = await page(`${REDIS}/versions/v9`);
      assert.equal(version.res.headers.get('cache-control'), 'no-store');
      assert.match(version.text, /has no version v9/);
      const listed = [...version.text.matchAll(/<li><a href="[^"]+\/versions\/([^"]+)">/g)].map((m) => m[1]);
      assert.deepEqual(listed, ['v2.0.0-rc.1', 'v1.1', 'v1.0.3', 'v1.0.1', 'v1']);
      const template = await page(`/templates/${SAMPLES}/rediss`);
      assert.match(template.text, /Templates in the root collection/);
      assert.ok(template.text.includes(`href="${REDIS}"`));
      const registry = await page('/templates/github.com/nobody/nothing/redis');
      assert.match(registry.text, /Registries on this server/);
      assert.ok(registry.text.includes(`>${SAMPLES}</a>`));
    });

    it('registry pages show sync status, counts and findings', async () => {
      const list = await page('/registries');
      assert.equal(list.res.headers.get('cache-control'), 'public, max-age=10');
      assert.ok(list.text.includes(`href="/registries/${SAMPLES}">${SAMPLES}</a>`));
      assert.match(list.text, /succeeded/);
      const one = await page(`/registries/${EXTRAS}`);
      assert.match(one.text, /Sync status/);
      assert.match(one.text, /MISSING_EXAMPLE/);
      assert.match(one.text, /2 templates, 2 versions, 1 findings/);
      assert.ok(one.text.includes(`href="/templates/${EXTRAS}/caching/redis-sentinel"`));
    });

    it('pages remembered for anonymous readers are dropped when a sync swaps a new index in', async () => {
      const root = tempDir('dm-pages-swap-');
      const put = (path: string, content: string) => {
        mkdirSync(join(root, path, '..'), { recursive: true });
        writeFileSync(join(root, path), content);
      };
      put('registry.yaml', 'name: github.com/acme/swap\n');
      put('zebra/v1/zebra.jinja', 'resources: []\n');
      put('zebra/v1/example.yaml', 'resources: []\n');
      const row = await s.service.add({ source: root, name: 'github.com/acme/swap' });
      assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
      const before = await page('/search?q=zebra');
      assert.ok(before.text.includes('github.com/acme/swap/zebra<'));
      assert.ok(!before.text.includes('zebra-two'));
      assert.equal((await page('/search?q=zebra')).text, before.text);
      const templateBefore = await page('/templates/github.com/acme/swap/zebra');
      assert.match(templateBefore.text, /zebra:v1.0</);

      put('zebra-two/v1/zebra-two.jinja', 'resources: []\n');
      put('zebra-two/v1/example.yaml', 'resources: []\n');
      put('zebra/v1.1/zebra.jinja', 'resources: []\n');
      put('zebra/v1.1/example.yaml', 'resources: []\n');
      assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
      const after = await page('/search?q=zebra');
      assert.ok(after.text.includes('github.com/acme/swap/zebra-two<'));
      assert.match((await page('/templates/github.com/acme/swap/zebra')).text, /zebra:v1.1</);
      await s.service.remove(row.id);
      assert.equal((await get('/templates/github.com/acme/swap/zebra')).status, 404);
      assert.ok(!(await page('/search?q=zebra')).text.includes('github.com/acme/swap'));
    });

    it('private registries are invisible without a token, like in the API', async () => {
      const hidden = `/templates/${PRIVATE}/hidden-redis`;
      assert.equal((await get(hidden)).status, 404);
      assert.equal((await get(`/registries/${PRIVATE}`)).status, 404);
      assert.ok(!(await page('/registries')).text.includes(PRIVATE));
      assert.ok(!(await page('/search?q=hidden')).text.includes('hidden-redis'));
      const notFound = await page('/templates/github.com/nobody/nothing/redis');
      assert.ok(!notFound.text.includes(PRIVATE));

      const seen = await get(hidden, admin);
      assert.equal(seen.status, 200);
      assert.equal(seen.headers.get('cache-control'), 'private, max-age=60');
      assert.ok((await page('/search?q=hidden', admin)).text.includes('hidden-redis'));
      assert.ok((await page('/registries', admin)).text.includes(PRIVATE));
      const version = await get(`${hidden}/versions/v1`, admin);
      assert.equal(version.headers.get('cache-control'), 'private, max-age=31536000, immutable');
      const bad = await page('/', { authorization: 'Bearer wrong' });
      assert.equal(bad.res.status, 401);
      assert.match(bad.text, /the token is not valid/);
    });
    it('the "use it" block gives the full reference in a configuration that dm expands as pasted', async () => {
      const { text } = await page(REDIS);
      const config = /<code id="use-config">([^<]*)<\/code>/.exec(text)?.[1];
      assert.equal(
        config,
        `resources:\n- name: my-redis\n  type: ${SAMPLES}/redis:v1.1\n`,
        'a minimal configuration using the full reference',
      );
      assert.match(
        text,
        /<code id="use-commands">dm config set registryUrl http:\/\/localhost [^<]*\ndm install config.yaml[^<]*\ndm expand config.yaml[^<]*\ndm expand github.com\/dm-samples\/templates\/redis:v1.1 --registry-url http:\/\/localhost<\/code>/,
      );
      assert.match(
        text,
        /<button type="button" data-copy="use-config" aria-label="Copy the configuration" hidden="">Copy<\/button>/,
      );
      // Pasted into one's own config.yaml, it expands (the registry directory stands in for GitHub).
      const dir = tempDir('dm-pages-use-');
      writeFileSync(join(dir, 'config.yaml'), config ?? '');
      const run = spawnSync(
        process.execPath,
        [
          join(process.cwd(), 'bin', 'dm.js'),
          'expand',
          'config.yaml',
          '--registry-dir',
          FIXTURES,
          '-o',
          'json',
        ],
        { cwd: dir, encoding: 'utf8' },
      );
      assert.equal(run.status, 0, run.stderr);
      const names = (
        JSON.parse(run.stdout) as { config: { resources: { name: string }[] } }
      ).config.resources.map((r) => r.name);
      assert.ok(names.includes('my-redis-config'), names.join(', '));
    });

    it('descriptions and READMEs are Markdown without raw HTML or unsafe links', async () => {
      const { text } = await page(`/templates/${EXTRAS}/caching/redis-sentinel`);
      const readme = /<div id="readme">([\s\S]*?)<\/div><\/section>/.exec(text)?.[1] ?? '';
      assert.match(readme, /<h3>Redis Sentinel<\/h3>/);
      assert.match(readme, /Runs <strong>three<\/strong> sentinels/);
      assert.match(
        readme,
        /<a href="https:\/\/redis.io\/docs\/management\/sentinel\/" rel="nofollow noopener noreferrer">the docs<\/a>/,
      );
      assert.match(
        readme,
        /<ul><li>watches <code>mymaster<\/code><\/li><li>fails over <em>automatically<\/em><\/li><\/ul>/,
      );
      assert.match(readme, /<pre><code>quorum: 2\n&lt;script&gt;alert\(4\)&lt;\/script&gt;<\/code><\/pre>/);
      assert.ok(readme.includes('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'), readme);
      assert.ok(readme.includes('<span>click</span>'), 'a javascript: link is shown as its text');
      assert.doesNotMatch(readme, /<img|<a href="javascript|onerror="/i);
      const markup = await page(`/templates/${EXTRAS}/caching/markup`);
      const description = /<div id="description">([\s\S]*?)<\/div><dl/.exec(markup.text)?.[1] ?? '';
      assert.equal(
        description,
        '<div class="markdown"><p>&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;</p></div>',
      );
    });

    it('author, license and source: the schema info, and "local directory" without its path', async () => {
      const { text } = await page(REDIS);
      const about = /<dl class="facts" id="about">([\s\S]*?)<\/dl>/.exec(text)?.[1] ?? '';
      assert.match(about, /<dt>Author<\/dt><dd>dm-samples<\/dd>/);
      assert.match(about, /<dt>License<\/dt><dd><span class="muted">not given<\/span><\/dd>/);
      assert.match(about, /<dt>Source<\/dt><dd><span id="source">local directory<\/span><\/dd>/);
      assert.ok(!text.includes(FIXTURES), 'the local path is not shown');
      assert.doesNotMatch(text, /registry commit dir-/);
      const registry = await page(`/registries/${SAMPLES}`);
      assert.match(registry.text, /<dd id="registry-source">directory local directory<\/dd>/);
      assert.ok(!registry.text.includes(FIXTURES));
      const asAdmin = await page(`/registries/${SAMPLES}`, admin);
      assert.ok(asAdmin.text.includes(`<code>${FIXTURES}</code>`), 'admins see the path');
    });

    it('relationships: what a version uses (resolved here) and what uses it, among visible registries', async () => {
      const web = await page(`/templates/${SAMPLES}/web-app`);
      const uses = /<ul id="uses"[^>]*>([\s\S]*?)<\/ul>/.exec(web.text)?.[1] ?? '';
      assert.ok(
        uses.includes(
          `<a href="${REDIS}/versions/v1.0.3">${SAMPLES}/redis:v1.0</a><span class="muted"> → v1.0.3</span>`,
        ),
        uses,
      );
      const redis = await page(REDIS);
      const usedBy = [
        ...(/<ul id="used-by"[^>]*>([\s\S]*?)<\/ul>/.exec(redis.text)?.[1] ?? '').matchAll(
          /<a href="([^"]+)">([^<]+)<\/a>/g,
        ),
      ];
      const labels = usedBy.map((m) => m[2]);
      assert.ok(labels.includes(`${SAMPLES}/web-app v1.1`), labels.join(', '));
      assert.ok(usedBy.every((m) => m[1]?.startsWith('/templates/')));
      assert.ok(!labels.some((l) => l?.startsWith(PRIVATE)), 'a private user is not shown anonymously');
      const withToken = await page(REDIS, admin);
      assert.ok(withToken.text.includes(`${PRIVATE}/hidden-redis v1</a>`), 'a reader of it sees it');
      // The exact-version page (immutable) links the used template's page and defers used-by to it.
      const exact = await page(`/templates/${SAMPLES}/web-app/versions/v1.1`);
      assert.ok(exact.text.includes(`<a href="${REDIS}">${SAMPLES}/redis:v1.0</a>`));
      assert.doesNotMatch(exact.text, /id="used-by"/);
    });
    it('a misspelt search shows similar names with "did you mean", and a 404 suggests the nearest name', async () => {
      const { res, text } = await page('/search?q=redsi');
      assert.equal(res.status, 200);
      assert.match(
        text,
        /<p id="did-you-mean">No template matches “redsi”; these have similar names. Did you mean <a href="\/search\?q=redis">redis<\/a>\?<\/p>/,
      );
      const refs = [...text.matchAll(/<a class="ref" href="[^"]+">([^<]+)<\/a>/g)].map((m) => m[1]);
      assert.equal(refs[0], `${SAMPLES}/redis`);
      assert.doesNotMatch((await page('/search?q=redis')).text, /id="did-you-mean"/);
      const api = (await (await get('/api/v1/search?q=redsi')).json()) as {
        didYouMean: string;
        total: number;
      };
      assert.equal(api.didYouMean, 'redis', 'the API gives the same answer');
      assert.match(text, new RegExp(`>${api.total} templates?<`));
      const missing = await page(`/templates/${SAMPLES}/redsi`);
      assert.equal(missing.res.status, 404);
      assert.match(
        missing.text,
        new RegExp(`<p id="did-you-mean">Did you mean <a href="${REDIS}">${SAMPLES}/redis</a>\\?</p>`),
      );
    });
    it('the diff page lists changed files and properties with a bounded line diff, and /compare leads to it', async () => {
      const path = `${REDIS}/versions/v1.0.3/diff/v1.1`;
      const { res, text } = await page(path);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.match(
        text,
        /<p class="muted" id="files-summary">0 added, 0 removed, 3 changed, 1 unchanged<\/p>/,
      );
      assert.match(
        text,
        /<th scope="row" data-label="Property"><code>persistence.size<\/code><\/th><td data-label="Change">added<\/td><td data-label="Detail">string<\/td>/,
      );
      assert.match(text, /<span class="add">\+ {4}persistence:\n<\/span>/);
      const etag = res.headers.get('etag') ?? '';
      assert.equal((await get(path, { 'if-none-match': etag })).status, 304);
      const back = await page(`${REDIS}/versions/v1.1/diff/v1.0.3`);
      assert.match(
        back.text,
        /<th scope="row" data-label="Property"><code>persistence.size<\/code><\/th><td data-label="Change">removed<\/td>/,
      );
      const missing = await page(`${REDIS}/versions/v1.0.3/diff/v9`);
      assert.equal(missing.res.status, 404);
      assert.match(missing.text, /has no version v9/);
      const compare = await get(
        `/compare?template=${encodeURIComponent(`${SAMPLES}/redis`)}&from=v1&to=v1.1`,
      );
      assert.equal(compare.status, 302);
      assert.equal(compare.headers.get('location'), `${REDIS}/versions/v1/diff/v1.1`);
      assert.equal((await get('/compare?template=x&from=v1')).status, 400);
      assert.match(
        (await page(REDIS)).text,
        /<form class="pick" action="\/compare" method="get" aria-label="Compare versions">/,
      );
      const hidden = await get(`/templates/${PRIVATE}/hidden-redis/versions/v1/diff/v1`);
      assert.equal(hidden.status, 404, 'a private registry stays invisible');
    });
  });

/** Every page, anonymous and with the admin token, as the two databases render it. */
const SAME_ON_BOTH = [
  '/',
  '/search?q=redis',
  '/search?q=redis&collection=caching',
  '/search?q=redis&registry=github.com%2Facme%2Fextras',
  '/search?q=redis&page=2',
  '/search?q=',
  '/search?q=redsi',
  '/search?q=hidden',
  '/search?q=%25_%22',
  '/search?q=REDIS%20ha',
  REDIS,
  `${REDIS}/versions/v1.0.3`,
  `${REDIS}/versions/v1.0.3/diff/v1.1`,
  `${REDIS}/versions/v9`,
  `/templates/${SAMPLES}/redsi`,
  `/templates/${SAMPLES}/security/pod-security`,
  `/templates/${EXTRAS}/caching/markup`,
  `/templates/${EXTRAS}/caching/redis-sentinel`,
  `/templates/${PRIVATE}/hidden-redis`,
  '/registries',
  `/registries/${SAMPLES}`,
  `/registries/${EXTRAS}`,
  `/registries/${PRIVATE}`,
];

if (DIALECTS.length > 1)
  describe('the pages on SQLite and PostgreSQL', () => {
    it('are the same HTML, status and cache headers, save sync times and temporary directories', async () => {
      const rendered: string[][] = [];
      for (const dialect of DIALECTS) {
        const s = await pagesServer(dialect);
        try {
          const pages: string[] = [];
          for (const path of SAME_ON_BOTH) {
            for (const headers of [{}, admin]) {
              const res = await s.app.request(path, { headers });
              const text = (await res.text())
                .replace(/<time datetime="[^"]+">[^<]+<\/time>/g, '<time>')
                .replace(/\/dm-pages-(extras|private)-\w+/g, '/dm-pages-$1-');
              const cache = `${res.headers.get('cache-control')} ${res.headers.get('etag') !== null}`;
              pages.push(`${path} ${Object.keys(headers).length} ${res.status} ${cache}\n${text}`);
            }
          }
          rendered.push(pages);
        } finally {
          await s.close();
        }
      }
      const [sqlite = [], postgres = []] = rendered;
      for (const [i, page] of sqlite.entries()) assert.equal(postgres[i], page);
    });
  });

describe('propertyRows()', () => {
  it('gives nested properties dotted names, array items [] and required flags', () => {
    const rows = propertyRows({
      required: ['name'],
      properties: {
        name: { type: 'string', description: 'The name.' },
        tls: {
          type: 'object',
          required: ['secret'],
          properties: { secret: { type: 'string' }, hosts: { type: 'array', items: { type: 'string' } } },
        },
        ports: {
          type: 'array',
          items: { type: 'object', properties: { port: { type: 'integer', default: 80 } } },
        },
        mode: { enum: ['a', 'b'], default: 'a' },
        empty: { type: ['string', 'null'], default: '' },
      },
    });
    assert.deepEqual(
      rows.map((r) => [r.name, r.type, r.default, r.required]),
      [
        ['name', 'string', null, true],
        ['tls', 'object', null, false],
        ['tls.secret', 'string', null, true],
        ['tls.hosts', 'array of string', null, false],
        ['ports', 'array of object', null, false],
        ['ports[].port', 'integer', '80', false],
        ['mode', 'one of a, b', 'a', false],
        ['empty', 'string | null', '""', false],
      ],
    );
    assert.deepEqual(propertyRows(null), []);
    assert.deepEqual(propertyRows({ properties: [] }), []);
  });
});

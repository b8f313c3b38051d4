/**
 * Pages of a version at the files bound, names that could fool a reader, and Markdown in property
 * descriptions (docs/pages.md "Files", "Access, escaping, headers", "Properties table"; issue 25
 * items 2 and 12, issue 26 item 16), through the real app on each database of DIALECTS, with the
 * admin token (pages asked with a token are rendered every time, never remembered).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, DIALECTS, type DialectTestServer } from '../server/helpers.js';
import { BULK_FILES, EXTRA_TEMPLATES, LONG, MANY, pagesServer, RLO, SAMPLES } from './fixture.js';

const BULK = `/templates/${LONG}/bulk/versions/v1.0.0`;
/** Most bytes of HTML one page of the bulk version may be (today's whole list was ~330 KB). */
const MAX_PAGE_BYTES = 64 * 1024;

/** The text of each match of `re`'s first group in `html`, with the entities hono/jsx writes undone. */
function all(html: string, re: RegExp): string[] {
  return [...html.matchAll(re)].map((m) =>
    (m[1] ?? '')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&'),
  );
}

for (const dialect of DIALECTS)
  describe(`pages of big versions, hostile names, property Markdown (${dialect})`, () => {
    let s: DialectTestServer;
    before(async () => {
      s = await pagesServer(dialect, { long: true });
    });
    after(() => s.close());

    const page = async (path: string) => {
      const res = await s.app.request(path, { headers: admin });
      return { res, text: await res.text() };
    };

    /**
     * Follows the `rel="next"` links from `path`, each page private (asked with a token) and at most
     * `max` bytes: the texts `item` finds on each, and the page count.
     */
    const walk = async (
      path: string,
      item: RegExp,
      max = 2 * MAX_PAGE_BYTES,
    ): Promise<{ items: string[]; pages: number }> => {
      const items: string[] = [];
      let at: string | undefined = path;
      let pages = 0;
      while (at !== undefined) {
        const { res, text } = await page(at);
        assert.equal(res.status, 200, at);
        assert.match(res.headers.get('cache-control') ?? '', /^private, /, at);
        assert.ok(Buffer.byteLength(text) <= max, `${at}: ${Buffer.byteLength(text)} bytes of HTML`);
        items.push(...all(text, item));
        const next = /<a href="([^"]*)" rel="next">/.exec(text)?.[1];
        at = next === undefined ? undefined : next.replace(/&amp;/g, '&').replace(/#.*$/, '');
        assert.ok(++pages <= 1000, 'the Next links end');
      }
      return { items, pages };
    };

    it(`a version of ${BULK_FILES} files: each page is bounded and the paging links reach every file once`, async () => {
      const { items: seen, pages } = await walk(
        BULK,
        /<td data-label="Path"><a href="[^"]*\/files\/[^"]*">([^<]*)<\/a><\/td>/g,
        MAX_PAGE_BYTES,
      );
      assert.ok(pages > 1, 'the list is paged');
      assert.equal(seen.length, BULK_FILES);
      assert.equal(new Set(seen).size, BULK_FILES, 'no file is listed twice');
      assert.ok(seen.includes('bulk.jinja') && seen.includes('data/d7/f997.txt'));

      const first = await page(BULK);
      assert.match(first.text, new RegExp(`${BULK_FILES} files, \\d+ bytes in all; 1–\\d+ shown`));
      assert.match(first.text, /<code>data\/<\/code><span class="muted"> 998 files,/);
      // Every page of an immutable version has its own ETag.
      const second = await s.app.request(`${BULK}?files=2`);
      assert.notEqual(second.headers.get('etag'), (await s.app.request(BULK)).headers.get('etag'));
      await second.arrayBuffer();
    });

    it(`a template of ${MANY} versions and a registry of over 100 templates: lists paged, pickers and 404 lists bounded`, async () => {
      const versions = await walk(
        `/templates/${LONG}/many`,
        /<td data-label="Version"><a href="[^"]*">(v[^<]*)<\/a><\/td>/g,
      );
      assert.equal(versions.pages, 2);
      assert.equal(new Set(versions.items).size, MANY);
      const first = await page(`/templates/${LONG}/many`);
      assert.ok((first.text.match(/<option /g) ?? []).length <= 2 * 100, 'the pickers offer at most a page');
      assert.equal((await page(`/templates/${LONG}/many?versions=3`)).res.status, 404);

      const templates = await walk(
        `/registries/${LONG}`,
        /<td data-label="Template"><a href="[^"]*">([^<]*)<\/a>/g,
      );
      assert.equal(templates.pages, 2);
      assert.equal(new Set(templates.items).size, EXTRA_TEMPLATES + 4);
      assert.ok(templates.items.includes('t100') && templates.items.includes('many'));

      // A version that does not exist: the nearest few of the MANY, how many more, did you mean.
      const missing = await page(`/templates/${LONG}/many/versions/v9.9.9`);
      assert.equal(missing.res.status, 404);
      const listed = (text: string) =>
        all(
          /<ul id="available">([\s\S]*?)<\/ul>/.exec(text)?.[1] ?? '',
          /<li><a href="[^"]*">([^<]*)<\/a><\/li>/g,
        );
      assert.deepEqual(
        listed(missing.text),
        Array.from({ length: 10 }, (_, i) => `v1.0.${MANY - 1 - i}`),
      );
      assert.match(missing.text, new RegExp(`and ${MANY - 10} more`));
      assert.match(
        missing.text,
        new RegExp(`Did you mean <a href="[^"]*/many/versions/v1\\.0\\.${MANY - 1}">`),
      );
      const between = await page(`/templates/${LONG}/many/versions/v1.0.75-rc.1`);
      assert.equal(between.res.status, 404);
      assert.deepEqual(
        listed(between.text),
        Array.from({ length: 10 }, (_, i) => `v1.0.${79 - i}`),
        'as many above as below',
      );
      // A diff with a version that does not exist: the same bounded list.
      const noDiff = await page(`/templates/${LONG}/many/versions/v1.0.0/diff/v9.9.9`);
      assert.equal(noDiff.res.status, 404);
      assert.deepEqual(listed(noDiff.text), listed(missing.text));
      // What `many:v1.0.75-rc.1` resolves to (the patch float), as dm resolve would answer.
      assert.match(
        between.text,
        new RegExp(`Did you mean <a href="[^"]*/many/versions/v1\\.0\\.${MANY - 1}">`),
      );

      const diff = await page(`/templates/${LONG}/many/versions/v1.0.0/diff/v1.0.149`);
      assert.equal(diff.res.status, 200);
      const options = (diff.text.match(/<option /g) ?? []).length;
      assert.ok(options <= 2 * 101, `${options} options in the diff page's pickers`);
      assert.match(diff.text, /<option value="v1.0.0" selected="">/);
    });

    it(`a version of many (${MANY} versions) that does not exist: the API's 404s name the nearest 10, not all`, async () => {
      const json = async (path: string) => {
        const res = await s.app.request(path, { headers: admin });
        assert.equal(res.status, 404, path);
        const body = (await res.json()) as {
          error: { code: string; message: string; hint?: string; details: Record<string, unknown> };
        };
        assert.equal(body.error.code, 'VERSION_NOT_FOUND', path);
        assert.ok(JSON.stringify(body).length < 2000, `${path}: ${JSON.stringify(body).length} bytes`);
        return body.error;
      };
      const newest = Array.from({ length: 10 }, (_, i) => `v1.0.${MANY - 1 - i}`);

      const content = await json(`/api/v1/templates/${LONG}/many/versions/v9.9.9/files`);
      assert.deepEqual(content.details.available, newest);
      assert.equal(content.details.versionCount, MANY);
      assert.equal(content.details.closest, `v1.0.${MANY - 1}`);
      assert.equal(content.hint, `did you mean v1.0.${MANY - 1}?`);
      // A floating version: the content of what it floats to is the one meant.
      const floating = await json(`/api/v1/templates/${LONG}/many/versions/v1.0/files/many.jinja`);
      assert.equal(floating.details.closest, `v1.0.${MANY - 1}`);
      assert.equal((floating.details.available as string[]).length, 10);

      const resolved = await json(`/api/v1/resolve?ref=${encodeURIComponent(`${LONG}/many:v1.0.999`)}`);
      assert.equal(
        resolved.message,
        `no version of ${LONG}/many matches v1.0.999 (have ${MANY} for v1.0, the highest: ${[...newest].reverse().join(', ')}; newest: v1.0.${MANY - 1})`,
      );
      assert.deepEqual(resolved.details.sameMinor, [...newest].reverse());
      assert.deepEqual(resolved.details.available, newest);
      assert.equal(resolved.details.versionCount, MANY);
    });

    it('a files page past the last is a 404 page, a malformed one a 400 page', async () => {
      for (const [query, status] of [
        ['?files=9999', 404],
        ['?files=0', 400],
        ['?files=x', 400],
      ] as const) {
        const { res, text } = await page(`${BULK}${query}`);
        assert.equal(res.status, status, query);
        assert.match(text, /<h1>/, query);
      }
      const small = await page(`/templates/${SAMPLES}/redis?files=2`);
      assert.equal(small.res.status, 404);
      assert.match(small.text, /has \d+ files, 1 page\(s\) of 100: there is no page 2/);
    });

    it('a right-to-left override in a file name, a property name or a title is shown escaped', async () => {
      for (const path of [
        `/templates/${LONG}/bidi`,
        `/templates/${LONG}/bidi/versions/v1`,
        '/search?q=bidi',
        `/registries/${LONG}`,
      ]) {
        const { res, text } = await page(path);
        assert.equal(res.status, 200, path);
        assert.ok(!text.includes(RLO), `${path} carries a raw U+202E`);
        assert.match(text, /evil\\u\{202e\}txt\.exe/, path);
      }
      const { text } = await page(`/templates/${LONG}/bidi/versions/v1`);
      assert.match(text, /<code>port\\u\{202e\}x<\/code>/);
      assert.match(text, />notes\/read\\u\{202e\}me\.txt<\/a>/);
    });

    it('property descriptions are Markdown: `maxmemory` is code', async () => {
      const { text } = await page(`/templates/${SAMPLES}/redis`);
      const row =
        /<th scope="row" data-label="Name"><code>maxMemory<\/code><\/th>([\s\S]*?)<\/tr>/.exec(text)?.[1] ??
        '';
      assert.match(row, /<div class="markdown"><p>Redis <code>maxmemory<\/code>\.<\/p><\/div>/);
      assert.ok(!row.includes('`'), row);
    });
  });

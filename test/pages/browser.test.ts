/**
 * The web pages in a real browser (docs/pages.md, "Tests"): Debian's
 * headless Chromium through playwright-core, with JavaScript DISABLED (the pages must work without
 * it), against the real app on each database of DIALECTS served over HTTP on a loopback port.
 * Fails (never skips) when /usr/bin/chromium is missing. Screenshots go to $DM_SCREENSHOT_DIR
 * (default: the OS temp dir; the last dialect's run leaves its screenshots there).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DIALECTS } from '../server/helpers.js';
import { CHROMIUM, type LaunchedChromium } from '../support/chromium.js';
import { EXTRAS, SAMPLES } from './fixture.js';
import { servedPages } from './served.js';

const SCREENSHOTS = process.env.DM_SCREENSHOT_DIR ?? tmpdir();

it('Debian chromium is installed at /usr/bin/chromium (apt-get install -y chromium)', () => {
  assert.ok(
    existsSync(CHROMIUM),
    `${CHROMIUM} is missing: install Debian's chromium package; no browser is downloaded`,
  );
});

for (const dialect of DIALECTS)
  describe(`web pages in headless Chromium (${dialect})`, () => {
    let served: Awaited<ReturnType<typeof servedPages>> | undefined;
    let base: string;
    let page: Page;

    before(async () => {
      served = await servedPages(dialect);
      base = served.base;
      page = await served.browser.context.newPage();
      page.setDefaultTimeout(15_000);
    });
    after(() => served?.close());

    const results = () => page.locator('ol.results a.ref');

    it('searching "redis" from the home page shows redis first', async () => {
      const res = await page.goto(`${base}/`);
      assert.equal(res?.status(), 200);
      assert.equal(await page.title(), 'Templates · dm registry');
      await page.getByLabel('Search templates').fill('redis');
      await Promise.all([
        page.waitForURL(/\/search\?q=redis$/),
        page.getByRole('button', { name: 'Search' }).click(),
      ]);
      assert.equal(await results().first().textContent(), `${SAMPLES}/redis`);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Templates matching “redis”');
      assert.equal(await page.getByLabel('Search templates').inputValue(), 'redis');
      await page.screenshot({ path: join(SCREENSHOTS, 'dm-pages-search.png'), fullPage: true });
    });

    it('clicking a facet filters the results, and again clears it', async () => {
      await page.goto(`${base}/search?q=redis`);
      const before = await results().allTextContents();
      assert.ok(before.length > 1);
      await page.getByRole('region', { name: 'Registry' }).getByRole('link', { name: EXTRAS }).click();
      await page.waitForURL(/registry=github.com%2Facme%2Fextras/);
      const filtered = await results().allTextContents();
      assert.ok(filtered.length > 0 && filtered.length < before.length);
      assert.ok(
        filtered.every((r) => r.startsWith(`${EXTRAS}/`)),
        filtered.join(', '),
      );
      await page.getByRole('region', { name: 'Collection' }).getByRole('link', { name: 'caching' }).click();
      await page.waitForURL(/collection=caching/);
      assert.deepEqual(await results().allTextContents(), [`${EXTRAS}/caching/redis-sentinel`]);
      await page.getByRole('link', { name: 'All registries' }).click();
      await page.waitForURL((url) => !url.search.includes('registry='));
      assert.deepEqual(await results().allTextContents(), [`${EXTRAS}/caching/redis-sentinel`]);
    });

    it('clicking a result opens the template page with its reference and properties', async () => {
      await page.goto(`${base}/search?q=redis`);
      await results().first().click();
      await page.waitForURL(`${base}/templates/${SAMPLES}/redis`);
      assert.equal((await page.getByRole('heading', { level: 1 }).textContent())?.startsWith('redis'), true);
      assert.equal(await page.locator('code#reference').textContent(), `${SAMPLES}/redis:v1.1`);
      const row = page.locator('#properties tbody tr', {
        has: page.getByRole('rowheader', { name: 'maxMemory' }),
      });
      assert.equal(await row.count(), 1);
      assert.deepEqual(await row.locator('td').allTextContents(), [
        'string',
        '256mb',
        'no',
        'Redis maxmemory.',
      ]);
      // The description is Markdown (docs/pages.md, "Properties table"): `maxmemory` is code.
      assert.equal(await row.locator('td .markdown code').textContent(), 'maxmemory');
      const headers = await page.locator('#properties thead th').allTextContents();
      assert.deepEqual(headers, ['Name', 'Type', 'Default', 'Required', 'Description']);
      assert.match((await page.locator('#example').textContent()) ?? '', /maxMemory: 512mb/);
      await page.screenshot({ path: join(SCREENSHOTS, 'dm-pages-template.png'), fullPage: true });

      await page.getByRole('link', { name: 'v1.0.3' }).click();
      await page.waitForURL(/\/versions\/v1.0.3$/);
      assert.equal(await page.locator('code#reference').textContent(), `${SAMPLES}/redis:v1.0`);
      assert.equal(await page.locator('code#pin').textContent(), `${SAMPLES}/redis:=v1.0.3`);
    });

    it('the versions table says when each version first appeared (its first-seen record)', async () => {
      const started = Date.now();
      await page.goto(`${base}/templates/${SAMPLES}/redis`);
      const headers = await page.locator('#versions thead th').allTextContents();
      assert.deepEqual(headers, ['Version', 'Kind', 'Digest', 'First seen', 'Note']);
      const rows = page.locator('#versions tbody tr');
      assert.equal(await rows.count(), 5);
      for (const row of await rows.all()) {
        const time = row.locator('td.first-seen time');
        const iso = (await time.getAttribute('datetime')) ?? '';
        // Recorded by the fixture's sync, before this test started; shown to the second, in UTC.
        assert.ok(Date.parse(iso) <= started, iso);
        assert.equal(await time.textContent(), `${iso.replace('T', ' ').slice(0, 19)} UTC`);
      }
    });

    it('a 404 page lists the versions that exist, as links', async () => {
      const res = await page.goto(`${base}/templates/${SAMPLES}/redis/versions/v9.9`);
      assert.equal(res?.status(), 404);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Not found');
      assert.deepEqual(await page.locator('#available a').allTextContents(), [
        'v2.0.0-rc.1',
        'v1.1',
        'v1.0.3',
        'v1.0.1',
        'v1',
      ]);
      await page.locator('#available').getByRole('link', { name: 'v1.1' }).click();
      await page.waitForURL(/\/versions\/v1.1$/);
      assert.equal(await page.locator('code#reference').textContent(), `${SAMPLES}/redis:v1.1`);
    });

    it('the registries page shows sync status and links to each registry', async () => {
      await page.goto(`${base}/registries`);
      const row = page.locator('#registries tbody tr', { has: page.getByRole('link', { name: SAMPLES }) });
      assert.match((await row.textContent()) ?? '', /succeeded/);
      await row.getByRole('link', { name: SAMPLES }).click();
      await page.waitForURL(`${base}/registries/${SAMPLES}`);
      assert.equal(await page.getByRole('heading', { level: 2, name: 'Sync status' }).count(), 1);
      await page.screenshot({ path: join(SCREENSHOTS, 'dm-pages-registry.png'), fullPage: true });
    });

    it('the "use it" block: the configuration to paste, Copy buttons hidden without JavaScript', async () => {
      await page.goto(`${base}/templates/${SAMPLES}/redis`);
      assert.equal(await page.getByRole('heading', { level: 2, name: 'Use it' }).count(), 1);
      assert.equal(
        await page.locator('#use-config').textContent(),
        `resources:\n- name: my-redis\n  type: ${SAMPLES}/redis:v1.1\n`,
      );
      assert.equal(await page.getByRole('button', { name: 'Copy the configuration' }).isVisible(), false);
      assert.equal(await page.locator('#about dd').nth(0).textContent(), 'dm-samples');
      assert.equal(await page.locator('#source').textContent(), 'local directory');
    });

    it('a README renders as Markdown: headings, emphasis and links, no HTML from data', async () => {
      await page.goto(`${base}/templates/${EXTRAS}/caching/redis-sentinel`);
      const readme = page.locator('#readme');
      assert.equal(await readme.getByRole('heading', { level: 3 }).first().textContent(), 'Redis Sentinel');
      assert.equal(await readme.locator('strong').first().textContent(), 'three');
      assert.equal(
        await readme.getByRole('link', { name: 'the docs' }).getAttribute('href'),
        'https://redis.io/docs/management/sentinel/',
      );
      assert.equal(await readme.locator('img').count(), 0);
      assert.match((await readme.textContent()) ?? '', /<img src=x onerror="alert\(1\)">/);
    });

    it('relationships link both ways: web-app uses redis, redis lists web-app', async () => {
      await page.goto(`${base}/templates/${SAMPLES}/web-app`);
      await page
        .locator('#uses')
        .getByRole('link', { name: `${SAMPLES}/redis:v1.0` })
        .click();
      await page.waitForURL(/\/redis\/versions\/v1.0.3$/);
      await page.goto(`${base}/templates/${SAMPLES}/redis`);
      await page
        .locator('#used-by')
        .getByRole('link', { name: `${SAMPLES}/web-app v1.1` })
        .click();
      await page.waitForURL(/\/web-app\/versions\/v1.1$/);
    });

    it('comparing two versions with the labelled pickers opens the diff page', async () => {
      await page.goto(`${base}/templates/${SAMPLES}/redis`);
      await page.getByLabel('From version').selectOption('v1.0.3');
      await page.getByLabel('To version').selectOption('v1.1');
      await Promise.all([
        page.waitForURL(/\/versions\/v1.0.3\/diff\/v1.1$/),
        page.getByRole('button', { name: 'Compare' }).click(),
      ]);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'redis v1.0.3 → v1.1');
      assert.match((await page.locator('#files-summary').textContent()) ?? '', /3 changed/);
      const added = page.locator('#property-changes tbody tr', {
        has: page.getByRole('rowheader', { name: 'persistence.size' }),
      });
      assert.deepEqual(await added.locator('td').allTextContents(), ['added', 'string']);
      assert.ok((await page.locator('pre.diff .add').count()) > 0);
      await page.screenshot({ path: join(SCREENSHOTS, 'dm-pages-diff.png'), fullPage: true });
    });

    it('a misspelt search offers "did you mean", and the link searches for it', async () => {
      await page.goto(`${base}/`);
      await page.getByLabel('Search templates').fill('redsi');
      await Promise.all([page.waitForURL(/q=redsi$/), page.getByRole('button', { name: 'Search' }).click()]);
      assert.equal(await results().first().textContent(), `${SAMPLES}/redis`);
      await page.locator('#did-you-mean').getByRole('link', { name: 'redis' }).click();
      await page.waitForURL(/\/search\?q=redis$/);
      assert.equal(await page.locator('#did-you-mean').count(), 0);
    });

    it('keyboard: Tab reaches the search box first and every page has one h1', async () => {
      await page.goto(`${base}/templates/${SAMPLES}/redis`);
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate('document.activeElement?.id'), 'q');
      for (const path of [
        '/',
        `/templates/${SAMPLES}/redis`,
        `/templates/${SAMPLES}/redis/versions/v1/diff/v1.1`,
        '/registries',
      ]) {
        await page.goto(`${base}${path}`);
        assert.equal(await page.getByRole('heading', { level: 1 }).count(), 1, path);
      }
    });
  });

for (const dialect of DIALECTS)
  describe(`the Copy buttons with JavaScript on (${dialect})`, () => {
    let served: Awaited<ReturnType<typeof servedPages>> | undefined;
    let base: string;
    let browser: LaunchedChromium;

    before(async () => {
      served = await servedPages(dialect, { javaScriptEnabled: true });
      base = served.base;
      browser = served.browser;
    });
    after(() => served?.close());

    it('show themselves and copy the reference and the configuration (the CSP lets only that script run)', async () => {
      await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      const page = await browser.context.newPage();
      page.setDefaultTimeout(15_000);
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.goto(`${base}/templates/${SAMPLES}/redis`);
      // The clipboard holds the copied text once the click's promise settles: wait for that (the
      // button's "Copied" label is transient, so it is not what the test waits on).
      const clipboardIs = (text: string) =>
        page.waitForFunction(`navigator.clipboard.readText().then((t) => t === ${JSON.stringify(text)})`);
      await page.evaluate("navigator.clipboard.writeText('')");
      const copy = page.getByRole('button', { name: 'Copy the configuration' });
      assert.equal(await copy.isVisible(), true);
      await copy.click();
      await clipboardIs(`resources:\n- name: my-redis\n  type: ${SAMPLES}/redis:v1.1\n`);
      await page.getByRole('button', { name: 'Copy the reference' }).click();
      await clipboardIs(`${SAMPLES}/redis:v1.1`);
      assert.deepEqual(violations, []);
      await page.close();
    });
  });

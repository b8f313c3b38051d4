/**
 * The pages on a phone (docs/pages.md, "Phones"; issue 26 item 15): Debian's headless Chromium at
 * 390 × 844 CSS pixels, JavaScript on (so the Copy buttons show), over every kind of page with the
 * longest names a registry may hold (test/pages/fixture.ts, LONG). Geometry, not pixels: the
 * document is no wider than the screen, no element reaches past it unless a box of its own that
 * fits scrolls it (a code block), the header's Search button is whole and on top, and no Copy
 * button covers a character of the text it copies. Screenshots (`dm-phone-*.png`) go to
 * $DM_SCREENSHOT_DIR or a new temporary directory, named in the test's output.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DIALECTS } from '../server/helpers.js';
import { LONG, LONG_COLLECTION, LONG_TEMPLATE, LONG_VERSIONS, SAMPLES } from './fixture.js';
import { servedPages } from './served.js';

const WIDTH = 390;
const SCREENSHOTS = process.env.DM_SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), 'dm-phone-'));

const LONG_PAGE = `/templates/${LONG}/${LONG_COLLECTION}/${LONG_TEMPLATE}`;

/** Every kind of page, by a short name for its screenshot. */
const PAGES: [string, string][] = [
  ['home', '/'],
  ['search', `/search?q=${LONG_TEMPLATE}`],
  ['search-all', '/search'],
  ['template', LONG_PAGE],
  ['version', `${LONG_PAGE}/versions/${LONG_VERSIONS[0]}`],
  ['diff', `${LONG_PAGE}/versions/${LONG_VERSIONS[2]}/diff/${LONG_VERSIONS[0]}`],
  ['bulk', `/templates/${LONG}/bulk/versions/v1.0.0`],
  ['redis', `/templates/${SAMPLES}/redis`],
  ['registries', '/registries'],
  ['registry', `/registries/${LONG}`],
  ['not-found', `${LONG_PAGE}/versions/v9.9.9`],
];

/** What reaches past the screen's right or left edge, and is not inside a scroll box that fits. */
interface Geometry {
  viewport: number;
  scrollWidth: number;
  outside: string[];
}

// Runs in the page: a string, so the compiled test carries no closure the page cannot see.
const GEOMETRY = `(() => {
  const vw = document.documentElement.clientWidth;
  const inside = (r) => r.left >= -0.5 && r.right <= vw + 0.5;
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (e.classList.length ? '.' + [...e.classList].join('.') : '');
  const outside = [];
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if ((r.width === 0 && r.height === 0) || inside(r)) continue;
    let a = e.parentElement;
    let scrolled = false;
    while (a && a !== document.body) {
      if (getComputedStyle(a).overflowX !== 'visible' && inside(a.getBoundingClientRect())) {
        scrolled = true;
        break;
      }
      a = a.parentElement;
    }
    if (!scrolled) outside.push(name(e) + ' ' + Math.round(r.left) + '..' + Math.round(r.right) + ' ' +
      JSON.stringify((e.textContent || '').slice(0, 40)));
  }
  return { viewport: vw, scrollWidth: document.scrollingElement.scrollWidth, outside: outside.slice(0, 15) };
})()`;

// The header's Search button: its box inside the screen and the topmost element at its corners.
const SEARCH_BUTTON = `(() => {
  const b = document.querySelector('form.search button[type=submit]');
  const r = b.getBoundingClientRect();
  const vw = document.documentElement.clientWidth;
  const at = (x, y) => { const e = document.elementFromPoint(x, y); return e === b || b.contains(e); };
  return {
    box: [r.left, r.top, r.right, r.bottom].map(Math.round),
    inside: r.left >= 0 && r.right <= vw && r.width > 0 && r.height > 0,
    onTop: at(r.left + 2, r.top + 2) && at(r.right - 2, r.top + 2) && at(r.left + 2, r.bottom - 2) &&
      at(r.right - 2, r.bottom - 2),
  };
})()`;

// Per shown Copy button: the line boxes of its target's text that the button's box intersects.
const COPY_OVERLAPS = `[...document.querySelectorAll('button[data-copy]')].filter((b) => !b.hidden).map((b) => {
  const target = document.getElementById(b.dataset.copy);
  const range = document.createRange();
  range.selectNodeContents(target);
  const br = b.getBoundingClientRect();
  const hits = [...range.getClientRects()].filter((r) => r.width > 0 && r.left < br.right &&
    r.right > br.left && r.top < br.bottom && r.bottom > br.top);
  return { target: b.dataset.copy, hits: hits.length };
})`;

async function check(page: Page, shot: string, path: string): Promise<void> {
  const geometry = (await page.evaluate(GEOMETRY)) as Geometry;
  assert.equal(geometry.viewport, WIDTH, path);
  assert.ok(
    geometry.scrollWidth <= WIDTH,
    `${path}: the document is ${geometry.scrollWidth} px wide on a ${WIDTH} px screen; past its edge: ${geometry.outside.join(' | ')}`,
  );
  assert.deepEqual(geometry.outside, [], `${path}: elements past the screen's edge`);
  const search = (await page.evaluate(SEARCH_BUTTON)) as { box: number[]; inside: boolean; onTop: boolean };
  assert.ok(search.inside && search.onTop, `${path}: the Search button ${JSON.stringify(search)}`);
  const copies = (await page.evaluate(COPY_OVERLAPS)) as { target: string; hits: number }[];
  for (const c of copies) assert.equal(c.hits, 0, `${path}: the Copy button of #${c.target} covers its text`);
  await page.screenshot({ path: join(SCREENSHOTS, `dm-phone-${shot}.png`), fullPage: true });
}

for (const dialect of DIALECTS)
  describe(`web pages on a ${WIDTH} px phone screen (${dialect})`, () => {
    let served: Awaited<ReturnType<typeof servedPages>> | undefined;
    let page: Page;

    before(async () => {
      served = await servedPages(dialect, {
        long: true,
        javaScriptEnabled: true,
        viewport: { width: WIDTH, height: 844 },
      });
      page = await served.browser.context.newPage();
      page.setDefaultTimeout(30_000);
      process.stdout.write(`# phone screenshots in ${SCREENSHOTS}\n`);
    });
    after(() => served?.close());

    for (const [shot, path] of PAGES)
      it(`${shot}: ${path.slice(0, 60)} fits the screen`, async () => {
        const res = await page.goto(`${served!.base}${path}`);
        assert.equal(res?.status(), shot === 'not-found' ? 404 : 200, path);
        await check(page, shot, path);
      });

    it('the template page shows its Copy buttons (JavaScript is on) beside their text', async () => {
      await page.goto(`${served!.base}${LONG_PAGE}`);
      const copies = (await page.evaluate(COPY_OVERLAPS)) as { target: string }[];
      assert.deepEqual(copies.map((c) => c.target).sort(), ['reference', 'use-commands', 'use-config']);
      assert.equal(
        await page.locator('code#reference').textContent(),
        `${LONG}/${LONG_COLLECTION}/${LONG_TEMPLATE}:v1.1`,
      );
    });

    it('tables are stacked, not scrolled: every cell is whole on the screen with its column named', async () => {
      for (const path of [LONG_PAGE, `${LONG_PAGE}/versions/${LONG_VERSIONS[0]}`, '/registries']) {
        await page.goto(`${served!.base}${path}`);
        const tables = (await page.evaluate(
          `[...document.querySelectorAll('div.table')].map((d) => ({ id: d.querySelector('table').id, scrolls: d.scrollWidth > d.clientWidth }))`,
        )) as { id: string; scrolls: boolean }[];
        assert.ok(tables.length > 0, path);
        assert.deepEqual(
          tables.filter((t) => t.scrolls),
          [],
          `${path}: tables wider than the screen`,
        );
      }
      await page.goto(`${served!.base}${LONG_PAGE}`);
      const latest = page.locator('#versions tbody tr', { has: page.getByRole('link', { name: 'v1.1.0' }) });
      assert.equal(await latest.locator('td').nth(4).getAttribute('data-label'), 'Note');
      assert.equal(
        await page.evaluate(
          `getComputedStyle(document.querySelector('#versions tbody tr:nth-child(2) td:last-child'), '::before').content`,
        ),
        '"Note: "',
      );
    });
  });

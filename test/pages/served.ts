/**
 * The pages' app (test/pages/fixture.ts) served over HTTP on a loopback port, with a Debian
 * Chromium to read it (test/support/chromium.ts), for the browser suites (docs/pages.md, "Tests").
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Dialect } from '../server/helpers.js';
import { type LaunchedChromium, type LaunchOptions, launchChromium } from '../support/chromium.js';
import { pagesServer } from './fixture.js';

/** The pages' server on `dialect`, served on a loopback port, and a Chromium to read it with. */
export async function servedPages(
  dialect: Dialect,
  options: LaunchOptions & { long?: boolean } = {},
): Promise<{ base: string; browser: LaunchedChromium; close(): Promise<void> }> {
  const s = await pagesServer(dialect, { long: options.long ?? false });
  const http = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const server = serve({ fetch: s.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(server));
  });
  const stopServer = async () => {
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await s.close();
  };
  let browser: LaunchedChromium;
  try {
    browser = await launchChromium(options);
  } catch (error) {
    await stopServer();
    throw error;
  }
  return {
    base: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    browser,
    async close() {
      await browser.close();
      await stopServer();
    },
  };
}

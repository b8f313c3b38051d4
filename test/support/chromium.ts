/**
 * Debian's Chromium (`apt-get install chromium`) driven by playwright-core, for tests of the web
 * pages in a real browser. Never downloads a browser: when /usr/bin/chromium is missing the launch
 * fails with a message saying what to install. Each launch gets a fresh user-data directory,
 * removed on close.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface LaunchedChromium {
  context: BrowserContext;
  close(): Promise<void>;
}

export interface LaunchOptions {
  /** Default false: the pages must work without client-side JavaScript. */
  javaScriptEnabled?: boolean;
  viewport?: { width: number; height: number };
}

export async function launchChromium(options: LaunchOptions = {}): Promise<LaunchedChromium> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: the browser tests need Debian's chromium package (apt-get install -y chromium)`,
    );
  }
  const userDataDir = await mkdtemp(join(tmpdir(), 'dm-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      chromiumSandbox: false,
      args: CHROMIUM_ARGS,
      javaScriptEnabled: options.javaScriptEnabled ?? false,
      viewport: options.viewport ?? { width: 1280, height: 900 },
      timeout: 60_000,
    });
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    context,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

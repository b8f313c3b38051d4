/**
 * Shared set-up for the server tests: a real temporary SQLite file with the migrations of
 * migrations/ applied, the real app over it, and the real sources.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CreateAppDeps, createApp, type RegistryApp } from '../../server/src/api/app.js';
import { silentLogger } from '../../server/src/log.js';
import { defaultSourceFactory } from '../../server/src/service.js';
import { openStore, type Store } from '../../server/src/store/db.js';

export const FIXTURES = join(process.cwd(), 'registry-fixtures');
export const ADMIN_TOKEN = 'test-admin-token';

export interface TestServer extends RegistryApp {
  dir: string;
  store: Store;
  close(): Promise<void>;
}

export function tempDir(prefix = 'dm-registry-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function testServer(
  options: Partial<CreateAppDeps> & { githubApiUrl?: string; githubToken?: string } = {},
): TestServer {
  const dir = tempDir();
  const store = openStore(join(dir, 'registry.db'));
  const { githubApiUrl, githubToken, ...rest } = options;
  const server = createApp({
    store,
    sources: defaultSourceFactory({ githubApiUrl, githubToken, gitCacheDir: join(dir, 'git') }),
    secretKey: randomBytes(32),
    adminTokens: [ADMIN_TOKEN],
    logger: silentLogger,
    accessLog: false,
    ...rest,
  });
  return {
    ...server,
    dir,
    store,
    async close() {
      await server.service.stop();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

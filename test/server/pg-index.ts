/**
 * Indexes a directory into a registry of a PostgreSQL store the way a sync does (open the source,
 * build the index, swap it in), for the tests that need PostgreSQL holding a real index.
 */
import assert from 'node:assert/strict';
import { createMeter } from '../../client/src/source/source.js';
import { NO_KNOWN_CONTENT } from '../../server/src/indexer/build-index.js';
import { buildIndex } from '../../server/src/indexer/build-index-pool.js';
import { DirectorySource } from '../../server/src/source/directory.js';
import type { SwapMeta, SwapResult } from '../../server/src/store/contract.js';
import type { PostgresStore } from '../../server/src/store/postgres/open.js';
import { swapIndexPg } from '../../server/src/store/postgres/swap-index.js';

export async function indexDirectoryPg(
  store: PostgresStore,
  registryId: number,
  directory: string,
  extra: Partial<Pick<SwapMeta, 'signer' | 'now'>> = {},
): Promise<SwapResult> {
  const opened = await new DirectorySource({ directory }).open({
    etag: null,
    commit: null,
    meter: createMeter(),
  });
  assert.equal(opened.status, 'changed');
  if (opened.status !== 'changed') throw new Error('unreachable');
  const built = await buildIndex(opened, NO_KNOWN_CONTENT);
  return swapIndexPg(store, built, { registryId, commit: opened.commit, etag: null, now: 0, ...extra });
}

/**
 * The mappings from the store's rows to the registry API's JSON shapes (docs/server.md "HTTP
 * API"). The shapes themselves are declared once, where both sides read them:
 * client/src/wire/registry-api.ts (re-exported here for the server's modules).
 */
import { formatTemplateName } from '../../../client/src/reference/index.js';
import type { SearchResult, SyncHistory } from '../../../client/src/wire/registry-api.js';
import type { SearchPage, SyncRow } from '../store/contract.js';

export type * from '../../../client/src/wire/registry-api.js';

/** The store's search page as the API (and the pages) show it: each hit with its reference. */
export function searchResult(page: SearchPage): SearchResult {
  const { matches, ...rest } = page;
  return {
    ...rest,
    hits: matches.map((m) => {
      const [host = '', owner = '', repo = ''] = m.registry.split('/');
      return {
        registry: m.registry,
        collection: m.collection,
        name: m.name,
        reference: formatTemplateName({ host, owner, repo, collection: m.collection, template: m.name }),
        latestVersion: m.latestVersion,
        title: m.title,
        description: m.description,
      };
    }),
  };
}

export function syncHistory(rows: readonly SyncRow[]): SyncHistory {
  return {
    syncs: rows.map((r) => ({
      id: r.id,
      trigger: r.trigger,
      status: r.status,
      startedAt: new Date(r.startedAt).toISOString(),
      finishedAt: r.finishedAt === null ? null : new Date(r.finishedAt).toISOString(),
      replica: r.replica,
      apiRequests: r.apiRequests,
      error: r.error,
    })),
  };
}

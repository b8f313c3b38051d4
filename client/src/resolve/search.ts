/** `dm search`: full-text search on a registry server (docs/server.md "HTTP API"); needs `--registry-url`. */

import type { DmConfig } from '../config/config.js';
import { DmError } from '../error.js';
import { httpSignal } from '../http-limit.js';
import type { SearchHit, SearchResult } from '../wire/registry-api.js';
import { registryFailure, registryJson, registryUnreachable } from './registry-answer.js';

/** The most hits a registry server gives per page (its `limit` parameter, docs/server.md). */
export const MAX_SEARCH_LIMIT = 100;

export type { SearchHit, SearchResult };

export interface SearchOptions {
  config: DmConfig;
  collection?: string | undefined;
  registry?: string | undefined;
  limit?: number | undefined;
  page?: number | undefined;
}

export async function searchTemplates(query: string, options: SearchOptions): Promise<SearchResult> {
  const base = options.config.registryUrl;
  if (!base) {
    throw new DmError('REGISTRY_URL_REQUIRED', 'dm search needs a registry server, and none is configured', {
      category: 'usage',
      hint: 'pass --registry-url <url>, set DM_REGISTRY_URL, or set registryUrl in the config file',
    });
  }
  if (options.config.offline) {
    // Like every other offline miss (docs/client.md "Commands"): OFFLINE_MISSING, exit 5.
    throw new DmError(
      'OFFLINE_MISSING',
      'dm search needs the registry server, and --offline forbids asking it',
      {
        category: 'unreachable',
        hint: 'run dm search without --offline',
      },
    );
  }
  const url = new URL(`${base.replace(/\/+$/, '')}/api/v1/search`);
  url.searchParams.set('q', query);
  if (options.collection) url.searchParams.set('collection', options.collection);
  if (options.registry) url.searchParams.set('registry', options.registry);
  if (options.limit) url.searchParams.set('limit', String(options.limit));
  if (options.page) url.searchParams.set('page', String(options.page));
  let response: Response;
  try {
    response = await fetch(url, {
      headers: {
        accept: 'application/json',
        ...(options.config.registryToken ? { authorization: `Bearer ${options.config.registryToken}` } : {}),
      },
      signal: httpSignal(options.config.httpTimeoutMs),
    });
  } catch (error) {
    throw registryUnreachable(base, error, options.config.httpTimeoutMs);
  }
  if (!response.ok) throw await registryFailure(response, base, 'search failed');
  return registryJson<SearchResult>(response, base);
}

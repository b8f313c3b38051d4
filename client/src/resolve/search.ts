/** `dm search`: full-text search on a registry server (docs/server.md "HTTP API"); needs `--registry-url`. */

import type { DmConfig } from '../config/config.js';
import { DmError } from '../error.js';
import { httpSignal, PLAIN_HTTP_HINT } from '../http-limit.js';
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
  /** Said on a TLS failure instead of the --registry-url advice (`oci://<host>`: --plain-http). */
  tlsHint?: string | undefined;
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
    throw registryUnreachable(base, error, options.config.httpTimeoutMs, options.tlsHint);
  }
  if (!response.ok)
    throw await registryFailure(response, base, 'search failed', options.config.httpTimeoutMs);
  return registryJson<SearchResult>(response, base, options.config.httpTimeoutMs);
}

/**
 * `dm search <query> oci://<host>[/<owner>/<repo>]` (docs/oci.md "Searching an OCI registry"): a
 * host alone is a dm-registry, asked through its search API; a namespace is searched in its
 * `dm-index` artifact, every word of the query in a template's name or description.
 */
export async function searchOci(query: string, where: string, options: SearchOptions): Promise<SearchResult> {
  const match = /^oci:\/\/([^/\s]+)(?:\/([a-z0-9._-]+)\/([a-z0-9._-]+))?\/?$/.exec(where);
  if (!match) {
    throw new DmError('INVALID_ARGUMENT', `'${where}' is not an OCI registry or namespace to search`, {
      category: 'usage',
      hint: 'oci://<host> (a dm-registry) or oci://<host>/<owner>/<repo> (a namespace with a dm-index)',
    });
  }
  const [, host, owner, repo] = match as unknown as [string, string, string | undefined, string | undefined];
  const plain = options.config.oci?.plainHttp ?? false;
  if (!owner || !repo) {
    return searchTemplates(query, {
      ...options,
      config: { ...options.config, registryUrl: `${plain ? 'http' : 'https'}://${host}` },
      tlsHint: PLAIN_HTTP_HINT,
    });
  }
  const { OciClient } = await import('../oci/distribution.js');
  const { readNamespaceIndex } = await import('../oci/namespace-index.js');
  const client = new OciClient({
    host,
    plainHttp: plain,
    authFiles: options.config.oci?.authFiles ?? [],
    timeoutMs: options.config.httpTimeoutMs,
  });
  const namespace = `oci://${host}/${owner}/${repo}`;
  const index = await readNamespaceIndex(client, namespace, `${owner}/${repo}`);
  if (!index) {
    throw new DmError('OCI_NOT_FOUND', `${namespace} has no dm-index to search`, {
      category: 'not-found',
      hint: "dm push adds each version it pushes to the namespace's dm-index (docs/oci.md)",
    });
  }
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const found = index.templates.filter((t) => {
    const text = `${t.name} ${t.description ?? ''}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
  // Names that contain the query first, then by name.
  found.sort(
    (a, b) => Number(!a.name.includes(query)) - Number(!b.name.includes(query)) || (a.name < b.name ? -1 : 1),
  );
  const limit = options.limit ?? 20;
  const page = options.page ?? 1;
  const hits: SearchHit[] = found.slice((page - 1) * limit, page * limit).map((t) => {
    const slash = t.name.lastIndexOf('/');
    return {
      registry: namespace,
      collection: slash === -1 ? '' : t.name.slice(0, slash),
      name: slash === -1 ? t.name : t.name.slice(slash + 1),
      reference: `${namespace}/${t.name}`,
      latestVersion: t.versions[0] ?? null,
      title: null,
      description: t.description ?? null,
    };
  });
  const facets: SearchResult['facets'] = { collection: {}, registry: { [namespace]: found.length } };
  for (const t of found) {
    const slash = t.name.lastIndexOf('/');
    const c = slash === -1 ? '' : t.name.slice(0, slash);
    facets.collection[c] = (facets.collection[c] ?? 0) + 1;
  }
  return {
    query,
    total: found.length,
    totalIsLowerBound: false,
    page,
    limit,
    hits,
    facets,
    didYouMean: null,
  };
}

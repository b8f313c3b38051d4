/**
 * The JSON shapes of the registry API (docs/server.md "HTTP API"), one module: handlers build them, the
 * OpenAPI description documents them, clients (`--registry-url`) can import them. The store keeps
 * its own types; the mappings from them to these shapes are here.
 */
import { formatTemplateName } from '../../../client/src/reference/reference.js';
import type { QuarantineInfo } from '../store/quarantine.js';
import type { SyncRow } from '../store/reads.js';
import type { SearchPage } from '../store/search.js';

export interface FileInfo {
  path: string;
  size: number;
  sha256: string;
}

export interface Resolution {
  /** The reference as asked, in canonical form. */
  reference: string;
  /** The exact pin it resolved to: `github.com/o/r/redis:=v1.0.2`. */
  resolved: string;
  registry: string;
  collection: string;
  template: string;
  version: string;
  commit: string;
  kind: 'jinja' | 'python' | 'blueprint';
  templateFile: string;
  schemaFile: string | null;
  /** `sha256:<hex>` over the sorted `path\0sha256\n` list (docs/registry-layout.md "Digests"). */
  digest: string;
  files: FileInfo[];
  schema: unknown;
  /** Present (true) when a mirror's upstream no longer serves this version (docs/mirroring.md). */
  removedUpstream?: true;
  /** Present when the source changed this version after it was first seen (docs/integrity-store.md). */
  quarantined?: QuarantineInfo;
}

/** `GET /api/v1/registries/{id}/versions`: every version with its digest, what a mirror syncs from. */
export interface RegistryVersionList {
  registry: string;
  commit: string | null;
  versions: {
    collection: string;
    template: string;
    version: string;
    digest: string;
    /** Present when the version is quarantined here (docs/integrity-store.md): a mirror shows it too. */
    quarantined?: QuarantineInfo;
  }[];
}

/** A mirrored registry's upstream as `GET /api/v1/registries/{id}` shows it (docs/mirroring.md). */
export interface UpstreamInfo {
  url: string;
  state: 'ok' | 'unreachable' | 'unauthorized' | 'rate-limited';
  /** Since when the upstream is unreachable or refuses this mirror's credentials. */
  since?: string;
  /** Until when the upstream rate-limits this mirror. */
  until?: string;
  /** What is wrong (unreachable: `connection refused`, `HTTP 503`, …). */
  detail?: string;
  /** When the mirror last heard from the upstream about this registry; null: never. */
  checkedAt: string | null;
  /** Seconds since `checkedAt`: how stale the mirrored data may be. */
  staleSeconds: number | null;
  /** Stored versions the upstream no longer serves (still served here, flagged). */
  removedUpstream: number;
  /** Versions whose digest upstream differs from the stored one since this process started. */
  digestMismatches: number;
}

export interface BatchResolveItem {
  ref: string;
  resolution?: Resolution;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

export interface SyncInfo {
  status: string;
  lastSyncAt: string | null;
  error: string | null;
  apiRequests: number | null;
  rateLimitRemaining: number | null;
}

export interface RegistryInfo {
  id: number;
  name: string;
  source: { type: string; location: string; branch: string | null; path: string };
  visibility: 'public' | 'private';
  /** The organisation it belongs to, or null. */
  organisation: string | null;
  interval: number | null;
  commit: string | null;
  sync: SyncInfo;
  counts: { templates: number; versions: number; findings: number };
  /** Registries mirrored from an upstream registry server (source type `upstream`). */
  upstream?: UpstreamInfo;
  findings?: { code: string; severity: string; path: string; message: string }[];
}

export interface SearchHit {
  registry: string;
  collection: string;
  name: string;
  reference: string;
  latestVersion: string | null;
  title: string | null;
  description: string | null;
}

export interface SearchResult {
  query: string;
  total: number;
  /** True when more matches exist than the candidate bound; `total` is then a lower bound. */
  totalIsLowerBound: boolean;
  page: number;
  limit: number;
  hits: SearchHit[];
  facets: { collection: Record<string, number>; registry: Record<string, number> };
  /** When no template matched the words, the hits are similar names and this the most similar. */
  didYouMean: string | null;
}

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

/** `GET /api/v1/registries/{id}/syncs`: the last 100 syncs, newest first. */
export interface SyncHistory {
  syncs: {
    id: number;
    trigger: string;
    status: string;
    startedAt: string;
    finishedAt: string | null;
    /** The process that ran it, `host:pid`. */
    replica: string | null;
    apiRequests: number;
    error: string | null;
  }[];
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

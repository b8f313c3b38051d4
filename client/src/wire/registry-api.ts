/**
 * The JSON shapes of the registry API (docs/server.md "HTTP API"), as they travel: the server's
 * handlers build them (server/src/api/shapes.ts maps the store's rows to them), the OpenAPI
 * description documents them, and the client (`--registry-url`) reads them. A leaf: it imports
 * nothing, so neither side reaches into the other's internals for them.
 */

/** One file of a version that a source changed after it was first seen. */
export interface ChangedFile {
  path: string;
  old: string | null;
  new: string | null;
}

/** A version quarantined because its source changed it (docs/integrity-store.md). */
export interface QuarantineInfo {
  since: string;
  newDigest: string;
  changedFiles: ChangedFile[];
}

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

/**
 * `GET /api/v1/templates/…/versions/{version}/files?limit=&continue=`: one page of a version's files
 * in path order; `continue` (present while more follow) asks for the next page.
 */
export interface VersionFileList {
  total: number;
  files: FileInfo[];
  continue?: string;
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

/**
 * The JSON shapes of the registry API (spec/server.md §2), one module: handlers build them, the
 * OpenAPI description documents them, clients (`--registry-url`) can import them.
 */
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
  /** `sha256:<hex>` over the sorted `path\0sha256\n` list (spec/registry.md §5). */
  digest: string;
  files: FileInfo[];
  schema: unknown;
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
  interval: number | null;
  commit: string | null;
  sync: SyncInfo;
  counts: { templates: number; versions: number; findings: number };
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
}

/**
 * The registry service: registries, credentials, tokens and syncs over one store, shared by the
 * HTTP API and the CLI. Owns the caches (catalog, tokens) and invalidates them when an index is
 * swapped in or a registry comes or goes; runs scheduled syncs (per-registry interval).
 */
import { join } from 'node:path';
import { and, desc, eq, isNotNull, sql } from 'drizzle-orm';
import { DmError } from '../../client/src/error.js';
import { checkGitArguments, GitSource } from '../../client/src/source/git.js';
import { GitHubSource } from '../../client/src/source/github.js';
import { DEFAULT_SOURCE_LIMITS, type Source } from '../../client/src/source/source.js';
import type { RequestAccess } from './api/access.js';
import { TokenBook } from './api/access.js';
import type { RegistryInfo, UpstreamInfo } from './api/shapes.js';
import { Checksums, type ChecksumsOptions } from './checksums.js';
import type { IndexBuildPool } from './indexer/build-index-pool.js';
import {
  type IncrementalSource,
  recoverInterruptedSyncs,
  type SyncOutcome,
  SyncQueue,
  type SyncTrigger,
  syncRegistry,
} from './indexer/sync-registry.js';
import { mirroredRegistrySource } from './mirror/mirrored-registry.js';
import { Catalog } from './resolve/catalog.js';
import { DirectorySource } from './source/directory.js';
import { parseSourceSpec, type SourceType } from './source/source-spec.js';
import type { Store } from './store/db.js';
import { credentials, findings, registries, syncs, versions } from './store/schema.js';
import { decryptSecret, encryptSecret, hashToken, newToken } from './store/secrets.js';
import { allTokens, deleteToken, insertToken } from './store/tokens.js';
import {
  organisationList,
  organisationsOf,
  parseOrganisation,
  storedOrganisations,
} from './store/visibility.js';

export type RegistryRow = typeof registries.$inferSelect;

export interface SourceRequest {
  registryId: number;
  type: SourceType;
  location: string;
  branch: string | null;
  path: string;
  /** The decrypted credential, when the registry names one. */
  credential: string | null;
}

/** Builds the Source for a registry (tests pass one pointing at the GitHub stand-in). */
export type SourceFactory = (request: SourceRequest) => Source;

export interface DefaultSourceOptions {
  /** GitHub API base URL (GITHUB_API_URL); default https://api.github.com. */
  githubApiUrl?: string | undefined;
  /** Token for public GitHub sources (GITHUB_TOKEN): higher rate limits. */
  githubToken?: string | undefined;
  /** Where remote git repositories are fetched to. */
  gitCacheDir: string;
  fetch?: typeof fetch;
  onWarning?: (message: string, details: Record<string, unknown>) => void;
}

export function defaultSourceFactory(options: DefaultSourceOptions): SourceFactory {
  return (request) => {
    if (request.type === 'github') {
      const [, owner = '', repo = ''] = request.location.split('/');
      return new GitHubSource({
        owner,
        repo,
        branch: request.branch,
        path: request.path,
        ...(options.githubApiUrl ? { baseUrl: options.githubApiUrl } : {}),
        token: request.credential ?? options.githubToken ?? null,
        limits: {
          maxFileBytes: DEFAULT_SOURCE_LIMITS.maxFileBytes,
          maxTotalBytes: DEFAULT_SOURCE_LIMITS.maxTotalBytes,
          maxEntries: DEFAULT_SOURCE_LIMITS.maxEntries,
        },
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.onWarning ? { onWarning: options.onWarning } : {}),
      });
    }
    if (request.type === 'git') {
      return new GitSource({
        location: request.location,
        branch: request.branch,
        path: request.path,
        cacheDir: join(options.gitCacheDir, String(request.registryId)),
      });
    }
    return new DirectorySource({ directory: request.location });
  };
}

export interface AddRegistryInput {
  source: string;
  name?: string | undefined;
  branch?: string | undefined;
  path?: string | undefined;
  interval?: number | undefined;
  visibility?: 'public' | 'private' | undefined;
  /** The organisation it belongs to (store/visibility.ts); makes it private unless visibility says. */
  organisation?: string | undefined;
  credential?: string | undefined;
  webhookSecret?: string | undefined;
}

export interface ServiceDeps {
  store: Store;
  sources: SourceFactory;
  secretKey: Buffer;
  clock?: () => number;
  adminTokens?: readonly string[];
  defaultRegistry?: string | undefined;
  githubHosts?: readonly string[];
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  /** Overall deadline of one sync, ms (default SYNC_DEADLINE_MS, 10 min). */
  syncDeadlineMs?: number;
  /** The worker threads that build indexes (default: the process's shared pool). */
  indexPool?: IndexBuildPool;
  /**
   * Called after each sync (metrics), with the registry's name, or PRIVATE_LABEL for a private
   * registry (and one gone before its sync): metrics are public and never name private registries.
   */
  onSync?: (registry: string, outcome: SyncOutcome) => void;
  /** The checksum log's key, quarantine notifications and metric (docs/integrity-store.md). */
  checksums?: ChecksumsOptions;
}

/**
 * A source URL without what may carry a credential: `user:pass@`, the query (`?access_token=…`)
 * and the fragment. scp-like `git@host:path` keeps its user (a login name, not a secret).
 */
export function withoutCredentials(location: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) return location.replace(/[?#].*$/, '');
  try {
    const url = new URL(location);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.toString();
  } catch {
    return location.replace(/\/\/[^@/]*@/, '//').replace(/[?#].*$/, '');
  }
}

/** What a non-admin sees instead of a directory source's path on the server. */
export const LOCAL_DIRECTORY = 'local directory';

export interface RegistryInfoOptions {
  /** Include the findings of the last sync. */
  findings?: boolean;
  /** Who asks: only an admin sees a directory source's path. */
  viewer: Pick<RequestAccess, 'admin'>;
}

/** The `registry` metrics label of every private registry. */
export const PRIVATE_LABEL = '(private)';

const NAME_RE = /^[a-z0-9][a-z0-9.-]*(?::\d+)?\/[A-Za-z0-9][A-Za-z0-9-]*\/[A-Za-z0-9._-]+$/i;

export class RegistryService {
  /** Pull-through from upstream registries (docs/mirroring.md), when `--upstream` is given. */
  mirror: import('./mirror/mirror.js').Mirror | undefined;
  /** The mirror's store side (digest mismatches per registry, removed-upstream flags). */
  mirrorTarget: import('./mirror/store-target.js').StoreTarget | undefined;
  readonly store: Store;
  readonly catalog: Catalog;
  readonly tokens: TokenBook;
  readonly queue = new SyncQueue();
  readonly checksums: Checksums;
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(private readonly deps: ServiceDeps) {
    this.store = deps.store;
    this.clock = deps.clock ?? Date.now;
    this.catalog = new Catalog(deps.store, { defaultRegistry: deps.defaultRegistry });
    this.tokens = new TokenBook(deps.store, deps.adminTokens ?? [], this.clock);
    recoverInterruptedSyncs(deps.store, this.clock());
    this.checksums = new Checksums(
      deps.store,
      deps.checksums ?? {},
      (l, m, f) => this.log(l, m, f),
      this.clock,
    );
  }

  get defaultRegistry(): string | undefined {
    return this.catalog.defaultRegistry;
  }

  /** How source strings are read here: GitHub hosts and the configured upstreams. */
  private sourceOptions(): { githubHosts: readonly string[]; upstreams: readonly string[] } {
    return {
      githubHosts: this.deps.githubHosts ?? [],
      upstreams: this.mirror?.upstreams.map((u) => u.url) ?? [],
    };
  }

  private log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void {
    this.deps.log?.(level, message, fields);
  }

  all(): RegistryRow[] {
    return this.store.db.select().from(registries).orderBy(registries.name).all();
  }

  /** A registry by numeric id or name, if `access` may see it; otherwise not found. */
  find(idOrName: string | number, access: RequestAccess): RegistryRow {
    const text = String(idOrName);
    const row = /^\d+$/.test(text)
      ? this.store.db
          .select()
          .from(registries)
          .where(eq(registries.id, Number(text)))
          .get()
      : this.store.db.select().from(registries).where(eq(registries.name, text)).get();
    if (!row || !access.canRead(row)) {
      throw new DmError('REGISTRY_NOT_FOUND', `no registry ${text} on this server`, {
        category: 'not-found',
        details: { registry: text },
      });
    }
    return row;
  }

  add(input: AddRegistryInput): RegistryRow {
    if (typeof input.source !== 'string' || input.source === '') {
      throw new DmError('INVALID_REGISTRY', 'source is required', { category: 'invalid-input' });
    }
    // Every source field is checked before it can reach git (options, branch names, '..').
    checkGitArguments({ location: input.source, branch: input.branch ?? null, path: input.path ?? '' });
    const spec = parseSourceSpec(input.source, this.sourceOptions());
    checkGitArguments({ branch: spec.branch, path: spec.path });
    const name = input.name ?? spec.defaultName;
    if (!NAME_RE.test(name)) {
      throw new DmError('INVALID_REGISTRY', `registry name '${name}' must look like <host>/<owner>/<repo>`, {
        category: 'invalid-input',
      });
    }
    const organisation =
      input.organisation === undefined ? null : parseOrganisation(input.organisation, 'organisation');
    const visibility = input.visibility ?? (organisation === null ? 'public' : 'private');
    if (visibility !== 'public' && visibility !== 'private') {
      throw new DmError(
        'INVALID_REGISTRY',
        `visibility must be public or private, not '${String(visibility)}'`,
        {
          category: 'invalid-input',
        },
      );
    }
    if (input.interval !== undefined && (!Number.isInteger(input.interval) || input.interval < 60)) {
      throw new DmError('INVALID_REGISTRY', 'interval must be a whole number of seconds, at least 60', {
        category: 'invalid-input',
      });
    }
    if (
      input.credential &&
      !this.store.db.select().from(credentials).where(eq(credentials.name, input.credential)).get()
    ) {
      throw new DmError('CREDENTIAL_NOT_FOUND', `no credential named '${input.credential}'`, {
        category: 'invalid-input',
      });
    }
    if (this.store.db.select({ id: registries.id }).from(registries).where(eq(registries.name, name)).get()) {
      throw new DmError('REGISTRY_EXISTS', `a registry named ${name} already exists`, {
        category: 'conflict',
      });
    }
    const row = this.store.db
      .insert(registries)
      .values({
        name,
        sourceType: spec.type,
        source: spec.location,
        branch: input.branch ?? spec.branch,
        path: (input.path ?? spec.path).replace(/^\/+|\/+$/g, ''),
        // A mirrored registry is synced on its interval; by default as often as floating
        // references are revalidated (--upstream-ttl, at least a minute).
        intervalSeconds:
          input.interval ??
          (spec.type === 'upstream'
            ? Math.max(60, Math.round((this.mirror?.ttlMs ?? 300_000) / 1000))
            : null),
        visibility,
        organisation,
        credential: input.credential ?? null,
        webhookSecret: input.webhookSecret ? encryptSecret(this.deps.secretKey, input.webhookSecret) : null,
        createdAt: this.clock(),
      })
      .returning()
      .get();
    this.catalog.invalidate();
    this.log('info', 'registry added', { registry: name, source: spec.type });
    return row;
  }

  /**
   * Adds a registry, or points the registry of the same name at the source given (`dm-registry
   * start --index`): the source is parsed and the name checked as `add` does, a changed source
   * forgets its conditional-request ETag, and the caches are dropped.
   */
  addOrUpdate(input: AddRegistryInput): RegistryRow {
    const spec = parseSourceSpec(input.source, this.sourceOptions());
    const name = input.name ?? spec.defaultName;
    const existing = this.store.db.select().from(registries).where(eq(registries.name, name)).get();
    if (!existing) return this.add({ ...input, name });
    const source = {
      sourceType: spec.type,
      source: spec.location,
      branch: input.branch ?? spec.branch,
      path: (input.path ?? spec.path).replace(/^\/+|\/+$/g, ''),
    };
    const changed = (Object.keys(source) as (keyof typeof source)[]).some((k) => source[k] !== existing[k]);
    if (!changed) return existing;
    const row = this.store.db
      .update(registries)
      .set({ ...source, etag: null })
      .where(eq(registries.id, existing.id))
      .returning()
      .get();
    this.catalog.invalidate();
    this.log('info', 'registry source changed', { registry: name, source: spec.type });
    return row ?? existing;
  }

  remove(id: number): void {
    const row = this.store.db.delete(registries).where(eq(registries.id, id)).returning().get();
    if (!row) throw new DmError('REGISTRY_NOT_FOUND', `no registry ${id}`, { category: 'not-found' });
    this.store.sqlite.exec(
      'DELETE FROM files WHERE NOT EXISTS (SELECT 1 FROM version_files vf WHERE vf.sha256 = files.sha256) AND NOT EXISTS (SELECT 1 FROM registries r WHERE r.registry_yaml_sha256 = files.sha256)',
    );
    this.catalog.invalidate();
    this.log('info', 'registry removed', { registry: row.name });
  }

  storeCredential(name: string, secret: string, kind = 'token'): void {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) {
      throw new DmError(
        'INVALID_CREDENTIAL',
        `credential name '${name}' must match [A-Za-z0-9][A-Za-z0-9._-]*`,
        {
          category: 'invalid-input',
        },
      );
    }
    if (typeof secret !== 'string' || secret === '' || secret.length > 10_000) {
      throw new DmError('INVALID_CREDENTIAL', 'secret must be a non-empty string', {
        category: 'invalid-input',
      });
    }
    const now = this.clock();
    const value = encryptSecret(this.deps.secretKey, secret);
    this.store.db
      .insert(credentials)
      .values({ name, kind, secret: value, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({ target: credentials.name, set: { secret: value, kind, updatedAt: now } })
      .run();
  }

  private credentialFor(row: RegistryRow): string | null {
    if (!row.credential) return null;
    const c = this.store.db.select().from(credentials).where(eq(credentials.name, row.credential)).get();
    if (!c)
      throw new DmError('CREDENTIAL_NOT_FOUND', `registry ${row.name} names a missing credential`, {
        category: 'error',
      });
    return decryptSecret(this.deps.secretKey, c.secret);
  }

  webhookSecretOf(row: RegistryRow): string | null {
    return row.webhookSecret ? decryptSecret(this.deps.secretKey, row.webhookSecret) : null;
  }

  /**
   * Creates a token (printed once, stored hashed); `expiresAt` epoch ms or null for never. A read
   * token reads one registry, the registries of `organisations`, or (neither) every registry.
   */
  createToken(
    options: (
      | { admin: true }
      | { admin: false; registry: string | null; organisations?: readonly string[] | undefined }
    ) & {
      expiresAt?: number | null;
    },
  ): string {
    const token = newToken();
    let registryId: number | null = null;
    if (!options.admin && options.registry !== null) {
      const row = this.store.db.select().from(registries).where(eq(registries.name, options.registry)).get();
      if (!row)
        throw new DmError('REGISTRY_NOT_FOUND', `no registry ${options.registry}`, { category: 'not-found' });
      registryId = row.id;
    }
    insertToken(this.store, {
      hash: hashToken(token),
      role: options.admin ? 'admin' : 'read',
      registryId,
      organisations: options.admin
        ? null
        : storedOrganisations(organisationList(options.organisations ?? [], 'organisations')),
      createdAt: this.clock(),
      expiresAt: options.expiresAt ?? null,
    });
    this.tokens.invalidate();
    return token;
  }

  /** The tokens (never their values): id, role, registry, organisations, created, expires, last used. */
  listTokens(): {
    id: number;
    role: string;
    registry: string | null;
    organisations: string[];
    createdAt: number;
    expiresAt: number | null;
    lastUsedAt: number | null;
  }[] {
    const names = new Map(this.all().map((r) => [r.id, r.name]));
    return allTokens(this.store).map((t) => ({
      id: t.id,
      role: t.role,
      registry:
        t.registryId !== null
          ? (names.get(t.registryId) ?? null)
          : t.role === 'read' && !t.organisations
            ? '*'
            : null,
      organisations: organisationsOf(t.organisations),
      createdAt: t.createdAt,
      expiresAt: t.expiresAt,
      lastUsedAt: t.lastUsedAt,
    }));
  }

  /** Revokes a token given by its id or by the token itself; throws not found. */
  revokeToken(idOrToken: string): void {
    const done = /^\d+$/.test(idOrToken)
      ? deleteToken(this.store, { id: Number(idOrToken) })
      : deleteToken(this.store, { hash: hashToken(idOrToken) });
    if (!done) {
      throw new DmError('TOKEN_NOT_FOUND', 'no such token (give its id from `token list`, or the token)', {
        category: 'not-found',
      });
    }
    this.tokens.invalidate();
  }

  /**
   * Runs (or joins) a sync of a registry; serialised per registry. Never rejects: whatever fails
   * (the registry deleted meanwhile, a credential that cannot be decrypted, the source, the
   * swap) ends as a `failed` outcome, in the sync status and in a log line, so a sync started in
   * the background (`void service.sync(…)`) cannot take the process down.
   */
  sync(
    id: number,
    trigger: SyncTrigger,
    hooks: { beforeSwap?: () => Promise<void> | void; midSwap?: () => void; afterSwap?: () => void } = {},
  ): Promise<SyncOutcome> {
    return this.queue.run(id, async () => {
      let name = String(id);
      let visibility = 'private';
      let outcome: SyncOutcome;
      try {
        outcome = await syncRegistry(
          this.store,
          id,
          (row) => {
            name = row.name;
            visibility = row.visibility;
            if (row.sourceType === 'upstream') return this.mirroredSource(row);
            return this.deps.sources({
              registryId: row.id,
              type: row.sourceType as SourceType,
              location: row.source,
              branch: row.branch,
              path: row.path,
              credential: this.credentialFor(row),
            });
          },
          {
            trigger,
            clock: this.clock,
            ...(this.deps.syncDeadlineMs ? { deadlineMs: this.deps.syncDeadlineMs } : {}),
            ...(this.deps.indexPool ? { indexPool: this.deps.indexPool } : {}),
            onSwap: () => this.catalog.invalidate(),
            signer: this.checksums.signer,
            onQuarantine: (events) =>
              this.checksums.quarantined(events, visibility === 'public' ? name : PRIVATE_LABEL),
            ...(hooks.beforeSwap ? { beforeSwap: hooks.beforeSwap } : {}),
            ...(hooks.midSwap ? { midSwap: hooks.midSwap } : {}),
            ...(hooks.afterSwap ? { afterSwap: hooks.afterSwap } : {}),
          },
        );
      } catch (error) {
        // syncRegistry records its own failures; this is the database failing under it.
        outcome = {
          syncId: null,
          registryId: id,
          status: 'failed',
          commit: null,
          apiRequests: 0,
          rateLimitRemaining: null,
          error: {
            code: error instanceof DmError ? error.code : 'SYNC_FAILED',
            message: error instanceof Error ? error.message : String(error),
          },
        };
      }
      this.log(outcome.status === 'failed' ? 'warn' : 'info', 'sync finished', {
        registry: name,
        trigger,
        status: outcome.status,
        commit: outcome.commit,
        apiRequests: outcome.apiRequests,
        rateLimitRemaining: outcome.rateLimitRemaining,
        ...(outcome.error ? { error: `${outcome.error.code}: ${outcome.error.message}` } : {}),
      });
      try {
        this.deps.onSync?.(visibility === 'public' ? name : PRIVATE_LABEL, outcome);
      } catch (error) {
        this.log('error', 'sync bookkeeping failed', { registry: name, error: String(error) });
      }
      return outcome;
    });
  }

  /** The incremental source of a registry mirrored from an upstream (docs/mirroring.md). */
  private mirroredSource(row: RegistryRow): IncrementalSource {
    const mirror = this.mirror;
    const upstream = mirror?.upstreamFor(row.source);
    if (!mirror || !upstream || !this.mirrorTarget) {
      throw new DmError(
        'UPSTREAM_NOT_CONFIGURED',
        `registry ${row.name} mirrors ${withoutCredentials(row.source)}, which is not an --upstream of this server`,
        { category: 'usage' },
      );
    }
    const target = this.mirrorTarget;
    const source = mirroredRegistrySource({
      store: this.store,
      registry: { id: row.id, name: row.name, visibility: row.visibility },
      upstream,
      pullThrough: mirror.pullThrough,
      onMismatch: (m) => target.reportMismatch(m),
      onPrivate: () => {
        this.catalog.invalidate();
        this.log('warn', 'mirrored registry made private: the upstream serves it privately', {
          registry: row.name,
        });
      },
    });
    return {
      description: source.description,
      update: async (options) => {
        const result = await source.update(options);
        mirror.noteHeard(row.name);
        return result;
      },
    };
  }

  /** Starts the scheduler: every 15 s, registries whose interval has passed are synced. */
  startScheduler(tickMs = 15_000): void {
    // Tokens created or revoked elsewhere (the CLI, another replica) are seen within a second.
    this.tokens.watch(1000, (error) => this.log('error', 'token refresh failed', { error: String(error) }));
    this.timer = setInterval(() => {
      if (this.stopping) return;
      const now = this.clock();
      for (const row of this.all()) {
        if (!row.intervalSeconds || this.queue.isRunning(row.id)) continue;
        if (row.lastSyncAt === null || now - row.lastSyncAt >= row.intervalSeconds * 1000) {
          void this.sync(row.id, 'schedule');
        }
      }
    }, tickMs);
    this.timer.unref();
  }

  /** Stops scheduling and waits for the syncs in flight. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.queue.idle();
    this.tokens.stop();
    this.checksums.notifier.stop();
  }

  /** A mirrored registry's upstream: its state, and how stale what the mirror holds may be. */
  private upstreamInfo(row: RegistryRow): UpstreamInfo {
    const upstream = this.mirror?.upstreamFor(row.source);
    const heard = [
      this.mirror?.heardAt(row.name),
      row.lastSyncStatus === 'succeeded' || row.lastSyncStatus === 'unchanged' ? row.lastSyncAt : null,
    ].filter((t): t is number => typeof t === 'number');
    const checkedAt = heard.length > 0 ? Math.max(...heard) : null;
    const removed =
      this.store.db
        .select({ n: sql<number>`count(*)` })
        .from(versions)
        .where(and(eq(versions.registryId, row.id), isNotNull(versions.removedUpstreamAt)))
        .get()?.n ?? 0;
    const state = upstream?.state();
    const url = upstream?.url ?? withoutCredentials(row.source).slice(0, -(row.name.length + 1));
    return {
      url,
      ...(state === undefined
        ? { state: 'unreachable' as const, detail: 'not an --upstream of this server' }
        : state.state === 'ok'
          ? { state: 'ok' as const }
          : state.state === 'unreachable'
            ? { state: 'unreachable' as const, since: state.since, detail: state.detail }
            : state.state === 'unauthorized'
              ? { state: 'unauthorized' as const, since: state.since, detail: `HTTP ${state.status}` }
              : { state: 'rate-limited' as const, until: state.until }),
      checkedAt: checkedAt === null ? null : new Date(checkedAt).toISOString(),
      staleSeconds: checkedAt === null ? null : Math.max(0, Math.floor((this.clock() - checkedAt) / 1000)),
      removedUpstream: removed,
      digestMismatches: this.mirrorTarget?.mismatchesOf(row.name) ?? 0,
    };
  }

  /**
   * A registry as the API and the pages show it. Only an admin sees where a directory source is
   * on the server's disk: others see `local directory`, in the location and in a sync error.
   */
  info(row: RegistryRow, options: RegistryInfoOptions): RegistryInfo {
    const hidePath = row.sourceType === 'directory' && !options.viewer.admin;
    const shown = (text: string | null) =>
      text === null || !hidePath || row.source === '' ? text : text.split(row.source).join(LOCAL_DIRECTORY);
    const last = this.store.db
      .select()
      .from(syncs)
      .where(eq(syncs.registryId, row.id))
      .orderBy(desc(syncs.id))
      .limit(1)
      .get();
    const info: RegistryInfo = {
      id: row.id,
      name: row.name,
      source: {
        type: row.sourceType,
        location: hidePath
          ? LOCAL_DIRECTORY
          : row.sourceType === 'directory'
            ? row.source
            : withoutCredentials(row.source),
        branch: row.branch,
        path: row.path,
      },
      visibility: row.visibility as 'public' | 'private',
      organisation: row.organisation,
      interval: row.intervalSeconds,
      commit: row.commit,
      sync: {
        status: row.lastSyncStatus,
        lastSyncAt: row.lastSyncAt === null ? null : new Date(row.lastSyncAt).toISOString(),
        error: shown(row.lastSyncError),
        // A directory is read without any API: no request count to show.
        apiRequests: row.sourceType === 'directory' ? null : (last?.apiRequests ?? null),
        rateLimitRemaining: last?.rateLimitRemaining ?? null,
      },
      counts: { templates: row.templateCount, versions: row.versionCount, findings: row.findingCount },
    };
    if (row.sourceType === 'upstream') info.upstream = this.upstreamInfo(row);
    if (options.findings) {
      info.findings = this.store.db
        .select({
          code: findings.code,
          severity: findings.severity,
          path: findings.path,
          message: findings.message,
        })
        .from(findings)
        .where(eq(findings.registryId, row.id))
        .orderBy(findings.path, findings.code)
        .all();
    }
    return info;
  }
}

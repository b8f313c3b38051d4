/**
 * The registry service: registries, credentials, tokens and syncs over one store, shared by the
 * HTTP API and the CLI. Owns the caches (catalog, tokens) and invalidates them when an index is
 * swapped in or a registry comes or goes; runs scheduled syncs (per-registry interval).
 */
import { join } from 'node:path';
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
  failedOutcome,
  type IncrementalSource,
  recoverInterruptedSyncs,
  type SyncOutcome,
  SyncQueue,
  type SyncTrigger,
  syncRegistry,
} from './indexer/sync-registry.js';
import { mirroredRegistrySource } from './mirror/mirrored-registry.js';
import { Catalog } from './resolve/catalog.js';
import { commitShown, DirectorySource } from './source/directory.js';
import { parseSourceSpec, type SourceType } from './source/source-spec.js';
import type { QuarantineEvent } from './store/first-seen.js';
import { GenerationWatch } from './store/generation-watch.js';
import { replicaName } from './store/replica.js';
import { decryptSecret, encryptSecret, hashToken, newToken } from './store/secrets.js';
import {
  isPostgres,
  type RegistryRow,
  type ServiceStore,
  type StoreHandle,
  serviceStoreOf,
} from './store/service-store.js';
import { SyncLeases } from './store/sync-lease.js';
import {
  organisationList,
  organisationsOf,
  parseOrganisation,
  storedOrganisations,
} from './store/visibility.js';

export type { RegistryRow };

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

/** A registry that a pull-through created and nothing registered: it has no interval. */
function pulledThroughOnly(row: RegistryRow): boolean {
  return row.sourceType === 'upstream' && row.intervalSeconds === null;
}

/** A registry's source columns from its parsed source and the branch and path given. */
function sourceColumns(
  spec: ReturnType<typeof parseSourceSpec>,
  input: AddRegistryInput,
): Pick<RegistryRow, 'sourceType' | 'source' | 'branch' | 'path'> {
  return {
    sourceType: spec.type,
    source: spec.location,
    branch: input.branch ?? spec.branch,
    path: (input.path ?? spec.path).replace(/^\/+|\/+$/g, ''),
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
  /** The opened store, SQLite (db.ts) or PostgreSQL (postgres.ts). */
  store: StoreHandle;
  sources: SourceFactory;
  secretKey: Buffer;
  clock?: () => number;
  adminTokens?: readonly string[];
  defaultRegistry?: string | undefined;
  githubHosts?: readonly string[];
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  /** How long a sync lease lasts without a heartbeat, ms (PostgreSQL; default 15 s). */
  syncLeaseTtlMs?: number;
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
  readonly store: StoreHandle;
  /** The store's queries (store/service-store.ts). */
  readonly data: ServiceStore;
  readonly catalog: Catalog;
  readonly tokens: TokenBook;
  readonly queue = new SyncQueue();
  /** One sync per registry across replicas (PostgreSQL only; store/sync-lease.ts). */
  private readonly leases: SyncLeases | undefined;
  /**
   * Drops cached answers and loads the search's rows when an index is swapped in by another
   * process: another replica on PostgreSQL, `dm-registry bundle import` or `index` on SQLite.
   */
  private readonly generations: GenerationWatch;
  readonly checksums: Checksums;
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(private readonly deps: ServiceDeps) {
    this.store = deps.store;
    this.data = serviceStoreOf(deps.store);
    this.clock = deps.clock ?? Date.now;
    this.catalog = new Catalog(this.data.catalog, { defaultRegistry: deps.defaultRegistry });
    this.tokens = new TokenBook(this.data.tokens, deps.adminTokens ?? [], this.clock);
    if (isPostgres(deps.store)) {
      this.leases = new SyncLeases(deps.store, replicaName(), { ttlMs: deps.syncLeaseTtlMs ?? 15_000 });
    }
    this.generations = new GenerationWatch(this.data.registries.generations, (_ids, generations) => {
      this.catalog.invalidate();
      void this.data.reads.warm(generations);
    });
    this.recovered = recoverInterruptedSyncs(this.data, this.clock());
    // Nothing awaits it before the first sync; a failure is the first sync's to report.
    this.recovered.catch(() => {});
    this.checksums = new Checksums(
      this.data.checksums,
      deps.checksums ?? {},
      (l, m, f) => this.log(l, m, f),
      this.clock,
    );
  }

  /** Loads the search's rows of every registry's current generation. Never rejects. */
  async warmSearch(): Promise<void> {
    try {
      await this.data.reads.warm(await this.data.registries.generations());
    } catch (error) {
      this.log('warn', 'search rows not loaded', { error: String(error) });
    }
  }

  /** Syncs a stopped process left `running`, marked `interrupted` at construction. */
  readonly recovered: Promise<number>;

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

  all(): Promise<RegistryRow[]> {
    return this.data.registries.list();
  }

  /** A registry by numeric id or name, if `access` may see it; otherwise not found. */
  async find(idOrName: string | number, access: RequestAccess): Promise<RegistryRow> {
    const text = String(idOrName);
    const row = /^\d+$/.test(text)
      ? await this.data.registries.byId(Number(text))
      : await this.data.registries.byName(text);
    if (!row || !access.canRead(row)) {
      throw new DmError('REGISTRY_NOT_FOUND', `no registry ${text} on this server`, {
        category: 'not-found',
        details: { registry: text },
      });
    }
    return row;
  }

  async add(input: AddRegistryInput): Promise<RegistryRow> {
    return (await this.register(input)).row;
  }

  /**
   * Adds a registry (`POST /api/v1/registries`; `created`), or makes one that a pull-through created
   * a whole mirror when `input.source` is `<upstream>/<name>` (not `created`: the same registry,
   * with what it holds, now synced on its interval; docs/mirroring.md "Mirroring a whole registry").
   * Any other registry of that name is a conflict.
   */
  async register(input: AddRegistryInput): Promise<{ row: RegistryRow; created: boolean }> {
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
    if (input.credential && (await this.data.credentials.secret(input.credential)) === undefined) {
      throw new DmError('CREDENTIAL_NOT_FOUND', `no credential named '${input.credential}'`, {
        category: 'invalid-input',
      });
    }
    const existing = await this.data.registries.byName(name);
    if (existing && pulledThroughOnly(existing)) {
      if (spec.type !== 'upstream') {
        throw new DmError(
          'REGISTRY_EXISTS',
          `registry ${name} exists, pulled through from ${existing.source}: register source '${existing.source}' to mirror it whole, or delete it first to index it from another source`,
          { category: 'conflict' },
        );
      }
      if (
        (input.visibility !== undefined && visibility !== existing.visibility) ||
        (input.organisation !== undefined && organisation !== existing.organisation)
      ) {
        throw new DmError(
          'REGISTRY_EXISTS',
          `registry ${name} exists, pulled through as ${existing.visibility}${existing.organisation === null ? '' : ` of ${existing.organisation}`}: register it without visibility and organisation to mirror it whole as it is`,
          { category: 'conflict' },
        );
      }
      return {
        row: await this.mirrorWhole(existing, sourceColumns(spec, input), input.interval),
        created: false,
      };
    }
    if (existing) {
      throw new DmError('REGISTRY_EXISTS', `a registry named ${name} already exists`, {
        category: 'conflict',
      });
    }
    const row = await this.data.registries.insert({
      name,
      ...sourceColumns(spec, input),
      intervalSeconds: input.interval ?? (spec.type === 'upstream' ? this.mirrorInterval() : null),
      visibility,
      organisation,
      credential: input.credential ?? null,
      webhookSecret: input.webhookSecret ? encryptSecret(this.deps.secretKey, input.webhookSecret) : null,
      createdAt: this.clock(),
    });
    this.catalog.invalidate();
    this.log('info', 'registry added', { registry: name, source: spec.type });
    return { row, created: true };
  }

  /**
   * Adds a registry, or points the registry of the same name at the source given (`dm-registry
   * start --index`): the source is parsed and the name checked as `add` does, a changed source
   * forgets its conditional-request ETag, a registry only pulled through so far becomes mirrored
   * whole (an interval, the ETag forgotten), and the caches are dropped.
   */
  async addOrUpdate(input: AddRegistryInput): Promise<RegistryRow> {
    const spec = parseSourceSpec(input.source, this.sourceOptions());
    const name = input.name ?? spec.defaultName;
    const existing = await this.data.registries.byName(name);
    if (!existing) return this.add({ ...input, name });
    const source = sourceColumns(spec, input);
    if (spec.type === 'upstream' && pulledThroughOnly(existing)) {
      return this.mirrorWhole(existing, source, input.interval);
    }
    const changed = (Object.keys(source) as (keyof typeof source)[]).some((k) => source[k] !== existing[k]);
    if (!changed) return existing;
    const row = await this.data.registries.updateSource(existing.id, source);
    this.catalog.invalidate();
    this.log('info', 'registry source changed', { registry: name, source: spec.type });
    return row ?? existing;
  }

  /**
   * A registry so far only pulled through, mirrored whole from now on (`--index` or `POST
   * /registries` of `<upstream>/<name>`): it keeps what it holds, gets an eager mirror's interval,
   * and its version list's ETag (of a revalidation of what it held) is forgotten, so its next sync
   * pulls every version.
   */
  private async mirrorWhole(
    existing: RegistryRow,
    source: Pick<RegistryRow, 'sourceType' | 'source' | 'branch' | 'path'>,
    interval: number | undefined,
  ): Promise<RegistryRow> {
    const row = await this.data.registries.updateSource(existing.id, {
      ...source,
      intervalSeconds: interval ?? this.mirrorInterval(),
    });
    this.catalog.invalidate();
    this.log('info', 'registry mirrored whole from now on', {
      registry: existing.name,
      source: source.sourceType,
    });
    return row ?? existing;
  }

  /**
   * The default interval of a registry mirrored whole: as often as floating references are
   * revalidated (--upstream-ttl, at least a minute).
   */
  private mirrorInterval(): number {
    return Math.max(60, Math.round((this.mirror?.ttlMs ?? 300_000) / 1000));
  }

  async remove(id: number): Promise<void> {
    const row = await this.data.registries.delete(id);
    if (!row) throw new DmError('REGISTRY_NOT_FOUND', `no registry ${id}`, { category: 'not-found' });
    this.catalog.invalidate();
    this.log('info', 'registry removed', { registry: row.name });
  }

  async storeCredential(name: string, secret: string, kind = 'token'): Promise<void> {
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
    await this.data.credentials.upsert(name, kind, encryptSecret(this.deps.secretKey, secret), now);
  }

  private async credentialFor(row: RegistryRow): Promise<string | null> {
    if (!row.credential) return null;
    const secret = await this.data.credentials.secret(row.credential);
    if (secret === undefined)
      throw new DmError('CREDENTIAL_NOT_FOUND', `registry ${row.name} names a missing credential`, {
        category: 'error',
      });
    return decryptSecret(this.deps.secretKey, secret);
  }

  webhookSecretOf(row: RegistryRow): string | null {
    return row.webhookSecret ? decryptSecret(this.deps.secretKey, row.webhookSecret) : null;
  }

  /**
   * Creates a token (printed once, stored hashed); `expiresAt` epoch ms or null for never. A read
   * token reads one registry, the registries of `organisations`, or (neither) every registry.
   */
  async createToken(
    options: (
      | { admin: true }
      | { admin: false; registry: string | null; organisations?: readonly string[] | undefined }
    ) & {
      expiresAt?: number | null;
    },
  ): Promise<string> {
    const token = newToken();
    let registryId: number | null = null;
    if (!options.admin && options.registry !== null) {
      const row = await this.data.registries.byName(options.registry);
      if (!row)
        throw new DmError('REGISTRY_NOT_FOUND', `no registry ${options.registry}`, { category: 'not-found' });
      registryId = row.id;
    }
    await this.data.tokens.insert({
      hash: hashToken(token),
      role: options.admin ? 'admin' : 'read',
      registryId,
      organisations: options.admin
        ? null
        : storedOrganisations(organisationList(options.organisations ?? [], 'organisations')),
      createdAt: this.clock(),
      expiresAt: options.expiresAt ?? null,
    });
    await this.tokens.reload();
    return token;
  }

  /** The tokens (never their values): id, role, registry, organisations, created, expires, last used. */
  async listTokens(): Promise<
    {
      id: number;
      role: string;
      registry: string | null;
      organisations: string[];
      createdAt: number;
      expiresAt: number | null;
      lastUsedAt: number | null;
    }[]
  > {
    const names = new Map((await this.all()).map((r) => [r.id, r.name]));
    return (await this.data.tokens.all()).map((t) => ({
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
  async revokeToken(idOrToken: string): Promise<void> {
    const done = /^\d+$/.test(idOrToken)
      ? await this.data.tokens.delete({ id: Number(idOrToken) })
      : await this.data.tokens.delete({ hash: hashToken(idOrToken) });
    if (!done) {
      throw new DmError('TOKEN_NOT_FOUND', 'no such token (give its id from `token list`, or the token)', {
        category: 'not-found',
      });
    }
    await this.tokens.reload();
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
      const leases = this.leases;
      if (!leases) return this.syncOnce(id, trigger, hooks);
      // Across replicas (PostgreSQL): under the registry's lease, one sync at a time, triggers
      // arriving meanwhile coalesced into one more round (store/sync-lease.ts).
      let outcome: SyncOutcome | undefined;
      try {
        await leases.run(id, async () => {
          // Holding the lease, no live process is syncing this registry: a `running` row is dead.
          await this.data.syncs.interruptRunning(id, this.clock());
          outcome = await this.syncOnce(id, trigger, hooks);
        });
      } catch (error) {
        const exists = await this.data.registries.byId(id).then(
          (row) => row !== undefined,
          () => true,
        );
        if (exists) {
          outcome = failedOutcome(id, error);
          this.log('warn', 'sync lease failed', { registryId: id, error: String(error) });
        } else {
          // Deleted meanwhile (its lease row cannot refer to it): answered as on SQLite, where
          // the sync itself finds no registry (REGISTRY_NOT_FOUND), writes nothing and logs it.
          outcome = await this.syncOnce(id, trigger, hooks);
        }
      }
      if (!outcome) {
        this.log('info', 'sync coalesced: another replica is syncing the registry', {
          registryId: id,
          trigger,
        });
        return { ...failedOutcome(id, null), status: 'coalesced' };
      }
      return outcome;
    });
  }

  private async syncOnce(
    id: number,
    trigger: SyncTrigger,
    hooks: { beforeSwap?: () => Promise<void> | void; midSwap?: () => void; afterSwap?: () => void },
  ): Promise<SyncOutcome> {
    let name = String(id);
    let visibility = 'private';
    let outcome: SyncOutcome;
    try {
      await this.recovered.catch(() => 0);
      outcome = await syncRegistry(
        this.data,
        id,
        async (row) => {
          name = row.name;
          visibility = row.visibility;
          if (row.sourceType === 'upstream') return this.mirroredSource(row);
          return this.deps.sources({
            registryId: row.id,
            type: row.sourceType as SourceType,
            location: row.source,
            branch: row.branch,
            path: row.path,
            credential: await this.credentialFor(row),
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
      // The search's rows of the new generation are loaded before the sync is reported done
      // (searches meanwhile are answered from the database): the first search after it waits for
      // no load (docs/server.md, "Store").
      if (outcome.status === 'succeeded') await this.warmSearch();
    } catch (error) {
      // syncRegistry records its own failures; this is the database failing under it.
      outcome = failedOutcome(id, error);
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
  }

  /**
   * Quarantines a mirror opened without a swap (its first-seen record disagreeing with what it
   * added, or the upstream's quarantine taken over): announced like a sync's (log line, metric,
   * webhooks; docs/integrity-store.md §6). Never throws.
   */
  mirrorQuarantined(events: readonly QuarantineEvent[]): void {
    if (events.length === 0) return;
    this.catalog.invalidate();
    const byRegistry = new Map<string, QuarantineEvent[]>();
    for (const e of events) byRegistry.set(e.registry, [...(byRegistry.get(e.registry) ?? []), e]);
    for (const [name, list] of byRegistry) {
      void this.data.registries.byName(name).then(
        (row) => this.checksums.quarantined(list, row?.visibility === 'public' ? name : PRIVATE_LABEL),
        (error: unknown) => this.log('error', 'quarantine bookkeeping failed', { error: String(error) }),
      );
    }
  }

  /**
   * Revalidates the versions a mirror holds of a registry it only pulls through (source type
   * `upstream`, no interval): one sync of the registry, limited to what it holds, which takes the
   * upstream's acceptances, quarantines, reverts and removals the way an eager mirror's sync does
   * (docs/mirroring.md). Skipped for other registries, while the upstream is known down, and when
   * the registry was synced within the upstream TTL (by another replica, say). Never throws.
   */
  async revalidateHeld(name: string): Promise<void> {
    if (this.stopping || !this.mirror) return;
    try {
      const row = await this.data.registries.byName(name);
      if (row?.sourceType !== 'upstream' || row.intervalSeconds !== null) return;
      if (this.mirror.upstreamFor(row.source)?.isOpen() !== false) return;
      if (row.lastSyncAt !== null && this.clock() - row.lastSyncAt < this.mirror.ttlMs) return;
      if (this.queue.isRunning(row.id)) return;
      await this.sync(row.id, 'revalidate');
    } catch (error) {
      this.log('error', 'revalidating held versions failed', { registry: name, error: String(error) });
    }
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
      store: this.data.mirror,
      reads: this.data.reads,
      registry: { id: row.id, name: row.name, visibility: row.visibility },
      upstream,
      pullThrough: mirror.pullThrough,
      // A registry created by pull-through has no interval: only what it holds is revalidated.
      heldOnly: row.intervalSeconds === null,
      onQuarantined: (q) => target.upstreamQuarantined?.(q),
      onReverted: (count) => {
        this.catalog.invalidate();
        this.log('info', 'quarantines closed: the upstream serves the first-seen content again', {
          registry: row.name,
          count,
        });
      },
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

  /**
   * Starts the background work: the scheduler (every 15 s, registries whose interval has passed
   * are synced), the token watch and the generation watch (which loads the search's rows at start).
   */
  startScheduler(tickMs = 15_000): void {
    void this.generations
      .start((generations) => void this.data.reads.warm(generations))
      .catch((error: unknown) => this.log('error', 'generation watch failed', { error: String(error) }));
    // Tokens created or revoked elsewhere (the CLI, another replica) are seen within a second.
    this.tokens.watch(1000, (error) => this.log('error', 'token refresh failed', { error: String(error) }));
    this.timer = setInterval(() => {
      if (this.stopping) return;
      void this.all().then(
        (rows) => {
          const now = this.clock();
          for (const row of rows) {
            if (!row.intervalSeconds || this.queue.isRunning(row.id)) continue;
            if (row.lastSyncAt === null || now - row.lastSyncAt >= row.intervalSeconds * 1000) {
              void this.sync(row.id, 'schedule');
            }
          }
        },
        (error: unknown) =>
          this.log('error', 'scheduler could not read the registries', { error: String(error) }),
      );
    }, tickMs);
    this.timer.unref();
  }

  /** Stops scheduling and waits for the syncs in flight. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.generations.stop();
    await this.queue.idle();
    await this.tokens.stop();
    this.checksums.notifier.stop();
  }

  /** A mirrored registry's upstream: its state, and how stale what the mirror holds may be. */
  private async upstreamInfo(row: RegistryRow): Promise<UpstreamInfo> {
    const upstream = this.mirror?.upstreamFor(row.source);
    const heard = [
      this.mirror?.heardAt(row.name),
      row.lastSyncStatus === 'succeeded' || row.lastSyncStatus === 'unchanged' ? row.lastSyncAt : null,
    ].filter((t): t is number => typeof t === 'number');
    const checkedAt = heard.length > 0 ? Math.max(...heard) : null;
    const removed = await this.data.registries.removedUpstreamCount(row.id);
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
  async info(row: RegistryRow, options: RegistryInfoOptions): Promise<RegistryInfo> {
    const hidePath = row.sourceType === 'directory' && !options.viewer.admin;
    const shown = (text: string | null) =>
      text === null || !hidePath || row.source === '' ? text : text.split(row.source).join(LOCAL_DIRECTORY);
    const last = await this.data.syncs.latest(row.id);
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
      commit: commitShown(row.commit),
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
    if (row.sourceType === 'upstream') info.upstream = await this.upstreamInfo(row);
    if (options.findings) info.findings = await this.data.registries.findings(row.id);
    return info;
  }
}

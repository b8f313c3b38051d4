/**
 * The registry service: registries, credentials, tokens and syncs over one store, shared by the
 * HTTP API and the CLI. Owns the caches (catalog, tokens) and invalidates them when an index is
 * swapped in or a registry comes or goes; runs scheduled syncs (per-registry interval). Its parts,
 * one concern each, are in service/: registries.ts, tokens.ts, syncs.ts, mirror-coordination.ts.
 */

import type { RequestAccess } from './api/access.js';
import { TokenBook } from './api/access.js';
import type { RegistryInfo } from './api/shapes.js';
import { Checksums } from './checksums.js';
import type { SyncOutcome, SyncTrigger } from './indexer/sync-registry.js';
import type { Mirror } from './mirror/mirror.js';
import type { StoreTarget } from './mirror/store-target.js';
import { Catalog } from './resolve/catalog.js';
import type { ServiceContext, ServiceDeps } from './service/context.js';
import { MirrorCoordination } from './service/mirror-coordination.js';
import { type AddRegistryInput, Registries, type RegistryInfoOptions } from './service/registries.js';
import { Syncs } from './service/syncs.js';
import { TokenAdmin } from './service/tokens.js';
import type { QuarantineEvent, RegistryRow, ServiceStore } from './store/contract.js';
import { GenerationWatch } from './store/generation-watch.js';
import { type StoreHandle, serviceStoreOf } from './store/open-store.js';

export { PRIVATE_LABEL, type ServiceDeps } from './service/context.js';
export { type AddRegistryInput, LOCAL_DIRECTORY, type RegistryInfoOptions } from './service/registries.js';
export {
  type DefaultSourceOptions,
  defaultSourceFactory,
  type SourceFactory,
  type SourceRequest,
  withoutCredentials,
} from './service/sources.js';
export type { RegistryRow };

export class RegistryService {
  readonly store: StoreHandle;
  /** The store's queries (store/contract.ts). */
  readonly data: ServiceStore;
  readonly catalog: Catalog;
  readonly tokens: TokenBook;
  readonly checksums: Checksums;
  readonly registries: Registries;
  readonly syncs: Syncs;
  readonly mirroring: MirrorCoordination;
  private readonly tokenAdmin: TokenAdmin;
  /**
   * Drops cached answers and loads the search's rows when an index is swapped in by another
   * process: another replica on PostgreSQL, `dm-registry bundle import` or `index` on SQLite.
   */
  private readonly generations: GenerationWatch;

  constructor(deps: ServiceDeps) {
    this.store = deps.store;
    this.data = serviceStoreOf(deps.store);
    const clock = deps.clock ?? Date.now;
    this.catalog = new Catalog(this.data.catalog, { defaultRegistry: deps.defaultRegistry });
    this.tokens = new TokenBook(this.data.tokens, deps.adminTokens ?? [], clock);
    const ctx: ServiceContext = {
      deps,
      data: this.data,
      catalog: this.catalog,
      clock,
      log: (level, message, fields) => deps.log?.(level, message, fields),
    };
    this.generations = new GenerationWatch(this.data.registries.generations, (_ids, generations) => {
      this.catalog.invalidate();
      void this.data.reads.warm(generations);
    });
    this.checksums = new Checksums(this.data.checksums, deps.checksums ?? {}, ctx.log, clock);
    this.mirroring = new MirrorCoordination(ctx, this.checksums, deps.mirror, (name) =>
      this.syncs.revalidateHeld(name),
    );
    this.registries = new Registries(ctx, this.mirroring);
    this.tokenAdmin = new TokenAdmin(ctx, this.tokens);
    this.syncs = new Syncs(ctx, {
      checksums: this.checksums,
      registries: this.registries,
      mirroring: this.mirroring,
    });
    this.recovered = this.syncs.recovered;
    this.log = ctx.log;
  }

  private readonly log: ServiceContext['log'];

  /** Syncs a stopped process left `running`, marked `interrupted` at construction. */
  readonly recovered: Promise<number>;

  /** Pull-through from upstream registries (docs/mirroring.md), when `--upstream` is given. */
  get mirror(): Mirror | undefined {
    return this.mirroring.mirror;
  }
  /** The mirror's store side (digest mismatches per registry, removed-upstream flags). */
  get mirrorTarget(): StoreTarget | undefined {
    return this.mirroring.mirrorTarget;
  }

  get queue(): Syncs['queue'] {
    return this.syncs.queue;
  }

  get defaultRegistry(): string | undefined {
    return this.catalog.defaultRegistry;
  }

  /** Loads the search's rows of every registry's current generation. Never rejects. */
  warmSearch(): Promise<void> {
    return this.syncs.warmSearch();
  }

  all(): Promise<RegistryRow[]> {
    return this.registries.all();
  }
  find(idOrName: string | number, access: RequestAccess): Promise<RegistryRow> {
    return this.registries.find(idOrName, access);
  }
  add(input: AddRegistryInput): Promise<RegistryRow> {
    return this.registries.add(input);
  }
  register(input: AddRegistryInput): Promise<{ row: RegistryRow; created: boolean }> {
    return this.registries.register(input);
  }
  addOrUpdate(input: AddRegistryInput): Promise<RegistryRow> {
    return this.registries.addOrUpdate(input);
  }
  remove(id: number): Promise<void> {
    return this.registries.remove(id);
  }
  storeCredential(name: string, secret: string, kind?: string): Promise<void> {
    return this.registries.storeCredential(name, secret, kind);
  }
  webhookRecipients(): Promise<{ rows: RegistryRow[]; key: Uint8Array }> {
    return this.registries.webhookRecipients();
  }
  info(row: RegistryRow, options: RegistryInfoOptions): Promise<RegistryInfo> {
    return this.registries.info(row, options);
  }

  createToken(...args: Parameters<TokenAdmin['createToken']>): ReturnType<TokenAdmin['createToken']> {
    return this.tokenAdmin.createToken(...args);
  }
  listTokens(): ReturnType<TokenAdmin['listTokens']> {
    return this.tokenAdmin.listTokens();
  }
  revokeToken(idOrToken: string): Promise<void> {
    return this.tokenAdmin.revokeToken(idOrToken);
  }

  sync(id: number, trigger: SyncTrigger, hooks?: Parameters<Syncs['sync']>[2]): Promise<SyncOutcome> {
    return this.syncs.sync(id, trigger, hooks);
  }
  revalidateHeld(name: string): Promise<void> {
    return this.syncs.revalidateHeld(name);
  }
  mirrorQuarantined(events: readonly QuarantineEvent[]): void {
    this.mirroring.mirrorQuarantined(events);
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
    this.syncs.startSchedule(tickMs);
  }

  /** Stops scheduling and waits for the syncs in flight. */
  async stop(): Promise<void> {
    this.syncs.halt();
    this.generations.stop();
    await this.syncs.queue.idle();
    await this.tokens.stop();
    this.checksums.notifier.stop();
  }
}

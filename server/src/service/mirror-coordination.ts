/**
 * The registry service's side of mirroring (docs/mirroring.md): the pull-through mirror and its
 * store target, the incremental source of a mirrored registry, quarantines a mirror finds, and a
 * mirrored registry's upstream as the API shows it.
 */
import { DmError } from '../../../client/src/error.js';
import type { UpstreamInfo } from '../api/shapes.js';
import type { Checksums } from '../checksums.js';
import type { IncrementalSource } from '../indexer/sync-registry.js';
import type { Mirror } from '../mirror/mirror.js';
import { mirroredRegistrySource } from '../mirror/mirrored-registry.js';
import type { StoreTarget } from '../mirror/store-target.js';
import type { QuarantineEvent, RegistryRow } from '../store/contract.js';
import { type MirrorFactory, PRIVATE_LABEL, type ServiceContext, ServicePart } from './context.js';
import { withoutCredentials } from './sources.js';

export class MirrorCoordination extends ServicePart {
  /** Pull-through from upstream registries (docs/mirroring.md), when `--upstream` is given. */
  readonly mirror: Mirror | undefined;
  /** The mirror's store side (digest mismatches per registry, removed-upstream flags). */
  readonly mirrorTarget: StoreTarget | undefined;

  /**
   * Builds the mirror (when there is a factory) in order, from this part's own hooks; the one hook
   * that points forward, `revalidateHeld`, is the syncs' and is called only once requests come.
   */
  constructor(
    ctx: ServiceContext,
    private readonly checksums: Checksums,
    build: MirrorFactory | undefined,
    revalidateHeld: (name: string) => Promise<void>,
  ) {
    super(ctx);
    const built = build?.({
      data: ctx.data,
      catalog: ctx.catalog,
      quarantined: (events) => this.mirrorQuarantined(events),
      revalidateHeld: (name) => void revalidateHeld(name),
    });
    this.mirror = built?.mirror;
    this.mirrorTarget = built?.target;
  }

  /** The configured upstreams' URLs (how source strings are read). */
  upstreamUrls(): string[] {
    return this.mirror?.upstreams.map((u) => u.url) ?? [];
  }

  /**
   * The default interval of a registry mirrored whole: as often as floating references are
   * revalidated (--upstream-ttl, at least a minute).
   */
  mirrorInterval(): number {
    return Math.max(60, Math.round((this.mirror?.ttlMs ?? 300_000) / 1000));
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

  /** The incremental source of a registry mirrored from an upstream (docs/mirroring.md). */
  mirroredSource(row: RegistryRow): IncrementalSource {
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

  /** A mirrored registry's upstream: its state, and how stale what the mirror holds may be. */
  async upstreamInfo(row: RegistryRow): Promise<UpstreamInfo> {
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
}

/**
 * The mirror's store side (docs/mirroring.md): what it already holds for an exact version, and
 * storing a verified version through `addVersions` (one transaction) under a registry of source type
 * `upstream`, named as at the origin. Which registries this server indexes itself (never pulled
 * through) is read from the store at most once a second, not per request.
 */

import type { Logger } from '../log.js';
import type { MirrorQueries, QuarantineEvent } from '../store/contract.js';
import { canonicalTemplate } from '../store/first-seen.js';
import type { MirrorTarget, PulledVersion } from './pull-through.js';

export interface StoreTarget extends MirrorTarget {
  ownRegistry(name: string): boolean;
  /** Disagreements seen (also logged): the version keeps its stored digest. */
  mismatches: number;
  /** The same, per registry name. */
  mismatchesOf(registry: string): number;
  /** A stored version the upstream no longer serves: flagged, still served. */
  markRemoved(key: {
    registry: string;
    collection: string;
    template: string;
    version: string;
  }): Promise<void>;
  /** Reads the names of the registries this server indexes itself again (at most once a second). */
  refreshOwn(): Promise<void>;
}

export interface StoreTargetHooks {
  onStored: (registry: string) => void;
  onMismatch?: () => void;
  /** Quarantines the mirror opened (its first-seen record disagreeing): announced like a sync's. */
  onQuarantine?: (events: readonly QuarantineEvent[]) => void;
}

export function storeTarget(store: MirrorQueries, logger: Logger, hooks: StoreTargetHooks): StoreTarget {
  const { onStored, onMismatch = () => undefined, onQuarantine = () => undefined } = hooks;
  let own = new Set<string>();
  let loadedAt = 0;
  let loading: Promise<void> | undefined;
  const refreshOwn = async () => {
    if (Date.now() - loadedAt <= 1000) return;
    loading ??= store
      .ownRegistries()
      .then((names) => {
        own = new Set(names.map((n) => n.toLowerCase()));
        loadedAt = Date.now();
      })
      .finally(() => {
        loading = undefined;
      });
    await loading;
  };
  const ownNames = () => {
    if (Date.now() - loadedAt > 1000) void refreshOwn().catch(() => undefined);
    return own;
  };
  const mismatchesByRegistry = new Map<string, number>();
  const target: StoreTarget = {
    mismatches: 0,
    mismatchesOf: (registry) => mismatchesByRegistry.get(registry) ?? 0,
    refreshOwn,
    async markRemoved(key) {
      if (await store.markRemovedUpstream(key, Date.now())) {
        logger.log('info', 'version no longer served upstream; still served here, flagged', key);
        onStored(key.registry);
      }
    },
    ownRegistry: (name) => ownNames().has(name.toLowerCase()),
    async storedDigest(r) {
      return store.storedDigest(r);
    },
    async store(v: PulledVersion) {
      const r = v.resolution;
      const content = new Map(v.files.map((f) => [f.sha256, f.content]));
      const added = await store.addVersions(
        [
          {
            registry: {
              name: r.registry,
              sourceType: 'upstream',
              source: `${v.upstream}/${r.registry}`,
              visibility: v.private ? 'private' : 'public',
              commit: r.commit || null,
            },
            versions: [
              {
                collection: r.collection,
                template: r.template,
                version: r.version,
                kind: r.kind,
                dir: [r.collection, r.template, r.version].filter(Boolean).join('/'),
                templateFile: r.templateFile,
                schemaFile: r.schemaFile,
                hasExample: v.files.some((f) => f.path === 'example.yaml'),
                digest: r.digest,
                schemaJson: r.schema === null || r.schema === undefined ? null : JSON.stringify(r.schema),
                files: v.files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
                supersedes: v.supersedes,
              },
            ],
          },
        ],
        (sha) => content.get(sha),
      );
      if (added.quarantined.length > 0) onQuarantine(added.quarantined);
      if (v.supersedes !== undefined) {
        logger.log('warn', 'accepted upstream: the stored version is replaced', {
          reference: r.resolved,
          oldDigest: v.supersedes,
          newDigest: r.digest,
          upstream: v.upstream,
        });
      } else
        logger.log('info', 'pulled through', {
          reference: r.resolved,
          digest: r.digest,
          upstream: v.upstream,
        });
      onStored(r.registry);
    },
    async upstreamQuarantined(u) {
      const event = await store.openQuarantine({
        registry: u.registry,
        template: canonicalTemplate(u.registry, u.collection, u.template),
        version: u.version,
        firstDigest: u.digest,
        newDigest: u.quarantined.newDigest,
        changedFiles: u.quarantined.changedFiles,
        since: Date.parse(u.quarantined.since),
      });
      if (!event) return;
      logger.log('warn', 'version quarantined upstream; quarantined here too', {
        registry: u.registry,
        key: `${event.template}@${event.version}`,
        newDigest: event.newDigest,
      });
      onQuarantine([event]);
    },
    async reportMismatch(m) {
      // The upstream disagrees with what the mirror first saw: quarantined (docs/integrity-store.md §6).
      const at = m.reference.lastIndexOf(':=');
      if (at > 0) {
        const event = await store.openQuarantine({
          registry: m.registry,
          template: m.reference.slice(0, at),
          version: m.reference.slice(at + 2),
          firstDigest: m.storedDigest,
          newDigest: m.upstreamDigest,
          since: Date.now(),
        });
        if (event) onQuarantine([event]);
      }
      target.mismatches++;
      mismatchesByRegistry.set(m.registry, (mismatchesByRegistry.get(m.registry) ?? 0) + 1);
      onMismatch();
      logger.log('warn', 'upstream answers another digest for a stored version; keeping the stored one', {
        reference: m.reference,
        stored: m.storedDigest,
        upstream: m.upstream,
        upstreamDigest: m.upstreamDigest,
      });
    },
  };
  return target;
}

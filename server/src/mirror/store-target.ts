/**
 * The mirror's store side (docs/mirroring.md): what it already holds for an exact version, and
 * storing a verified version through `addVersions` (one transaction) under a registry of source type
 * `upstream`, named as at the origin. Which registries this server indexes itself (never pulled
 * through) is read from the store at most once a second, not per request.
 */

import type { Logger } from '../log.js';
import { addVersions, markRemovedUpstream, storedVersionDigest } from '../store/add-versions.js';
import type { Store } from '../store/db.js';
import { openQuarantine } from '../store/first-seen.js';
import type { MirrorTarget, PulledVersion } from './pull-through.js';

export interface StoreTarget extends MirrorTarget {
  ownRegistry(name: string): boolean;
  /** Disagreements seen (also logged): the version keeps its stored digest. */
  mismatches: number;
  /** The same, per registry name. */
  mismatchesOf(registry: string): number;
  /** A stored version the upstream no longer serves: flagged, still served. */
  markRemoved(key: { registry: string; collection: string; template: string; version: string }): void;
}

export function storeTarget(
  store: Store,
  logger: Logger,
  onStored: (registry: string) => void,
  onMismatch: () => void = () => undefined,
): StoreTarget {
  let own: Set<string> | undefined;
  let loadedAt = 0;
  const ownNames = () => {
    const now = Date.now();
    if (!own || now - loadedAt > 1000) {
      const rows = store.sqlite
        .prepare("SELECT name FROM registries WHERE source_type NOT IN ('upstream', 'bundle')")
        .all() as { name: string }[];
      own = new Set(rows.map((r) => r.name.toLowerCase()));
      loadedAt = now;
    }
    return own;
  };
  const mismatchesByRegistry = new Map<string, number>();
  const target: StoreTarget = {
    mismatches: 0,
    mismatchesOf: (registry) => mismatchesByRegistry.get(registry) ?? 0,
    markRemoved(key) {
      if (markRemovedUpstream(store, key, Date.now())) {
        logger.log('info', 'version no longer served upstream; still served here, flagged', key);
        onStored(key.registry);
      }
    },
    ownRegistry: (name) => ownNames().has(name.toLowerCase()),
    async storedDigest(r) {
      return storedVersionDigest(store, r);
    },
    async store(v: PulledVersion) {
      const r = v.resolution;
      const content = new Map(v.files.map((f) => [f.sha256, f.content]));
      addVersions(
        store,
        {
          name: r.registry,
          sourceType: 'upstream',
          source: `${v.upstream}/${r.registry}`,
          visibility: v.private ? 'private' : 'public',
          commit: r.commit || null,
        },
        [
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
          },
        ],
        (sha) => content.get(sha),
      );
      logger.log('info', 'pulled through', { reference: r.resolved, digest: r.digest, upstream: v.upstream });
      onStored(r.registry);
    },
    reportMismatch(m) {
      // The upstream disagrees with what the mirror first saw: quarantined (docs/integrity-store.md §6).
      const at = m.reference.lastIndexOf(':=');
      const registryId = store.sqlite
        .prepare('SELECT id FROM registries WHERE name = ?')
        .pluck()
        .get(m.registry);
      if (at > 0 && typeof registryId === 'number') {
        openQuarantine(store.sqlite, {
          registryId,
          registry: m.registry,
          syncId: null,
          now: Date.now(),
          template: m.reference.slice(0, at),
          version: m.reference.slice(at + 2),
          firstDigest: m.storedDigest,
          newDigest: m.upstreamDigest,
        });
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

/**
 * Eager mirroring of one registry of an upstream registry server (docs/mirroring.md, "Mirroring a
 * whole registry"): a registry whose source is `<upstream url>/<host>/<owner>/<repo>` is synced on
 * its interval like any other, but instead of rebuilding an index it
 *
 * 1. asks the upstream for the registry's version list (`GET /api/v1/registries/{name}/versions`),
 *    conditionally: with the ETag of the last list, an unchanged registry costs one `304`;
 * 2. pulls every listed version the mirror does not hold, or holds with another digest, through
 *    the pull-through path (resolve + archive, verified, stored with `addVersions` in one
 *    transaction per version): a change the upstream accepted replaces the stored version, any
 *    other difference is reported and quarantined (the stored bytes stay);
 * 3. marks stored versions the upstream no longer lists as removed upstream (they keep being
 *    served), and shows versions the upstream serves quarantined as quarantined here too;
 * 4. makes the registry private on the mirror when the upstream serves it privately.
 *
 * A registry the mirror only pulls through (`heldOnly`) is revalidated the same way, limited to
 * the versions it holds: nothing new is pulled, but a change the upstream accepted, a quarantine
 * opened or closed upstream and a version removed upstream are taken as for an eager mirror.
 */
import { DmError } from '../../../client/src/error.js';
import type { OpenOptions } from '../../../client/src/source/index.js';
import type { RegistryVersionList } from '../api/shapes.js';
import type { IncrementalSource } from '../indexer/sync-registry.js';
import { versionKey } from '../store/add-versions.js';
import type { MirrorQueries, ReadStore } from '../store/contract.js';
import { canonicalTemplate } from '../store/first-seen.js';
import { checkQuarantine, type PullThrough, type UpstreamQuarantine } from './pull-through.js';
import type { Upstream } from './upstream.js';

export interface MirroredRegistryOptions {
  store: MirrorQueries;
  /** The registry's stored versions with their digests. */
  reads: Pick<ReadStore, 'versionList' | 'openQuarantines'>;
  registry: { id: number; name: string; visibility: string };
  upstream: Upstream;
  pullThrough: PullThrough;
  /**
   * Only the versions the mirror holds are compared and taken (a registry only pulled through):
   * versions it does not hold are not pulled.
   */
  heldOnly?: boolean;
  /** Versions pulled at once (default 4). */
  concurrency?: number;
  now?: () => number;
  /** Quarantines closed because the upstream serves the first-seen content again. */
  onReverted?(count: number): void;
  /** A listed version the upstream serves quarantined (after it is stored here). */
  onQuarantined(q: UpstreamQuarantine): void | Promise<void>;
  /** The registry became private because the upstream serves it privately. */
  onPrivate(): void;
}

/** Largest version list accepted from an upstream, bytes. */
const LIST_LIMIT = 64 * 1024 * 1024;
const PART = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function checkList(value: unknown, upstream: string, name: string): RegistryVersionList {
  const list = value as Partial<RegistryVersionList> | null;
  const ok =
    list !== null &&
    typeof list === 'object' &&
    (list.commit === null || typeof list.commit === 'string') &&
    Array.isArray(list.versions) &&
    list.versions.every(
      (v) =>
        v !== null &&
        typeof v === 'object' &&
        typeof v.collection === 'string' &&
        (v.collection === '' || PART.test(v.collection)) &&
        typeof v.template === 'string' &&
        PART.test(v.template) &&
        typeof v.version === 'string' &&
        /^v?[0-9A-Za-z.+-]+$/.test(v.version) &&
        typeof v.digest === 'string' &&
        /^sha256:[0-9a-f]{64}$/.test(v.digest),
    );
  if (!ok) {
    throw new DmError(
      'UPSTREAM_INVALID_ANSWER',
      `${upstream} answered a version list of ${name} dm cannot use`,
      { category: 'upstream', details: { upstream } },
    );
  }
  return list as RegistryVersionList;
}

/** The exact reference of a listed version: `host/owner/repo[/collection]/template:=version`. */
function exactReference(registry: string, v: { collection: string; template: string; version: string }) {
  return `${[registry, v.collection, v.template].filter(Boolean).join('/')}:=${v.version}`;
}

export function mirroredRegistrySource(options: MirroredRegistryOptions): IncrementalSource {
  const { store, reads, registry, upstream, pullThrough } = options;
  const now = options.now ?? Date.now;
  return {
    description: `${upstream.url}/${registry.name}`,
    async update(open: OpenOptions) {
      open.meter.requests += 1;
      const answer = await upstream.getJson<unknown>({
        path: `/api/v1/registries/${registry.name}/versions`,
        etag: open.etag,
        maxBodyBytes: LIST_LIMIT,
      });
      if (answer.status === 304) {
        return { status: 'unchanged' as const, commit: open.commit ?? null, etag: open.etag ?? null };
      }
      if (answer.status === 404) {
        throw new DmError(
          'UPSTREAM_REGISTRY_NOT_FOUND',
          `${upstream.url} serves no registry ${registry.name} (to this mirror's token)`,
          { category: 'upstream', details: { upstream: upstream.url } },
        );
      }
      if (answer.status !== 200) {
        throw new DmError(
          'UPSTREAM_INVALID_ANSWER',
          `${upstream.url} answered HTTP ${answer.status} for the version list of ${registry.name}`,
          { category: 'upstream', details: { upstream: upstream.url } },
        );
      }
      const list = checkList(answer.json, upstream.url, registry.name);
      if (
        /(^|[\s,])private([\s,]|$)/.test(answer.headers.get('cache-control') ?? '') &&
        registry.visibility !== 'private'
      ) {
        await store.makePrivate(registry.id);
        registry.visibility = 'private';
        options.onPrivate();
      }
      const stored = new Map((await reads.versionList(registry.id)).map((v) => [versionKey(v), v.digest]));
      const listed = new Set<string>();
      const missing: RegistryVersionList['versions'] = [];
      const quarantined: UpstreamQuarantine[] = [];
      for (const v of list.versions) {
        const key = versionKey(v);
        listed.add(key);
        const digest = stored.get(key);
        if (options.heldOnly && digest === undefined) continue;
        const q = checkQuarantine(v.quarantined, upstream.url);
        if (q) quarantined.push({ ...v, registry: registry.name, quarantined: q });
        // A version not held, or held with another digest: pulled through, which stores it, takes
        // a change the upstream accepted (its log says so) or reports the disagreement.
        if (digest !== v.digest) missing.push(v);
      }
      const before = pullThrough.requests;
      // The first failure stops the others from taking more; what was stored stays (each version
      // in its own transaction) and the next sync pulls the rest.
      let failure: { error: unknown } | undefined;
      let next = 0;
      const worker = async () => {
        while (failure === undefined && next < missing.length && !open.signal?.aborted) {
          const v = missing[next++]!;
          try {
            const result = await pullThrough.pull(exactReference(registry.name, v), upstream);
            if (result.kind === 'not-found') listed.delete(versionKey(v)); // gone since the list
          } catch (error) {
            failure ??= { error };
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 4, missing.length) }, worker));
      open.meter.requests += pullThrough.requests - before;
      if (failure) throw failure.error;
      await store.flagRemovedUpstream(registry.id, listed, now());
      // Quarantined upstream: the mirror stores the served (first-seen) bytes and shows it quarantined.
      for (const q of quarantined) if (listed.has(versionKey(q))) await options.onQuarantined(q);
      // Served upstream at the stored digest and no longer quarantined there: the source went
      // back to the first-seen content, so the mirror's quarantine of it closes too.
      const held = list.versions.filter(
        (v) => v.quarantined === undefined && stored.get(versionKey(v)) === v.digest,
      );
      if (held.length > 0 && (await reads.openQuarantines(registry.id)).length > 0) {
        const closed = await store.closeReverted(
          registry.id,
          held.map((v) => ({
            template: canonicalTemplate(registry.name, v.collection, v.template),
            version: v.version,
            digest: v.digest,
          })),
          now(),
        );
        if (closed > 0) options.onReverted?.(closed);
      }
      const counts = await store.counts(registry.id);
      return {
        status: 'succeeded' as const,
        commit: list.commit,
        etag: answer.headers.get('etag'),
        ...(counts ?? {}),
      };
    },
  };
}

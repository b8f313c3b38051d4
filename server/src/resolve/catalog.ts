/**
 * The in-memory view of the serving indexes that answers resolve (docs/references.md "Patch float",
 * docs/server.md "Read path"). A resolution is immutable for a registry commit, so answers are computed
 * once from the store, kept as ready-to-send JSON with its ETag keyed by the reference text, and
 * dropped when a sync swaps an index in or a registry is added or removed (`invalidate()`). A per-request SQL
 * lookup alone would cap resolve at about a third of bare Hono's throughput (§7).
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { DmError, httpStatusFor } from '../../../client/src/error.js';
import {
  formatReference,
  formatTemplateName,
  parseReference,
  pickLatest,
  pickVersion,
  type RegistryReference,
} from '../../../client/src/reference/index.js';
import type { FileInfo, Resolution } from '../api/shapes.js';
import { commitShown } from '../source/directory.js';
import type { CatalogQueries } from '../store/contract.js';
import { quarantineField } from '../store/quarantine.js';
import { nearestOf } from './nearest-versions.js';

export interface RegistryView {
  id: number;
  name: string;
  visibility: string;
  organisation: string | null;
  commit: string | null;
}

interface TemplateView {
  versions: string[];
  ids: Map<string, number>;
}

/** Who is asking: can they read a registry? */
export interface Access {
  canRead(registry: RegistryView): boolean;
}

export interface CachedAnswer {
  status: number;
  body: string;
  /** A resolution's ETag (`answerEtag` of its body), made with it; none on an error. */
  etag?: string;
  /** The registry the answer is about (private ones are served only to readers). */
  registry: RegistryView | undefined;
}

/**
 * The ETag of a resolve answer (docs/mirroring.md "Floating references"): a hash of its JSON, so a
 * mirror revalidating a floating reference gets `304` while it still resolves to the same thing.
 */
export function answerEtag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/**
 * The UTF-8 bytes of an answer's JSON, made once per answer (the catalog's cached answers are the
 * same object each time, and a new object after every invalidation): a batch naming one version
 * 1,000 times encodes it once, and the listener's fast path (api/listener.ts) writes the same bytes
 * to every caller, without a copy. Held only as long as the answer itself (docs/server.md, "Bounds
 * on one caller's work": counted with the answer cache).
 */
export function answerBytes(answer: { body: string }): Uint8Array {
  let bytes = bytesOfAnswers.get(answer);
  if (bytes === undefined) {
    // An array of its own (a small Buffer would be a slice of a shared pool, kept whole by it).
    bytes = encoder.encode(answer.body);
    bytesOfAnswers.set(answer, bytes);
  }
  return bytes;
}
const bytesOfAnswers = new WeakMap<object, Uint8Array>();
const encoder = new TextEncoder();

/** Default byte bound of the answer cache (keys and bodies, counted as UTF-16). */
export const DEFAULT_ANSWER_CACHE_BYTES = 32 * 1024 * 1024;

/** Bookkeeping per cached answer besides its key and body (entry, node, object), bytes. */
const ENTRY_OVERHEAD = 200;

export interface CatalogOptions {
  /** Registry for short references (`redis:v1`), `host/owner/repo[/collection]`. */
  defaultRegistry?: string | undefined;
  /** Largest size of the resolve answer cache, bytes (default 32 MiB). */
  maxCacheBytes?: number | undefined;
}

export class Catalog {
  private registriesByName: Map<string, RegistryView> | undefined;
  private readonly templatesByRegistry = new Map<number, Map<string, TemplateView>>();
  private readonly answers: LRUCache<string, CachedAnswer>;
  private readonly resolutions = new Map<number, Omit<Resolution, 'reference'>>();
  /** Loads in flight, shared by the requests that miss together. */
  private registriesLoading: Promise<Map<string, RegistryView>> | undefined;
  private readonly templatesLoading = new Map<number, Promise<Map<string, TemplateView>>>();
  /** Bumped by `invalidate()`: a load begun before it does not fill the caches after it. */
  private epoch = 0;

  constructor(
    private readonly store: CatalogQueries,
    private readonly options: CatalogOptions = {},
  ) {
    this.answers = new LRUCache<string, CachedAnswer>({
      maxSize: options.maxCacheBytes ?? DEFAULT_ANSWER_CACHE_BYTES,
      sizeCalculation: (answer, key) => 2 * (key.length + answer.body.length) + ENTRY_OVERHEAD,
    });
  }

  get defaultRegistry(): string | undefined {
    return this.options.defaultRegistry;
  }

  set defaultRegistry(name: string | undefined) {
    this.options.defaultRegistry = name;
    this.answers.clear();
  }

  /** Drops everything derived from the store (after an index swap, a registry added or removed). */
  invalidate(): void {
    this.epoch++;
    this.registriesLoading = undefined;
    this.templatesLoading.clear();
    this.registriesByName = undefined;
    this.templatesByRegistry.clear();
    this.answers.clear();
    this.resolutions.clear();
  }

  async registries(): Promise<Map<string, RegistryView>> {
    if (this.registriesByName) return this.registriesByName;
    if (!this.registriesLoading) {
      const epoch = this.epoch;
      const loading = this.store.registries().then((rows) => {
        const map = new Map<string, RegistryView>();
        for (const row of rows) map.set(row.name.toLowerCase(), row);
        if (epoch === this.epoch) this.registriesByName = map;
        return map;
      });
      this.registriesLoading = loading;
      const done = () => {
        if (this.registriesLoading === loading) this.registriesLoading = undefined;
      };
      void loading.then(done, done);
    }
    return this.registriesLoading;
  }

  async registry(name: string): Promise<RegistryView | undefined> {
    return (this.registriesByName ?? (await this.registries())).get(name.toLowerCase());
  }

  private templates(registryId: number): Map<string, TemplateView> | Promise<Map<string, TemplateView>> {
    const map = this.templatesByRegistry.get(registryId);
    if (map) return map;
    let loading = this.templatesLoading.get(registryId);
    if (!loading) {
      const epoch = this.epoch;
      const started = this.loadTemplates(registryId).then((loaded) => {
        if (epoch === this.epoch) this.templatesByRegistry.set(registryId, loaded);
        return loaded;
      });
      loading = started;
      this.templatesLoading.set(registryId, started);
      const done = () => {
        if (this.templatesLoading.get(registryId) === started) this.templatesLoading.delete(registryId);
      };
      void started.then(done, done);
    }
    return loading;
  }

  private async loadTemplates(registryId: number): Promise<Map<string, TemplateView>> {
    const map = new Map<string, TemplateView>();
    for (const row of await this.store.versions(registryId)) {
      const key = `${row.collection}/${row.name}`;
      let t = map.get(key);
      if (!t) {
        t = { versions: [], ids: new Map() };
        map.set(key, t);
      }
      t.versions.push(row.version);
      t.ids.set(row.version, row.id);
    }
    return map;
  }

  /** The versions of a template, or undefined. */
  async templateVersions(
    registryId: number,
    collection: string,
    template: string,
  ): Promise<TemplateView | undefined> {
    return (this.templatesByRegistry.get(registryId) ?? (await this.templates(registryId))).get(
      `${collection}/${template}`,
    );
  }

  /** The resolution of an exact version (without the asked reference). */
  async resolutionOf(versionId: number): Promise<Omit<Resolution, 'reference'>> {
    const hit = this.resolutions.get(versionId);
    if (hit) return hit;
    const epoch = this.epoch;
    const row = await this.store.version(versionId);
    if (!row)
      throw new DmError('VERSION_NOT_FOUND', `version ${versionId} is gone`, { category: 'not-found' });
    const [host = '', owner = '', repo = ''] = row.registry.split('/');
    const name = formatTemplateName({
      host,
      owner,
      repo,
      collection: row.collection,
      template: row.template,
    });
    const resolution: Omit<Resolution, 'reference'> = {
      resolved: `${name}:=${row.version}`,
      registry: row.registry,
      collection: row.collection,
      template: row.template,
      version: row.version,
      commit: commitShown(row.commit) ?? '',
      kind: row.kind as Resolution['kind'],
      templateFile: row.templateFile,
      schemaFile: row.schemaFile,
      digest: row.digest,
      files: row.files as FileInfo[],
      schema: row.schemaJson === null ? null : JSON.parse(row.schemaJson),
      ...(row.removedUpstreamAt === null ? {} : { removedUpstream: true as const }),
      ...quarantineField(await this.store.quarantine(name, row.version)),
    };
    if (epoch === this.epoch) this.resolutions.set(versionId, resolution);
    return resolution;
  }

  /** Resolves a reference; throws DmError (invalid reference, registry/template/version not found). */
  async resolve(
    text: string,
    access: Access,
    onRegistry?: (registry: RegistryView) => void,
    attempt = 0,
  ): Promise<Resolution> {
    const ref = parseReference(text, {
      defaultRegistry: this.options.defaultRegistry,
      allowMissingVersion: true,
    });
    if (ref.kind === 'url') {
      throw new DmError(
        'UNSUPPORTED_REFERENCE',
        `'${text}' is a URL reference; the registry server resolves registry references only`,
        {
          category: 'invalid-input',
          details: { reference: text },
        },
      );
    }
    const { registry, template } = await this.locate(ref, access, onRegistry);
    const subject = formatTemplateName(ref);
    let version: string;
    try {
      version = ref.version
        ? pickVersion(template.versions, ref.version, { subject })
        : pickLatest(template.versions, { subject });
    } catch (error) {
      if (!(error instanceof DmError)) throw error;
      // Not found names the versions nearest to the one asked for, newest first, and how many
      // there are (docs/server.md "HTTP API"), besides the same-minor ones.
      // Kept in steps with turns between (nearest-versions.ts), not the held list sorted at once.
      const nearest = await nearestOf(template.versions, ref.version);
      throw new DmError(error.code, error.message, {
        category: error.category,
        ...(error.hint ? { hint: error.hint } : {}),
        details: {
          ...error.details,
          reference: text,
          available: nearest.versions,
          versionCount: nearest.total,
        },
      });
    }
    const id = template.ids.get(version)!;
    try {
      return { reference: formatReference(ref), ...(await this.resolutionOf(id)) };
    } catch (error) {
      // Another replica swapped the index in between reading the template's versions and the
      // version (PostgreSQL, before the generation watch says so): read the registry again.
      if (!(error instanceof DmError) || error.code !== 'VERSION_NOT_FOUND' || attempt > 0) throw error;
      this.templatesByRegistry.delete(registry.id);
      this.templatesLoading.delete(registry.id);
      return this.resolve(text, access, onRegistry, attempt + 1);
    }
  }

  /** The registry and template a reference names, visible to `access`; throws not found. */
  async locate(
    ref: Omit<RegistryReference, 'kind' | 'version'>,
    access: Access,
    onRegistry?: (registry: RegistryView) => void,
  ): Promise<{ registry: RegistryView; template: TemplateView }> {
    const registryName = `${ref.host}/${ref.owner}/${ref.repo}`;
    const registry = await this.registry(registryName);
    if (registry) onRegistry?.(registry);
    if (!registry || !access.canRead(registry)) {
      throw new DmError('REGISTRY_NOT_FOUND', `no registry ${registryName} on this server`, {
        category: 'not-found',
        details: { registry: registryName },
      });
    }
    const template = await this.templateVersions(registry.id, ref.collection, ref.template);
    if (!template) {
      const name = formatTemplateName(ref);
      throw new DmError('TEMPLATE_NOT_FOUND', `no template ${name} in ${registryName}`, {
        category: 'not-found',
        details: { template: name, registry: registryName },
      });
    }
    return { registry, template };
  }

  /**
   * The answer to `GET /resolve?ref=text` as ready JSON, from the cache when it is there and the
   * caller may see it. The cache is a byte-bounded LRU (docs/server.md, "HTTP API"): it holds
   * answers about registries that exist, served from it only to callers who may read the registry.
   * Answers that name no readable registry (an invalid reference, a registry that does not exist or
   * that the caller may not see) are never cached: they are cheap to compute, a flood of distinct
   * ones cannot grow memory, and a hidden private registry answers exactly as a missing one does.
   */
  resolveAnswer(text: string, access: Access): CachedAnswer | Promise<CachedAnswer> {
    return this.cachedAnswer(text, access) ?? this.computeAnswer(text, access);
  }

  /** The cached answer to `text` when there is one `access` may be given (`resolveAnswer`'s rule). */
  cachedAnswer(text: string, access: Access): CachedAnswer | undefined {
    const hit = this.answers.get(text);
    if (hit && (hit.registry?.visibility !== 'private' || access.canRead(hit.registry!))) return hit;
    return undefined;
  }

  private async computeAnswer(text: string, access: Access): Promise<CachedAnswer> {
    const epoch = this.epoch;
    let touched: RegistryView | undefined;
    let answer: CachedAnswer;
    try {
      const resolution = await this.resolve(text, access, (r) => {
        touched = r;
      });
      const body = JSON.stringify(resolution);
      answer = { status: 200, body, etag: answerEtag(body), registry: touched };
    } catch (error) {
      if (!(error instanceof DmError)) throw error;
      answer = { status: httpStatusFor(error), body: JSON.stringify(error.toJSON()), registry: touched };
      if (!touched || error.code === 'REGISTRY_NOT_FOUND') return answer;
    }
    // An answer computed across an invalidation may be about the old index: not kept.
    if (epoch === this.epoch) this.answers.set(text, answer);
    return answer;
  }

  /** Bytes the answer cache holds (as counted against its bound). */
  get cachedBytes(): number {
    return this.answers.calculatedSize;
  }
}

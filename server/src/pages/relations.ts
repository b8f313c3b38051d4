/**
 * Relationships between templates for the template page (docs/pages.md, "Relationships"): what a
 * version uses — the full references its text files name, as `dm install` finds them without
 * rendering (client/src/resolve/discover-references.ts) — and what uses a template: every indexed
 * version, in registries the reader may see, whose files name it. The used-by index is built once
 * per catalog generation (it changes only when an index is swapped in or a registry added or
 * removed) from the stored files, within a byte budget per registry; beyond it the list says it
 * may be partial.
 */
import { type RegistryReference, tryParseReference } from '../../../client/src/reference/index.js';
import { referencesInText } from '../../../client/src/resolve/index.js';
import type { FileInfo } from '../api/shapes.js';
import type { Access, Catalog, RegistryView } from '../resolve/catalog.js';
import type { ReadStore } from '../store/contract.js';
import { MAX_INLINE_BYTES } from '../store/reads.js';
import type { RelatedTemplate, Relations } from './template-page.js';
import { templateUrl } from './urls.js';

/** Files whose text may name references: templates, schemas, configurations. */
const TEXT_FILE = /\.(jinja|py|schema|ya?ml)$/i;

/** Bytes of file text read per registry to build the used-by index. */
export const USED_BY_BUDGET_BYTES = 32 * 1024 * 1024;

/**
 * Bytes of the shown version's text files read for "uses" on one page request (pages asked with a
 * token are rendered every time, so this bounds each one; docs/pages.md, "Relationships").
 */
export const USES_BUDGET_BYTES = 1024 * 1024;

/** The most "uses" and "used by" rows a page lists. */
const MAX_ROWS = 200;

interface User {
  registryId: number;
  registry: string;
  collection: string;
  name: string;
  version: string;
  reference: string;
}

interface RegistryUses {
  /** Target key → the versions naming it. */
  users: Map<string, User[]>;
  incomplete: boolean;
}

function targetKey(registry: string, collection: string, template: string): string {
  return `${registry.toLowerCase()}\0${collection}\0${template}`;
}

function keyOf(ref: RegistryReference): string {
  return targetKey(`${ref.host}/${ref.owner}/${ref.repo}`, ref.collection, ref.template);
}

function hostsOf(registries: Map<string, RegistryView>): string[] {
  return [...new Set([...registries.values()].map((r) => r.name.split('/')[0] ?? ''))];
}

function isText(f: Pick<FileInfo, 'path' | 'size'>): boolean {
  return TEXT_FILE.test(f.path) && f.size <= MAX_INLINE_BYTES;
}

async function scanRegistry(
  reads: ReadStore,
  registry: RegistryView,
  hosts: string[],
): Promise<RegistryUses> {
  const users = new Map<string, User[]>();
  let budget = USED_BY_BUDGET_BYTES;
  let incomplete = false;
  for (const t of await reads.templates(registry.id)) {
    if (budget <= 0) {
      incomplete = true;
      break;
    }
    for (const v of await reads.versions(registry.id, t.collection, t.name)) {
      if (budget <= 0) {
        incomplete = true;
        break;
      }
      const named = new Set<string>();
      for (const f of await reads.versionContents(v.id)) {
        if (!isText({ path: f.path, size: f.content.length })) continue;
        budget -= f.content.length;
        for (const r of referencesInText(f.content.toString('utf8'), hosts)) named.add(r);
      }
      for (const reference of named) {
        const ref = tryParseReference(reference);
        if (ref?.kind !== 'registry') continue;
        const key = keyOf(ref);
        if (key === targetKey(registry.name, t.collection, t.name)) continue;
        let list = users.get(key);
        if (!list) {
          list = [];
          users.set(key, list);
        }
        list.push({
          registryId: registry.id,
          registry: registry.name,
          collection: t.collection,
          name: t.name,
          version: v.version,
          reference,
        });
      }
    }
  }
  return { users, incomplete };
}

/**
 * The used-by indexes of a catalog generation, per registry id, built on first use. Keyed by the
 * catalog's registries map, which is replaced whenever the indexes change.
 */
export class UsedByIndex {
  private readonly generations = new WeakMap<object, Map<number, Promise<RegistryUses>>>();

  constructor(
    private readonly catalog: Catalog,
    private readonly reads: ReadStore,
  ) {}

  private async registryUses(registry: RegistryView): Promise<RegistryUses> {
    const generation = await this.catalog.registries();
    let map = this.generations.get(generation);
    if (!map) {
      map = new Map();
      this.generations.set(generation, map);
    }
    let uses = map.get(registry.id);
    if (!uses) {
      // A failed scan is an incomplete list, never a failed page.
      uses = scanRegistry(this.reads, registry, hostsOf(generation)).catch(() => ({
        users: new Map(),
        incomplete: true,
      }));
      map.set(registry.id, uses);
    }
    return uses;
  }

  /** What uses `registry/collection/template`, among the registries `access` may read. */
  async usersOf(
    registry: string,
    collection: string,
    template: string,
    access: Access,
  ): Promise<{ users: User[]; incomplete: boolean }> {
    const key = targetKey(registry, collection, template);
    const users: User[] = [];
    let incomplete = false;
    for (const r of (await this.catalog.registries()).values()) {
      if (!access.canRead(r)) continue;
      const uses = await this.registryUses(r);
      incomplete ||= uses.incomplete;
      users.push(...(uses.users.get(key) ?? []));
    }
    return { users, incomplete };
  }
}

/**
 * The relationships a template page shows for one version. The exact-version page is cached as
 * immutable, so it shows only what the version's own files say: its references, linked to the
 * templates' pages, without what they resolve to today or what uses it.
 */
export async function relationsOf(
  reads: ReadStore,
  catalog: Catalog,
  usedBy: UsedByIndex,
  access: Access,
  shown: {
    id: number;
    registry: string;
    collection: string;
    template: string;
    files: FileInfo[];
    exact: boolean;
  },
): Promise<Relations> {
  const hosts = hostsOf(await catalog.registries());
  const named = new Set<string>();
  let budget = USES_BUDGET_BYTES;
  let usesIncomplete = false;
  for (const f of shown.files) {
    if (!isText(f)) continue;
    budget -= f.size;
    if (budget < 0) {
      usesIncomplete = true;
      break;
    }
    const text = await reads.inlineText(shown.id, f.path);
    if (text !== undefined) for (const r of referencesInText(text, hosts)) named.add(r);
  }
  const self = targetKey(shown.registry, shown.collection, shown.template);
  const uses: RelatedTemplate[] = [];
  for (const reference of [...named].sort()) {
    const ref = tryParseReference(reference);
    if (ref?.kind !== 'registry' || keyOf(ref) === self) continue;
    let href: string | undefined;
    let version: string | undefined;
    try {
      const resolved = await catalog.resolve(reference, access);
      if (shown.exact) href = templateUrl(resolved.registry, resolved.collection, resolved.template);
      else {
        version = resolved.version;
        href = templateUrl(resolved.registry, resolved.collection, resolved.template, resolved.version);
      }
    } catch {
      // Not on this server (or not visible): shown without a link.
    }
    uses.push({ reference, href, version });
    if (uses.length >= MAX_ROWS) break;
  }
  if (shown.exact) return { uses, usesIncomplete, usedBy: undefined, usedByIncomplete: false };
  const { users, incomplete } = await usedBy.usersOf(
    shown.registry,
    shown.collection,
    shown.template,
    access,
  );
  const sorted = users.sort(
    (a, b) =>
      (a.registry < b.registry ? -1 : a.registry > b.registry ? 1 : 0) ||
      (a.collection < b.collection ? -1 : a.collection > b.collection ? 1 : 0) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
      (a.version < b.version ? -1 : a.version > b.version ? 1 : 0),
  );
  return {
    uses,
    usesIncomplete,
    usedBy: sorted.slice(0, MAX_ROWS).map((u) => ({
      label: `${u.registry}/${u.collection ? `${u.collection}/` : ''}${u.name} ${u.version}`,
      href: templateUrl(u.registry, u.collection, u.name, u.version),
      reference: u.reference,
    })),
    usedByIncomplete: incomplete || users.length > MAX_ROWS,
  };
}

/**
 * `dm-registry bundle export|import` (docs/mirroring.md): what a bundle carries is chosen through
 * the catalog (registries, dm.lock pins, and every template their files reference, transitively,
 * by the same patch float a client would use), written with bundle-format.ts, and imported with
 * addVersions in one transaction after everything was verified.
 */
import { DmError } from '../../../client/src/error.js';
import { readLockFile, referencesInText } from '../../../client/src/resolve/index.js';
import type { Resolution } from '../api/shapes.js';
import { Catalog } from '../resolve/catalog.js';
import type { AddedVersion } from '../store/contract.js';
import { type StoreHandle, serviceStoreOf } from '../store/open-store.js';
import {
  type BundleManifest,
  type BundleRegistry,
  type BundleVersion,
  readBundle,
  readSigningKey,
  readVerifyKey,
  writeBundle,
} from './bundle-format.js';

export interface ExportOptions {
  out: string;
  /** Registries to carry whole (default: every registry, when no lock file is given either). */
  registries?: readonly string[];
  /** dm.lock files whose pinned versions to carry. */
  locks?: readonly string[];
  /** An earlier bundle: carry only what it lacks. */
  since?: string;
  signKey?: string;
  now?: () => Date;
}

export interface ExportResult {
  file: string;
  bytes: number;
  versions: number;
  blobs: number;
  digest: string;
  /** References found in templates that this server cannot resolve (not carried). */
  unresolved: string[];
}

const everyone = { canRead: () => true };

function templateRef(r: { registry: string; collection: string; template: string; version: string }): string {
  return `${[r.registry, r.collection, r.template].filter(Boolean).join('/')}:=${r.version}`;
}

export async function exportBundle(store: StoreHandle, options: ExportOptions): Promise<ExportResult> {
  const data = serviceStoreOf(store);
  const catalog = new Catalog(data.catalog);
  const known = new Map((await data.registries.list()).map((r) => [r.name.toLowerCase(), r]));
  const seeds: string[] = [];
  const registries = options.registries ?? [];
  for (const name of registries) {
    if (!known.has(name.toLowerCase())) {
      throw new DmError('REGISTRY_NOT_FOUND', `no registry ${name} in this database`, {
        category: 'not-found',
      });
    }
  }
  const whole =
    registries.length > 0 ? registries : (options.locks ?? []).length > 0 ? [] : [...known.keys()];
  for (const name of whole) {
    for (const row of await data.mirror.versionsOf(name)) seeds.push(templateRef(row));
  }
  for (const file of options.locks ?? []) {
    const lock = await readLockFile(file);
    if (!lock) throw new DmError('FILE_NOT_FOUND', `${file}: no such lock file`, { category: 'not-found' });
    for (const entry of Object.values(lock.references)) seeds.push(`${entry.template}:=${entry.version}`);
  }

  const hosts = [...new Set([...known.keys()].map((n) => n.split('/')[0]!))];
  const content = async (sha256: string): Promise<Buffer> => {
    const bytes = await data.catalog.content(sha256);
    if (!bytes) {
      throw new DmError('CONTENT_MISSING', `the content ${sha256} is not in this database`);
    }
    return bytes;
  };
  const chosen = new Map<string, Resolution>();
  const unresolved = new Set<string>();
  const queue = [...seeds];
  while (queue.length > 0) {
    const ref = queue.pop()!;
    let r: Resolution;
    try {
      r = await catalog.resolve(ref, everyone);
    } catch (error) {
      if (error instanceof DmError && error.category === 'not-found') {
        unresolved.add(ref);
        continue;
      }
      throw error;
    }
    if (chosen.has(r.resolved)) continue;
    chosen.set(r.resolved, r);
    for (const f of r.files) {
      if (!/\.(jinja|py|ya?ml|schema|json)$/.test(f.path)) continue;
      const text = (await content(f.sha256)).toString('utf8');
      for (const found of referencesInText(text, hosts)) queue.push(found);
    }
  }

  let base: BundleManifest | undefined;
  if (options.since) base = (await readBundle(options.since)).manifest;
  const baseVersions = new Set(base?.versions.map((v) => `${v.reference} ${v.digest}`) ?? []);
  const baseBlobs = new Set(base?.blobs.map((b) => b.sha256) ?? []);

  const versions: BundleVersion[] = [];
  const blobs = new Map<string, number>();
  const registryNames = new Set<string>();
  for (const r of [...chosen.values()].sort((a, b) => (a.resolved < b.resolved ? -1 : 1))) {
    if (baseVersions.has(`${r.resolved} ${r.digest}`)) continue;
    const row = await data.mirror.bundleVersion(r, r.digest);
    if (!row) continue; // removed since it was resolved
    versions.push({
      reference: r.resolved,
      registry: r.registry,
      collection: r.collection,
      template: r.template,
      version: r.version,
      kind: r.kind,
      dir: row.dir,
      templateFile: r.templateFile,
      schemaFile: r.schemaFile,
      hasExample: row.hasExample,
      digest: r.digest,
      commit: r.commit || null,
      firstSeen: row.firstSeen === null ? null : new Date(row.firstSeen).toISOString(),
      schemaJson: row.schemaJson,
      files: r.files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
    });
    registryNames.add(r.registry);
    for (const f of r.files) if (!baseBlobs.has(f.sha256)) blobs.set(f.sha256, f.size);
  }
  const bundleRegistries: BundleRegistry[] = [...registryNames].sort().map((name) => {
    const k = known.get(name.toLowerCase())!;
    return {
      name,
      visibility: k.visibility === 'private' ? 'private' : 'public',
      // Where it came from, never a local path or credentials: the name references use.
      source: name,
      commit: k.commit,
    };
  });
  const templates = await data.mirror.templates();
  const carried = new Set(versions.map((v) => `${v.registry}\0${v.collection}\0${v.template}`));
  const signingKey = options.signKey ? await readSigningKey(options.signKey) : undefined;
  const { manifest, bytes } = await writeBundle(
    options.out,
    {
      createdAt: (options.now?.() ?? new Date()).toISOString(),
      since: base?.digest ?? null,
      registries: bundleRegistries,
      templates: templates.filter((t) => carried.has(`${t.registry}\0${t.collection}\0${t.name}`)),
      versions,
      blobs: [...blobs].sort(([a], [b]) => (a < b ? -1 : 1)).map(([sha256, size]) => ({ sha256, size })),
    },
    content,
    signingKey ? { signingKey } : {},
  );
  return {
    file: options.out,
    bytes,
    versions: versions.length,
    blobs: blobs.size,
    digest: manifest.digest,
    unresolved: [...unresolved].sort(),
  };
}

export interface ImportResult {
  added: number;
  unchanged: number;
  /** Versions whose digest differs from the one this database first saw: quarantined, not added. */
  quarantined: number;
  registries: number;
  contentBytes: number;
  /** Whether the bundle carries a signature (checked only when a verify key was given). */
  signed: boolean;
  /** Whether its signature was verified with the given key. */
  signatureVerified: boolean;
}

export interface ImportOptions {
  verifyKey?: string;
  now?: number;
  /**
   * Let the bundle add versions to registries this server indexes from their own source or pulls
   * through (`--into-indexed-registries`); by default only registries that came from bundles.
   */
  intoIndexedRegistries?: boolean;
}

/**
 * What `bundle import` prints: the counts, then exactly what was checked and whether the
 * signature was (a signature is only checked against a key the importer gives: without
 * `--verify-key` it proves nothing about who made the bundle).
 */
export function importSummary(file: string, r: ImportResult, verifyKey?: string): string {
  const signature = r.signatureVerified
    ? `signature: verified with ${verifyKey ?? 'the given key'}`
    : r.signed
      ? 'signature: present but NOT checked (no --verify-key): it says nothing about who made the bundle'
      : 'signature: none (the bundle is unsigned)';
  return [
    `${file}: ${r.added} versions added, ${r.unchanged} already present, ${r.registries} registries`,
    "checked: every blob's size and sha256, every version's digest, names and paths, the manifest's digest",
    signature,
    '',
  ].join('\n');
}

/** Verifies the whole bundle, then imports it in one transaction (nothing is written on any error). */
export async function importBundle(
  store: StoreHandle,
  file: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const data = serviceStoreOf(store);
  const verifyKey = options.verifyKey ? await readVerifyKey(options.verifyKey) : undefined;
  const bundle = await readBundle(file, verifyKey ? { verifyKey } : {});
  const { manifest } = bundle;
  const missing = await data.mirror.missingContent(bundle.external);
  if (missing.length > 0) {
    throw new DmError(
      'BUNDLE_BASE_MISSING',
      `${file} is a delta of bundle ${manifest.since}, whose content this database lacks (${missing.length} files, e.g. ${missing[0]}); import that bundle first`,
      { category: 'invalid-input' },
    );
  }
  const byRegistry = new Map<string, AddedVersion[]>();
  for (const v of manifest.versions) {
    const list = byRegistry.get(v.registry) ?? [];
    // The exporter's first-seen time is kept (readBundle checked it is not after the bundle's).
    list.push({ ...v, seenAt: v.firstSeen === null ? null : Date.parse(v.firstSeen) });
    byRegistry.set(v.registry, list);
  }
  const registries = new Map(manifest.registries.map((r) => [r.name, r]));
  if (!options.intoIndexedRegistries) {
    // A registry indexed here from its source (or pulled through) is that source's: a bundle
    // adding to it would serve versions its source never had (docs/mirroring.md, "Bundles").
    const existing = new Map((await data.registries.list()).map((r) => [r.name, r]));
    for (const name of byRegistry.keys()) {
      const row = existing.get(name);
      if (row && row.sourceType !== 'bundle') {
        throw new DmError(
          'BUNDLE_REGISTRY_NOT_BUNDLED',
          `${file} adds versions to registry ${name}, which this server indexes from its ${row.sourceType} source; nothing was imported`,
          {
            category: 'conflict',
            details: { registry: name, sourceType: row.sourceType },
            hint: 'import it under another registry name, delete the indexed registry first, or pass --into-indexed-registries',
          },
        );
      }
    }
  }
  const result = await data.mirror.addVersions(
    [...byRegistry].map(([name, versions]) => {
      const r = registries.get(name);
      return {
        registry: {
          name,
          sourceType: 'bundle' as const,
          source: `bundle:${manifest.digest}`,
          visibility: r?.visibility ?? 'private',
          commit: r?.commit ?? null,
        },
        versions,
      };
    }),
    (sha) => bundle.blobs.get(sha),
    options.now === undefined ? {} : { now: options.now },
  );
  return {
    added: result.added,
    unchanged: result.unchanged,
    quarantined: result.quarantined.length,
    registries: byRegistry.size,
    contentBytes: bundle.contentBytes,
    signed: bundle.signed,
    signatureVerified: verifyKey !== undefined,
  };
}

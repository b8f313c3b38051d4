/**
 * One template version as one OCI artifact (docs/oci.md "The artifact"): an OCI 1.1 image manifest
 * with `artifactType: application/vnd.dm.template.v1`, a config blob describing the version (the
 * same fields a resolution carries, with dm's version digest), and one tar+gzip layer holding the
 * version directory's files at its top. Everything is a pure function of the files and the names,
 * so the same version pushed twice, or served by dm-registry, has the same manifest digest.
 */
import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';
import { tryParseVersion } from '../reference/version.js';
import { comparePaths } from '../registry/compare-paths.js';
import { pathProblem, printable } from '../registry/content-names.js';
import { sha256Hex, versionDigest } from '../registry/digest.js';
import type { TemplateKind } from '../registry/types.js';
import { versionTarGz } from '../registry/version-tar.js';
import type { ResolvedFile } from '../resolve/types.js';
import { readTarball } from '../source/tarball.js';

export const MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
export const INDEX_MEDIA_TYPE = 'application/vnd.oci.image.index.v1+json';
export const ARTIFACT_TYPE = 'application/vnd.dm.template.v1';
export const CONFIG_MEDIA_TYPE = 'application/vnd.dm.template.config.v1+json';
export const LAYER_MEDIA_TYPE = 'application/vnd.oci.image.layer.v1.tar+gzip';

/** Bounds on what is read from a registry before it is parsed (docs/oci.md "Bounds"). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
export const MAX_CONFIG_BYTES = 16 * 1024 * 1024;
export const MAX_LAYER_BYTES = 256 * 1024 * 1024;

/** The config blob: what the version is, and every file with its digest. */
export interface TemplateConfig {
  /** Where the version was published from, e.g. `github.com/acme/templates` or `oci://host/acme/templates`. */
  registry: string;
  /** '' for the root collection. */
  collection: string;
  template: string;
  /** The version directory's name, e.g. `v1.0.3`. */
  version: string;
  kind: TemplateKind;
  templateFile: string;
  schemaFile?: string | undefined;
  /** dm's version digest (docs/registry-layout.md "Digests"). */
  digest: string;
  files: ResolvedFile[];
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  artifactType?: string;
  annotations?: Record<string, string>;
}

export interface ImageManifest {
  schemaVersion: 2;
  mediaType: string;
  artifactType?: string;
  config: Descriptor;
  layers: Descriptor[];
  subject?: Descriptor;
  annotations?: Record<string, string>;
}

export interface TemplateArtifact {
  manifest: Buffer;
  manifestDigest: string;
  config: Buffer;
  configDigest: string;
  layer: Buffer;
  layerDigest: string;
}

export interface ArtifactAnnotations {
  /** `org.opencontainers.image.source`. */
  source?: string | undefined;
  /** `org.opencontainers.image.description`. */
  description?: string | undefined;
  /** `org.opencontainers.image.created`, RFC 3339; absent unless given (the digest then depends on it). */
  created?: string | undefined;
}

export function ociDigest(data: Buffer | string): string {
  return `sha256:${sha256Hex(data)}`;
}

/** A version name as a tag: OCI tags have no `+`, so build metadata is written with `_` (as Helm does). */
export function tagOfVersion(version: string): string {
  return version.replaceAll('+', '_');
}

/** The version a tag stands for, or undefined for tags that are not versions (`latest`, digests' tags). */
export function versionOfTag(tag: string): string | undefined {
  const version = tag.replaceAll('_', '+');
  return tryParseVersion(version) ? version : undefined;
}

/** The config blob's bytes: fixed key order, files sorted as the digest sorts them. */
export function formatConfig(config: TemplateConfig): Buffer {
  const ordered = {
    registry: config.registry,
    collection: config.collection,
    template: config.template,
    version: config.version,
    kind: config.kind,
    templateFile: config.templateFile,
    ...(config.schemaFile ? { schemaFile: config.schemaFile } : {}),
    digest: config.digest,
    files: [...config.files]
      .sort((a, b) => comparePaths(a.path, b.path))
      .map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
  };
  return Buffer.from(JSON.stringify(ordered), 'utf8');
}

/**
 * The manifest's description: the schema's `info.description` (or `info.title`), as `dm push` and
 * dm-registry's /v2/ both write it, so the same version gives the same manifest from either.
 */
export function describeVersion(
  config: TemplateConfig,
  contents: ReadonlyMap<string, Buffer>,
): string | undefined {
  const schema = config.schemaFile ? contents.get(config.schemaFile) : undefined;
  if (!schema) return undefined;
  try {
    const info = (
      parseYaml(schema.toString('utf8'), { source: config.schemaFile }) as {
        info?: { description?: unknown; title?: unknown };
      } | null
    )?.info;
    const text = info?.description ?? info?.title;
    return typeof text === 'string' ? text.trim().slice(0, 1024) || undefined : undefined;
  } catch {
    return undefined;
  }
}

/** Builds the artifact of a version from its files (all of them, keyed by path). */
export async function buildArtifact(
  config: TemplateConfig,
  contents: ReadonlyMap<string, Buffer>,
  annotations: ArtifactAnnotations = {},
): Promise<TemplateArtifact> {
  for (const f of config.files) {
    const data = contents.get(f.path);
    if (!data || sha256Hex(data) !== f.sha256) {
      throw new DmError(
        'DIGEST_MISMATCH',
        `${f.path} of ${config.template}:${config.version} is not the file its digest names`,
      );
    }
  }
  if (contents.size !== config.files.length) {
    throw new DmError(
      'DIGEST_MISMATCH',
      `the files of ${config.template}:${config.version} are not the ones listed`,
    );
  }
  const configBytes = formatConfig(config);
  const layer = await versionTarGz(
    config.files.map((f) => ({ path: f.path, content: contents.get(f.path)! })),
  );
  const configDigest = ociDigest(configBytes);
  const layerDigest = ociDigest(layer);
  const manifestAnnotations: Record<string, string> = {
    ...(annotations.created ? { 'org.opencontainers.image.created': annotations.created } : {}),
    ...(annotations.description ? { 'org.opencontainers.image.description': annotations.description } : {}),
    ...(annotations.source ? { 'org.opencontainers.image.source': annotations.source } : {}),
    'org.opencontainers.image.title': config.template,
    'org.opencontainers.image.version': config.version,
    'vnd.dm.template.digest': config.digest,
  };
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: MANIFEST_MEDIA_TYPE,
    artifactType: ARTIFACT_TYPE,
    config: { mediaType: CONFIG_MEDIA_TYPE, digest: configDigest, size: configBytes.length },
    layers: [
      {
        mediaType: LAYER_MEDIA_TYPE,
        digest: layerDigest,
        size: layer.length,
        annotations: {
          'org.opencontainers.image.title': `${config.template}-${tagOfVersion(config.version)}.tar.gz`,
        },
      },
    ],
    annotations: manifestAnnotations,
  };
  const manifestBytes = Buffer.from(JSON.stringify(manifest), 'utf8');
  return {
    manifest: manifestBytes,
    manifestDigest: ociDigest(manifestBytes),
    config: configBytes,
    configDigest,
    layer,
    layerDigest,
  };
}

function notTemplate(where: string, why: string): DmError {
  return new DmError('OCI_NOT_A_TEMPLATE', `${where} is not a dm template artifact: ${why}`, {
    category: 'invalid-input',
    hint: `dm reads OCI manifests with artifactType ${ARTIFACT_TYPE} (docs/oci.md)`,
  });
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

function descriptor(value: unknown, where: string, what: string): Descriptor {
  const d = value as Partial<Descriptor> | null;
  if (
    !d ||
    typeof d !== 'object' ||
    typeof d.mediaType !== 'string' ||
    typeof d.digest !== 'string' ||
    !DIGEST.test(d.digest) ||
    typeof d.size !== 'number' ||
    !Number.isSafeInteger(d.size) ||
    d.size < 0
  ) {
    throw notTemplate(where, `its ${what} is not a descriptor with a sha256 digest and a size`);
  }
  return d as Descriptor;
}

/** Parses a manifest that must be a dm template's; says what it is otherwise. */
export function parseTemplateManifest(bytes: Buffer, where: string): ImageManifest & { layer: Descriptor } {
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw notTemplate(where, 'its manifest is not JSON');
  }
  const m = data as Partial<ImageManifest> | null;
  if (!m || typeof m !== 'object' || m.schemaVersion !== 2)
    throw notTemplate(where, 'it is not an OCI image manifest');
  if (m.mediaType === INDEX_MEDIA_TYPE) throw notTemplate(where, 'it is an image index, not a manifest');
  const config = descriptor(m.config, where, 'config');
  if (config.mediaType !== CONFIG_MEDIA_TYPE) {
    throw notTemplate(
      where,
      `its config is ${config.mediaType}${m.artifactType ? ` (artifactType ${m.artifactType})` : ''}`,
    );
  }
  if (!Array.isArray(m.layers) || m.layers.length !== 1)
    throw notTemplate(where, 'it must have exactly one layer');
  const layer = descriptor(m.layers[0], where, 'layer');
  if (layer.mediaType !== LAYER_MEDIA_TYPE) throw notTemplate(where, `its layer is ${layer.mediaType}`);
  if (config.size > MAX_CONFIG_BYTES || layer.size > MAX_LAYER_BYTES) {
    throw new DmError(
      'OCI_TOO_LARGE',
      `${where}: its config or layer is larger than dm reads (${MAX_LAYER_BYTES} bytes)`,
      {
        category: 'limit',
      },
    );
  }
  return { ...(m as ImageManifest), config, layer };
}

const KINDS = new Set(['jinja', 'python', 'blueprint']);
const HEX = /^[0-9a-f]{64}$/;

/** Parses and checks a config blob: its files' digests must give its version digest. */
export function parseTemplateConfig(bytes: Buffer, where: string): TemplateConfig {
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw notTemplate(where, 'its config is not JSON');
  }
  const c = data as Partial<TemplateConfig> | null;
  const str = (v: unknown) => typeof v === 'string';
  if (
    !c ||
    typeof c !== 'object' ||
    !str(c.registry) ||
    !str(c.collection) ||
    !str(c.template) ||
    !str(c.version) ||
    !KINDS.has(String(c.kind)) ||
    !str(c.templateFile) ||
    (c.schemaFile !== undefined && !str(c.schemaFile)) ||
    !str(c.digest) ||
    !Array.isArray(c.files)
  ) {
    throw notTemplate(where, 'its config lacks the fields of a template version');
  }
  const files: ResolvedFile[] = [];
  for (const f of c.files as unknown[]) {
    const file = f as Partial<ResolvedFile> | null;
    if (
      !file ||
      !str(file.path) ||
      !HEX.test(String(file.sha256)) ||
      typeof file.size !== 'number' ||
      !Number.isSafeInteger(file.size) ||
      file.size < 0
    ) {
      throw notTemplate(where, 'a file of its config has no path, sha256 or size');
    }
    // One rule for names, whichever way content enters (docs/registry-layout.md "Paths and names").
    const problem = pathProblem(file.path);
    if (problem)
      throw notTemplate(where, `its config lists the file '${printable(String(file.path))}': ${problem}`);
    files.push({ path: file.path as string, sha256: file.sha256 as string, size: file.size });
  }
  let digest: string;
  try {
    digest = versionDigest(files);
  } catch (error) {
    throw notTemplate(where, (error as Error).message);
  }
  if (digest !== c.digest) {
    throw new DmError(
      'DIGEST_MISMATCH',
      `${where}: its config's files give ${digest}, not the ${String(c.digest)} it states`,
    );
  }
  if (!files.some((f) => f.path === c.templateFile))
    throw notTemplate(where, `its template file ${c.templateFile} is not among its files`);
  return { ...(c as TemplateConfig), files };
}

/** The files of a layer, each checked against the config (exactly the listed files, each its sha256). */
export async function unpackLayer(
  layer: Buffer,
  config: TemplateConfig,
  where: string,
): Promise<Map<string, Buffer>> {
  const total = config.files.reduce((n, f) => n + f.size, 0);
  const { files } = await readTarball(layer, {
    source: where,
    maxArchiveBytes: MAX_LAYER_BYTES,
    maxTotalBytes: total,
    maxEntries: config.files.length + 1,
  });
  const listed = new Map(config.files.map((f) => [f.path, f]));
  for (const [path, data] of files) {
    const f = listed.get(path);
    if (!f)
      throw new DmError(
        'DIGEST_MISMATCH',
        `${where}: its layer holds ${path}, which its config does not list`,
      );
    if (sha256Hex(data) !== f.sha256) {
      throw new DmError('DIGEST_MISMATCH', `${where}: ${path} in its layer is not the file its config names`);
    }
  }
  for (const path of listed.keys()) {
    if (!files.has(path)) throw new DmError('DIGEST_MISMATCH', `${where}: its layer lacks ${path}`);
  }
  return files;
}

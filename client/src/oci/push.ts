/**
 * `dm push <version directory | reference> oci://host/owner/repo/[collection/]template`
 * (docs/oci.md "dm push"): the version is checked by the registry layout rules, built into its
 * artifact, and its blobs and manifest uploaded, the tag being the version. A tag that already holds
 * other content is not replaced unless `--force`, and the refusal says which files differ.
 */
import { basename, dirname, join, resolve as resolvePath } from 'node:path';
import type { DmConfig } from '../config/config.js';
import { DmError } from '../error.js';
import { ContentCache } from '../fetch/content-cache.js';
import { loadInput } from '../input.js';
import {
  formatRegistryName,
  formatTemplateName,
  ociRepository,
  parseReference,
  type RegistryReference,
} from '../reference/reference.js';
import { tryParseVersion } from '../reference/version.js';
import { sha256Hex, versionDigest } from '../registry/digest.js';
import { innerDirectory } from '../registry/inner-directory.js';
import { createDirectoryReader, readDirectoryTree } from '../registry/read-directory-tree.js';
import { scanRegistryTree } from '../registry/scan-tree.js';
import { buildResolverChain } from '../resolve/build-chain.js';
import { ResolutionSession } from '../resolve/resolution-session.js';
import {
  type ArtifactAnnotations,
  buildArtifact,
  describeVersion,
  MAX_CONFIG_BYTES,
  parseTemplateConfig,
  parseTemplateManifest,
  type TemplateConfig,
  tagOfVersion,
} from './artifact.js';
import { OciClient } from './distribution.js';
import { addToNamespaceIndex } from './namespace-index.js';

export interface PushOptions {
  config: DmConfig;
  registryDirs?: readonly string[] | undefined;
  /** Replace a tag that holds other content. */
  force?: boolean;
  /** Leave the namespace's dm-index alone (docs/oci.md "Searching an OCI registry"). */
  noIndex?: boolean;
  /** `org.opencontainers.image.created` (from SOURCE_DATE_EPOCH); absent by default so digests repeat. */
  created?: string | undefined;
  onRequest?: (method: string, url: string) => void;
}

export interface PushResult {
  reference: string;
  version: string;
  /** dm's version digest. */
  digest: string;
  /** The manifest's digest. */
  manifest: string;
  /** unchanged: the tag already held exactly this manifest. */
  status: 'pushed' | 'unchanged' | 'replaced';
  files: number;
}

interface Version {
  config: TemplateConfig;
  contents: Map<string, Buffer>;
}

/** A template directory or a registry root is not one version: said, with what to push instead. */
function refuseNonVersionDirectory(dir: string): void {
  const inner = innerDirectory(dir);
  if (inner?.kind === 'version') return;
  if (inner?.kind === 'template') {
    throw new DmError(
      'NOT_A_VERSION_DIRECTORY',
      `${dir} is ${inner.said}, not a version directory: dm push publishes one version`,
      { hint: `push one of them: dm push ${join(dir, inner.versions[0]!)} oci://…` },
    );
  }
  const name = basename(resolvePath(dir));
  if (!tryParseVersion(name)) {
    throw new DmError(
      'NOT_A_VERSION_DIRECTORY',
      `${dir} is not a version directory: '${name}' is not a version name; dm push publishes one <template>/<version>/ directory`,
    );
  }
}

/** A version directory on disk: `<…>/<template>/<version>/`, read and checked as a registry would read it. */
async function versionFromDirectory(dir: string): Promise<Version> {
  const version = basename(dir);
  const template = basename(dirname(dir));
  const tree = await readDirectoryTree(dir);
  const prefix = `${template}/${version}`;
  const entries = [
    { path: template, type: 'tree' as const },
    { path: prefix, type: 'tree' as const },
    ...tree.entries.map((e) => ({ ...e, path: `${prefix}/${e.path}` })),
  ];
  const scan = scanRegistryTree(entries);
  const errors = scan.findings.filter((f) => f.severity === 'error');
  const scanned = scan.versions[0];
  if (!scanned || errors.length > 0) {
    const first = errors[0];
    throw new DmError(
      'LINT_FAILED',
      `${dir} is not a version directory dm can push: ${first ? `${first.code} ${first.message}` : `no template file (${template}.jinja, ${template}.py or blueprint.yaml)`}`,
      {
        category: 'validation',
        hint: 'push a <template>/<version>/ directory of a registry (dm lint <registry> shows every finding)',
      },
    );
  }
  const read = createDirectoryReader(dir);
  const contents = new Map<string, Buffer>();
  const files = [];
  for (const f of scanned.files) {
    const data = Buffer.from(await read(f.path));
    contents.set(f.path, data);
    files.push({ path: f.path, sha256: sha256Hex(data), size: data.byteLength });
  }
  return {
    config: {
      registry: '',
      collection: '',
      template,
      version,
      kind: scanned.kind,
      templateFile: scanned.templateFile,
      schemaFile: scanned.schemaFile,
      digest: versionDigest(files),
      files,
    },
    contents,
  };
}

async function versionFromReference(text: string, options: PushOptions): Promise<Version> {
  const setup = await buildResolverChain({ config: options.config, registryDirs: options.registryDirs });
  const ref = parseReference(text, { defaultRegistry: setup.defaultRegistry, allowMissingVersion: true });
  if (ref.kind !== 'registry') {
    throw new DmError('URL_REFERENCE_NOT_SUPPORTED', `'${text}' is a plain URL; push a registry's version`, {
      category: 'usage',
    });
  }
  const session = new ResolutionSession({
    chain: setup.chain,
    cache: new ContentCache({ root: options.config.dirs.cache }),
    offline: options.config.offline,
  });
  const resolved = (await session.resolve([ref]))[0]!;
  const contents = await session.contents(resolved);
  return {
    config: {
      registry: formatRegistryName(ref),
      collection: ref.collection,
      template: ref.template,
      version: resolved.version,
      kind: resolved.kind,
      templateFile: resolved.templateFile,
      schemaFile: resolved.schemaFile,
      digest: resolved.digest,
      files: resolved.files,
    },
    contents,
  };
}

function parseTarget(text: string): RegistryReference {
  if (!/^oci:\/\//i.test(text)) {
    throw new DmError('INVALID_ARGUMENT', `'${text}' is not an oci:// reference to push to`, {
      category: 'usage',
      hint: 'dm push <version directory or reference> oci://<host>/<owner>/<repo>/[<collection>/]<template>',
    });
  }
  const ref = parseReference(text, { allowMissingVersion: true });
  if (ref.kind !== 'registry') throw new DmError('INVALID_ARGUMENT', `'${text}' is not an oci:// reference`);
  if (ref.version) {
    throw new DmError(
      'INVALID_ARGUMENT',
      `'${text}' names a version; the tag pushed is the version's own name`,
      {
        category: 'usage',
        hint: `leave the version out: ${formatTemplateName(ref)}`,
      },
    );
  }
  return ref;
}

/** What differs between the version a tag holds and the one being pushed, in one phrase. */
function difference(before: TemplateConfig, after: TemplateConfig): string {
  const old = new Map(before.files.map((f) => [f.path, f.sha256]));
  const now = new Map(after.files.map((f) => [f.path, f.sha256]));
  const changed = [...now].filter(([p, s]) => old.has(p) && old.get(p) !== s).map(([p]) => p);
  const added = [...now.keys()].filter((p) => !old.has(p));
  const removed = [...old.keys()].filter((p) => !now.has(p));
  const parts = [
    changed.length ? `changed ${changed.slice(0, 5).join(', ')}${changed.length > 5 ? ', …' : ''}` : '',
    added.length ? `added ${added.slice(0, 5).join(', ')}${added.length > 5 ? ', …' : ''}` : '',
    removed.length ? `removed ${removed.slice(0, 5).join(', ')}${removed.length > 5 ? ', …' : ''}` : '',
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : 'the same files, described differently';
}

export async function push(
  sourceText: string,
  targetText: string,
  options: PushOptions,
): Promise<PushResult> {
  const target = parseTarget(targetText);
  // What the source is, decided as for every command's argument (docs/client.md "What an argument is").
  const source = loadInput(sourceText, { accept: ['directory', 'reference'], what: 'the source' });
  if (source.kind === 'directory') refuseNonVersionDirectory(sourceText);
  const version =
    source.kind === 'directory'
      ? await versionFromDirectory(resolvePath(sourceText))
      : await versionFromReference(sourceText, options);
  if (!version.config.registry) version.config.registry = formatRegistryName(target);
  const annotations: ArtifactAnnotations = {
    source: version.config.registry.startsWith('oci://') ? undefined : `https://${version.config.registry}`,
    description: describeVersion(version.config, version.contents),
    created: options.created,
  };
  const artifact = await buildArtifact(version.config, version.contents, annotations);
  const client = new OciClient({
    host: target.host,
    plainHttp: options.config.oci?.plainHttp ?? false,
    authFiles: options.config.oci?.authFiles ?? [],
    timeoutMs: options.config.httpTimeoutMs,
    ...(options.onRequest ? { onRequest: options.onRequest } : {}),
  });
  const repository = ociRepository(target);
  const tag = tagOfVersion(version.config.version);
  const reference = `${formatTemplateName(target)}:${version.config.version}`;
  const existing = await client.headManifest(repository, tag);
  let status: PushResult['status'] = 'pushed';
  if (existing === artifact.manifestDigest) status = 'unchanged';
  else if (existing) {
    if (!options.force) {
      let what = 'other content';
      try {
        const { bytes } = await client.getManifest(repository, existing);
        const manifest = parseTemplateManifest(bytes, reference);
        const held = parseTemplateConfig(
          await client.getBlob(repository, manifest.config.digest, MAX_CONFIG_BYTES),
          reference,
        );
        what =
          held.digest === version.config.digest
            ? `the same files with other metadata (${existing})`
            : `other files: ${difference(held, version.config)}`;
      } catch (error) {
        if (!(error instanceof DmError)) throw error;
        what = `something that is not this template (${error.message})`;
      }
      throw new DmError('OCI_TAG_EXISTS', `${reference} already holds ${what}; nothing was pushed`, {
        category: 'conflict',
        hint: 'publish a new version, or pass --force to replace the tag',
        details: { existing, pushing: artifact.manifestDigest },
      });
    }
    status = 'replaced';
  }
  if (status !== 'unchanged') {
    await client.putBlob(repository, artifact.configDigest, artifact.config);
    await client.putBlob(repository, artifact.layerDigest, artifact.layer);
    await client.putManifest(repository, tag, artifact.manifest);
  }
  if (!options.noIndex) {
    await addToNamespaceIndex(client, formatRegistryName(target), `${target.owner}/${target.repo}`, {
      name: `${target.collection ? `${target.collection}/` : ''}${target.template}`,
      description: annotations.description,
      version: version.config.version,
    });
  }
  return {
    reference,
    version: version.config.version,
    digest: version.config.digest,
    manifest: artifact.manifestDigest,
    status,
    files: version.config.files.length,
  };
}

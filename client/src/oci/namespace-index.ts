/**
 * The `dm-index` artifact (docs/oci.md "Searching an OCI registry"): OCI registries have no search,
 * and their catalog API is usually closed, so `dm push` keeps a list of a namespace's templates in
 * the repository `<owner>/<repo>/dm-index`, tag `latest`: an OCI 1.1 artifact
 * (`artifactType: application/vnd.dm.index.v1`, the empty config, one JSON layer) that `dm search`
 * reads. It is advisory — what a namespace holds is what its tags say — and a mirror or a CI job can
 * publish it as well as `dm push` does.
 */
import { DmError } from '../error.js';
import { newestFirst } from '../reference/version.js';
import { comparePaths } from '../registry/compare-paths.js';
import { MANIFEST_MEDIA_TYPE, ociDigest } from './artifact.js';
import type { OciClient } from './distribution.js';

export const INDEX_ARTIFACT_TYPE = 'application/vnd.dm.index.v1';
export const INDEX_LAYER_MEDIA_TYPE = 'application/vnd.dm.index.v1+json';
export const EMPTY_MEDIA_TYPE = 'application/vnd.oci.empty.v1+json';
export const INDEX_REPOSITORY = 'dm-index';
export const INDEX_TAG = 'latest';
const MAX_INDEX_BYTES = 16 * 1024 * 1024;

export interface IndexEntry {
  /** `[<collection>/]<template>`. */
  name: string;
  description?: string | undefined;
  /** Newest first. */
  versions: string[];
}

export interface NamespaceIndex {
  /** `oci://host/owner/repo`. */
  namespace: string;
  templates: IndexEntry[];
}

/** Reads a namespace's index; undefined when it has none. */
export async function readNamespaceIndex(
  client: OciClient,
  namespace: string,
  repositoryPrefix: string,
): Promise<NamespaceIndex | undefined> {
  const repository = `${repositoryPrefix}/${INDEX_REPOSITORY}`;
  if ((await client.headManifest(repository, INDEX_TAG)) === undefined) return undefined;
  const { bytes } = await client.getManifest(repository, INDEX_TAG);
  const where = `${namespace}/${INDEX_REPOSITORY}:${INDEX_TAG}`;
  const bad = (why: string) =>
    new DmError('OCI_NOT_A_TEMPLATE', `${where} is not a dm index: ${why}`, { category: 'invalid-input' });
  let manifest: {
    artifactType?: unknown;
    layers?: { mediaType?: unknown; digest?: unknown; size?: unknown }[];
  };
  try {
    manifest = JSON.parse(bytes.toString('utf8')) as typeof manifest;
  } catch {
    throw bad('its manifest is not JSON');
  }
  const layer = manifest.layers?.[0];
  if (manifest.artifactType !== INDEX_ARTIFACT_TYPE || !layer || layer.mediaType !== INDEX_LAYER_MEDIA_TYPE) {
    throw bad(`its artifactType is ${String(manifest.artifactType)}`);
  }
  if (typeof layer.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(layer.digest))
    throw bad('its layer has no digest');
  const body = await client.getBlob(repository, layer.digest, MAX_INDEX_BYTES);
  let data: unknown;
  try {
    data = JSON.parse(body.toString('utf8'));
  } catch {
    throw bad('its list is not JSON');
  }
  const templates = (data as { templates?: unknown })?.templates;
  if (!Array.isArray(templates)) throw bad('it has no template list');
  const entries: IndexEntry[] = [];
  for (const t of templates as { name?: unknown; description?: unknown; versions?: unknown }[]) {
    if (!t || typeof t.name !== 'string' || !Array.isArray(t.versions)) continue;
    entries.push({
      name: t.name,
      ...(typeof t.description === 'string' ? { description: t.description } : {}),
      versions: t.versions.filter((v): v is string => typeof v === 'string'),
    });
  }
  return { namespace, templates: entries };
}

/** Adds (or updates) one template's entry and writes the index again. */
export async function addToNamespaceIndex(
  client: OciClient,
  namespace: string,
  repositoryPrefix: string,
  entry: { name: string; description?: string | undefined; version: string },
): Promise<void> {
  const current = (await readNamespaceIndex(client, namespace, repositoryPrefix).catch((error: unknown) => {
    // An index that is not dm's is replaced, not merged: it was unreadable to every dm anyway.
    if (error instanceof DmError && error.code === 'OCI_NOT_A_TEMPLATE') return undefined;
    throw error;
  })) ?? { namespace, templates: [] };
  const others = current.templates.filter((t) => t.name !== entry.name);
  const previous = current.templates.find((t) => t.name === entry.name);
  const versions = newestFirst([...new Set([...(previous?.versions ?? []), entry.version])]);
  const templates = [
    ...others,
    { name: entry.name, ...(entry.description ? { description: entry.description } : {}), versions },
  ].sort((a, b) => comparePaths(a.name, b.name));
  const layer = Buffer.from(JSON.stringify({ namespace, templates }), 'utf8');
  const empty = Buffer.from('{}', 'utf8');
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MANIFEST_MEDIA_TYPE,
      artifactType: INDEX_ARTIFACT_TYPE,
      config: { mediaType: EMPTY_MEDIA_TYPE, digest: ociDigest(empty), size: empty.length },
      layers: [{ mediaType: INDEX_LAYER_MEDIA_TYPE, digest: ociDigest(layer), size: layer.length }],
    }),
    'utf8',
  );
  const repository = `${repositoryPrefix}/${INDEX_REPOSITORY}`;
  await client.putBlob(repository, ociDigest(empty), empty);
  await client.putBlob(repository, ociDigest(layer), layer);
  await client.putManifest(repository, INDEX_TAG, manifest);
}

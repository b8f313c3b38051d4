/**
 * `oci://` references in the resolver chain (docs/oci.md "References"): the versions are a
 * repository's tags, the patch-float rule picks among them as among a git registry's directories,
 * and a version's files come from its one layer, checked file by file against its config. A
 * resolution carries the manifest digest, which dm.lock records beside dm's version digest.
 */
import { DmError, isDmError } from '../error.js';
import { pickLatest, pickVersion } from '../reference/pick-version.js';
import {
  formatReference,
  formatTemplateName,
  ociRepository,
  type RegistryReference,
} from '../reference/reference.js';
import type { Resolution, Resolver } from '../resolve/resolver.js';
import type { ResolvedFile, ResolvedVersion } from '../resolve/types.js';
import {
  MAX_CONFIG_BYTES,
  MAX_LAYER_BYTES,
  parseTemplateConfig,
  parseTemplateManifest,
  tagOfVersion,
  unpackLayer,
  versionOfTag,
} from './artifact.js';
import { OciClient } from './distribution.js';

export interface OciSettings {
  /** Plain HTTP (`--plain-http`). */
  plainHttp: boolean;
  /** Credential files, in the order they are read (auth.ts `authFiles`). */
  authFiles: readonly string[];
  timeoutMs?: number | undefined;
  onRequest?: ((method: string, url: string) => void) | undefined;
}

/** `oci://host/owner/repo/[c/]t` → host and repository. */
export function splitOciTemplate(template: string): { host: string; repository: string } | undefined {
  if (!template.startsWith('oci://')) return undefined;
  const rest = template.slice('oci://'.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return undefined;
  return { host: rest.slice(0, slash), repository: rest.slice(slash + 1) };
}

export class OciResolver implements Resolver {
  readonly name = 'OCI registries';
  readonly acceptsOci = true;
  private readonly clients = new Map<string, OciClient>();
  private readonly tagLists = new Map<string, Promise<string[]>>();
  private readonly layers = new Map<string, Promise<Map<string, Buffer>>>();

  constructor(private readonly settings: OciSettings) {}

  client(host: string): OciClient {
    let client = this.clients.get(host);
    if (!client) {
      client = new OciClient({
        host,
        plainHttp: this.settings.plainHttp,
        authFiles: this.settings.authFiles,
        ...(this.settings.timeoutMs ? { timeoutMs: this.settings.timeoutMs } : {}),
        ...(this.settings.onRequest ? { onRequest: this.settings.onRequest } : {}),
      });
      this.clients.set(host, client);
    }
    return client;
  }

  private tags(host: string, repository: string): Promise<string[]> {
    const key = `${host}/${repository}`;
    let tags = this.tagLists.get(key);
    if (!tags) {
      tags = this.client(host).listTags(repository);
      this.tagLists.set(key, tags);
      tags.catch(() => this.tagLists.delete(key));
    }
    return tags;
  }

  async versions(ref: RegistryReference): Promise<string[] | null> {
    if (ref.scheme !== 'oci') return null;
    const tags = await this.tags(ref.host, ociRepository(ref));
    return tags.flatMap((t) => versionOfTag(t) ?? []);
  }

  async resolve(refs: readonly RegistryReference[]): Promise<Resolution[]> {
    return Promise.all(
      refs.map(async (ref) => {
        if (ref.scheme !== 'oci') return null;
        try {
          return await this.resolveOne(ref);
        } catch (error) {
          if (isDmError(error)) return error;
          throw error;
        }
      }),
    );
  }

  private async resolveOne(ref: RegistryReference): Promise<ResolvedVersion> {
    const template = formatTemplateName(ref);
    const repository = ociRepository(ref);
    const versions = (await this.versions(ref)) ?? [];
    if (versions.length === 0) {
      throw new DmError('TEMPLATE_NOT_FOUND', `${template} has no version tags`, {
        category: 'not-found',
        hint: 'push a version with dm push, or check the repository name',
      });
    }
    const version = ref.version
      ? pickVersion(versions, ref.version, { subject: template })
      : pickLatest(versions, { subject: template });
    const where = `${template}:${version}`;
    const client = this.client(ref.host);
    const { bytes, digest } = await client.getManifest(repository, tagOfVersion(version));
    const manifest = parseTemplateManifest(bytes, where);
    const config = parseTemplateConfig(
      await client.getBlob(repository, manifest.config.digest, MAX_CONFIG_BYTES),
      where,
    );
    if (config.version !== version) {
      throw new DmError(
        'DIGEST_MISMATCH',
        `${where}: the tag holds version ${config.version}, not ${version}`,
      );
    }
    return {
      reference: formatReference(ref),
      template,
      version,
      commit: '',
      manifest: digest,
      kind: config.kind,
      templateFile: config.templateFile,
      schemaFile: config.schemaFile,
      files: config.files,
      digest: config.digest,
    };
  }

  /** Every file of a resolved OCI version (one layer download per manifest digest). */
  async contents(resolved: ResolvedVersion): Promise<Map<string, Buffer>> {
    const split = splitOciTemplate(resolved.template);
    if (!split || !resolved.manifest) {
      throw new DmError(
        'CONTENT_NOT_FOUND',
        `${resolved.template}:${resolved.version} has no OCI manifest digest`,
        {
          category: 'not-found',
        },
      );
    }
    const key = resolved.manifest;
    let files = this.layers.get(key);
    if (!files) {
      files = (async () => {
        const where = `${resolved.template}:${resolved.version}`;
        const client = this.client(split.host);
        const { bytes } = await client.getManifest(split.repository, resolved.manifest!);
        const manifest = parseTemplateManifest(bytes, where);
        const config = parseTemplateConfig(
          await client.getBlob(split.repository, manifest.config.digest, MAX_CONFIG_BYTES),
          where,
        );
        if (config.digest !== resolved.digest) {
          throw new DmError(
            'DIGEST_MISMATCH',
            `${where}: the manifest ${key} holds ${config.digest}, not ${resolved.digest}`,
          );
        }
        const layer = await client.getBlob(split.repository, manifest.layer.digest, MAX_LAYER_BYTES);
        return unpackLayer(layer, config, where);
      })();
      this.layers.set(key, files);
      files.catch(() => this.layers.delete(key));
    }
    return files;
  }

  async fetchFile(resolved: ResolvedVersion, file: ResolvedFile): Promise<Buffer | null> {
    if (!resolved.template.startsWith('oci://')) return null;
    return (await this.contents(resolved)).get(file.path) ?? null;
  }
}

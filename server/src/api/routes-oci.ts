/**
 * The OCI distribution API's pull side (docs/oci.md "dm-registry as an OCI registry"): every
 * version the server holds — indexed, mirrored or imported from a bundle — as the artifact
 * `dm push` would make of it, under `/v2/dm/<host>/<owner>/<repo>/[<collection>/]<template>`,
 * tagged by version. Manifests and blobs are built from stored content once per version digest
 * (a byte-bounded cache; concurrent requests share one build) and are immutable: strong ETags,
 * `Docker-Content-Digest`. Visibility is the server's: a template the caller may not read is the
 * same `NAME_UNKNOWN` as one that does not exist. Errors have the spec's codes and body.
 */
import { type Context, Hono } from 'hono';
import { LRUCache } from 'lru-cache';
import { isDmError } from '../../../client/src/error.js';
import {
  buildArtifact,
  describeVersion,
  INDEX_MEDIA_TYPE,
  MANIFEST_MEDIA_TYPE,
  type TemplateArtifact,
  tagOfVersion,
  versionOfTag,
} from '../../../client/src/oci/artifact.js';
import type { TemplateKind } from '../../../client/src/registry/index.js';
import type { RequestAccess } from './access.js';
import { type AppEnv, notModified } from './http.js';
import { parseTemplatePath } from './template-path.js';

/** The first path segment of every dm name under /v2/ (docs/oci.md). */
export const OCI_PREFIX = 'dm';

const DIGEST = /^sha256:[0-9a-f]{64}$/;
// The distribution spec's tag grammar.
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

class OciError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function ociError(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ errors: [{ code, message }] }), {
    status,
    headers: {
      'content-type': 'application/json',
      'docker-distribution-api-version': 'registry/2.0',
      ...headers,
    },
  });
}

/** `Basic base64(user:token)` (what OCI clients send from their auth files) read as the token; the user is not checked. */
function authorizationOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const basic = /^Basic\s+(\S+)$/i.exec(header);
  if (!basic) return header;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const token = decoded.slice(decoded.indexOf(':') + 1);
  // Clients without credentials answer a Basic challenge with an empty pair: anonymous.
  return token === '' ? undefined : `Bearer ${token}`;
}

interface Located {
  name: string;
  versions: {
    id: number;
    version: string;
    kind: string;
    digest: string;
    templateFile: string;
    schemaFile: string | null;
  }[];
  registryName: string;
  collection: string;
  template: string;
  visibility: string;
}

/**
 * Built artifacts by template and version digest (the config names the template, so both are the
 * key), bounded in bytes; concurrent requests for one share a build.
 */
export class ArtifactCache {
  private readonly built: LRUCache<string, TemplateArtifact>;
  private readonly building = new Map<string, Promise<TemplateArtifact>>();
  /** Blob digest → artifact key, for blob requests (a blob is found through its manifest's build). */
  private readonly blobs = new LRUCache<string, string>({ max: 100_000 });
  builds = 0;

  constructor(maxBytes = 64 * 1024 * 1024) {
    this.built = new LRUCache({
      maxSize: maxBytes,
      sizeCalculation: (a) => a.manifest.length + a.config.length + a.layer.length || 1,
    });
  }

  key(name: string, digest: string): string {
    return `${name}\0${digest}`;
  }

  /** A built artifact of the repository `name` holding the blob `digest`, if one is cached. */
  peekByBlob(name: string, digest: string): TemplateArtifact | undefined {
    const key = this.blobs.get(`${name}\0${digest}`);
    return key ? this.built.get(key) : undefined;
  }

  async get(key: string, build: () => Promise<TemplateArtifact>): Promise<TemplateArtifact> {
    const hit = this.built.get(key);
    if (hit) return hit;
    let pending = this.building.get(key);
    if (!pending) {
      pending = (async () => {
        this.builds++;
        const artifact = await build();
        this.built.set(key, artifact);
        const name = key.slice(0, key.indexOf('\0'));
        for (const d of [artifact.configDigest, artifact.layerDigest]) this.blobs.set(`${name}\0${d}`, key);
        return artifact;
      })().finally(() => this.building.delete(key));
      this.building.set(key, pending);
    }
    return pending;
  }
}

/** The process's artifact cache (shared by every app in it; bounded). */
export const artifactCache = new ArtifactCache();

export function ociRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const versionRows = new WeakMap<object, Located['versions']>();

  const access = async (
    header: string | undefined,
    service: AppEnv['Variables']['service'],
  ): Promise<RequestAccess> => {
    try {
      return await service.tokens.accessFor(authorizationOf(header));
    } catch (error) {
      if (isDmError(error) && error.category === 'unauthorized') {
        throw new OciError(401, 'UNAUTHORIZED', error.message);
      }
      throw error;
    }
  };

  /** The template a name names, if the caller may read it; NAME_UNKNOWN otherwise (missing or private alike). */
  const locate = async (
    name: string,
    service: AppEnv['Variables']['service'],
    who: RequestAccess,
  ): Promise<Located> => {
    const segments = name.split('/');
    const unknown = () => new OciError(404, 'NAME_UNKNOWN', `repository name not known to registry: ${name}`);
    if (segments[0] !== OCI_PREFIX || segments.length < 5 || segments.length > 6) throw unknown();
    let p: ReturnType<typeof parseTemplatePath>;
    try {
      p = parseTemplatePath(segments.slice(1).join('/'));
    } catch {
      throw unknown();
    }
    let found: Awaited<ReturnType<typeof service.catalog.locate>>;
    try {
      found = await service.catalog.locate(p, who);
    } catch (error) {
      if (isDmError(error) && error.category === 'not-found') throw unknown();
      throw error;
    }
    const { registry, template } = found;
    // The catalog keeps one view of a template until its registry changes: its version rows are
    // read once per view, so a manifest or blob request of a built artifact reads no database.
    let versions = versionRows.get(template);
    if (!versions) {
      versions = await service.data.reads.versions(registry.id, p.collection, p.template);
      versionRows.set(template, versions);
    }
    if (versions.length === 0) throw unknown();
    return {
      name,
      versions,
      registryName: registry.name,
      collection: p.collection,
      template: p.template,
      visibility: registry.visibility,
    };
  };

  const artifactOf = (
    located: Located,
    row: Located['versions'][number],
    service: AppEnv['Variables']['service'],
  ): Promise<TemplateArtifact> =>
    artifactCache.get(artifactCache.key(located.name, row.digest), async () => {
      const stored = await service.data.reads.versionContents(row.id);
      const contents = new Map(stored.map((f) => [f.path, Buffer.from(f.content)]));
      const { sha256Hex } = await import('../../../client/src/registry/index.js');
      const config = {
        registry: located.registryName,
        collection: located.collection,
        template: located.template,
        version: row.version,
        kind: row.kind as TemplateKind,
        templateFile: row.templateFile,
        schemaFile: row.schemaFile ?? undefined,
        digest: row.digest,
        files: stored.map((f) => ({ path: f.path, sha256: sha256Hex(f.content), size: f.content.length })),
      };
      return buildArtifact(config, contents, {
        source: `https://${located.registryName}`,
        description: describeVersion(config, contents),
      });
    });

  /** Immutable content: strong ETag (the digest), Docker-Content-Digest, caching by visibility. */
  const content = (
    c: Context<AppEnv>,
    body: Buffer,
    digest: string,
    type: string,
    visibility: string,
    range?: string | undefined,
  ): Response => {
    const etag = `"${digest}"`;
    const headers: Record<string, string> = {
      'content-type': type,
      'docker-content-digest': digest,
      etag,
      'cache-control':
        visibility === 'public'
          ? 'public, max-age=31536000, immutable'
          : 'private, max-age=31536000, immutable',
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
      'docker-distribution-api-version': 'registry/2.0',
    };
    if (visibility !== 'public') headers.vary = 'Authorization';
    if (notModified(c, etag)) {
      return new Response(null, { status: 304, headers });
    }
    let status = 200;
    let slice = body;
    if (range) {
      const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
      const size = body.length;
      let start = m?.[1] ? Number(m[1]) : undefined;
      let end = m?.[2] ? Number(m[2]) : undefined;
      if (m && start === undefined && end !== undefined) {
        start = Math.max(0, size - end);
        end = size - 1;
      }
      if (!m || start === undefined || start >= size || (end !== undefined && end < start)) {
        return new Response(null, {
          status: 416,
          headers: { ...headers, 'content-range': `bytes */${size}` },
        });
      }
      end = Math.min(end ?? size - 1, size - 1);
      slice = body.subarray(start, end + 1);
      status = 206;
      headers['content-range'] = `bytes ${start}-${end}/${size}`;
    }
    headers['content-length'] = String(slice.length);
    return new Response(c.req.method === 'HEAD' ? null : new Uint8Array(slice), { status, headers });
  };

  // Answers are built as Responses of their own (immutable bytes, the spec's error bodies): the
  // request id the tracker gave the request is put on each (docs/server.md "HTTP API").
  app.all('/*', async (c) => {
    const res = await answer(c);
    const id = c.get('requestId');
    if (id) res.headers.set('X-Request-Id', id);
    return res;
  });

  const answer = async (c: Context<AppEnv>): Promise<Response> => {
    const service = c.get('service');
    const method = c.req.method;
    const path = c.req.path.replace(/^\/v2/, '');
    try {
      if (method !== 'GET' && method !== 'HEAD') {
        throw new OciError(405, 'UNSUPPORTED', 'this registry serves pulls only (GET and HEAD)');
      }
      if (path === '/' || path === '') {
        // The version check. Without credentials: 401 with a Basic challenge, so that clients
        // holding credentials (read tokens, docs/oci.md) send them; clients without any go on
        // anonymously and read what is public.
        const header = c.req.header('authorization');
        if (!header) {
          return ociError(
            401,
            'UNAUTHORIZED',
            'authentication is optional: anonymous readers see public templates',
            {
              'www-authenticate': 'Basic realm="dm-registry"',
            },
          );
        }
        await access(header, service);
        return new Response('{}', {
          status: 200,
          headers: { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0' },
        });
      }
      const match = /^\/(.+)\/(manifests|blobs|tags|referrers)\/([^/]+)$/.exec(path);
      if (!match) throw new OciError(404, 'NOT_FOUND', `no endpoint ${method} /v2${path}`);
      const [, rawName, kind, rawReference] = match as unknown as [string, string, string, string];
      let name: string;
      let reference: string;
      try {
        name = decodeURIComponent(rawName);
        reference = decodeURIComponent(rawReference);
      } catch {
        throw new OciError(400, 'NAME_INVALID', 'the repository name is not valid');
      }
      if (kind === 'referrers') {
        // No dm artifact has referrers yet (signatures are separate artifacts, docs/oci.md): always
        // an empty index, never 404 — after the same visibility check as the subject's.
        if (!DIGEST.test(reference))
          throw new OciError(400, 'DIGEST_INVALID', `'${reference}' is not a sha256 digest`);
        await locate(name, service, await access(c.req.header('authorization'), service));
        const headers: Record<string, string> = { 'content-type': INDEX_MEDIA_TYPE };
        if (c.req.query('artifactType') !== undefined) headers['oci-filters-applied'] = 'artifactType';
        return new Response(
          JSON.stringify({ schemaVersion: 2, mediaType: INDEX_MEDIA_TYPE, manifests: [] }),
          {
            status: 200,
            headers,
          },
        );
      }
      if (kind === 'tags') {
        if (reference !== 'list') throw new OciError(404, 'NOT_FOUND', `no endpoint ${method} /v2${path}`);
        const located = await locate(name, service, await access(c.req.header('authorization'), service));
        const tags = located.versions
          .map((v) => tagOfVersion(v.version))
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const nText = c.req.query('n');
        const last = c.req.query('last');
        let list = last === undefined ? tags : tags.filter((t) => t > last);
        let link: string | undefined;
        if (nText !== undefined) {
          const n = Number(nText);
          if (!Number.isInteger(n) || n < 0)
            throw new OciError(400, 'PAGINATION_NUMBER_INVALID', `n must be a whole number, not '${nText}'`);
          if (list.length > n) {
            list = list.slice(0, n);
            const after = list.at(-1);
            if (after !== undefined)
              link = `</v2/${name}/tags/list?n=${n}&last=${encodeURIComponent(after)}>; rel="next"`;
          }
        }
        return new Response(JSON.stringify({ name, tags: list }), {
          status: 200,
          headers: { 'content-type': 'application/json', ...(link ? { link } : {}) },
        });
      }
      const located = await locate(name, service, await access(c.req.header('authorization'), service));
      if (kind === 'manifests') {
        let row: Located['versions'][number] | undefined;
        if (DIGEST.test(reference)) {
          for (const v of located.versions) {
            const a = await artifactOf(located, v, service);
            if (a.manifestDigest === reference) {
              row = v;
              break;
            }
          }
        } else {
          if (!TAG.test(reference)) throw new OciError(400, 'TAG_INVALID', `'${reference}' is not a tag`);
          const version = versionOfTag(reference);
          row = version === undefined ? undefined : located.versions.find((v) => v.version === version);
        }
        if (!row) throw new OciError(404, 'MANIFEST_UNKNOWN', `manifest unknown: ${name}:${reference}`);
        const a = await artifactOf(located, row, service);
        return content(c, a.manifest, a.manifestDigest, MANIFEST_MEDIA_TYPE, located.visibility);
      }
      // blobs
      if (!DIGEST.test(reference))
        throw new OciError(400, 'DIGEST_INVALID', `'${reference}' is not a sha256 digest`);
      // Only within this repository: a blob is never served under another template's name.
      let artifact = artifactCache.peekByBlob(name, reference);
      if (!artifact) {
        for (const v of located.versions) {
          const a = await artifactOf(located, v, service);
          if (a.configDigest === reference || a.layerDigest === reference) {
            artifact = a;
            break;
          }
        }
      }
      if (!artifact) throw new OciError(404, 'BLOB_UNKNOWN', `blob unknown to registry: ${reference}`);
      const isConfig = artifact.configDigest === reference;
      return content(
        c,
        isConfig ? artifact.config : artifact.layer,
        reference,
        isConfig
          ? 'application/vnd.dm.template.config.v1+json'
          : 'application/vnd.oci.image.layer.v1.tar+gzip',
        located.visibility,
        isConfig ? undefined : c.req.header('range'),
      );
    } catch (error) {
      if (error instanceof OciError) {
        return ociError(
          error.status,
          error.code,
          error.message,
          error.status === 401 ? { 'www-authenticate': 'Basic realm="dm-registry"' } : {},
        );
      }
      if (isDmError(error) && (error.category === 'unreachable' || error.category === 'limit')) {
        return ociError(error.category === 'limit' ? 413 : 503, 'UNAVAILABLE', error.message);
      }
      throw error;
    }
  };
  return app;
}

/**
 * A registry server (`--registry-url`, docs/server.md "HTTP API") as a resolver: one batch
 * `POST /api/v1/resolve` for all references, file contents from the immutable
 * `…/versions/{version}/files/{path}` endpoint, version lists from `GET /api/v1/templates/…`.
 * A reference to a registry the server does not host is "not mine", so the chain goes on; should
 * nothing else take it, the failure's hint says the server does not host it.
 */

import { type DmError, relayedError } from '../error.js';
import { httpSignal } from '../http-limit.js';
import { formatReference, formatTemplateName, type RegistryReference } from '../reference/reference.js';
import type { BatchResolveItem, Resolution as ServerResolution } from '../wire/registry-api.js';
import {
  MAX_FILE_BYTES,
  registryBody,
  registryFailure,
  registryJson,
  registryUnreachable,
} from './registry-answer.js';
import { Declined, type Resolution, type Resolver } from './resolver.js';
import { resolvedFromServer } from './server-resolution.js';
import type { ResolvedFile, ResolvedVersion } from './types.js';

/** Codes by which a server says "I do not host that registry" rather than "no such version". */
const NOT_HOSTED = new Set(['REGISTRY_NOT_FOUND', 'UNKNOWN_REGISTRY']);
const MAX_BATCH = 500;
/** How many changed files a quarantine warning names before "and N more files". */
const WARNING_FILES = 5;

export interface ServerResolverOptions {
  url: string;
  token?: string | undefined;
  /** Request timeout in milliseconds. Default 30 s. */
  timeoutMs?: number;
  /** Counts HTTP requests (for `dm install`'s report and the bench). */
  onRequest?: (method: string, url: string) => void;
  /** Warnings: a version the server reports quarantined (docs/integrity-store.md). */
  onWarning?: (message: string) => void;
}

export class ServerResolver implements Resolver {
  readonly name: string;
  private readonly base: string;

  constructor(private readonly options: ServerResolverOptions) {
    this.base = options.url.replace(/\/+$/, '');
    this.name = `registry server ${this.base}`;
  }

  private async request(method: string, path: string, body?: unknown): Promise<Response> {
    const url = `${this.base}${path}`;
    this.options.onRequest?.(method, url);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    try {
      return await fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: httpSignal(this.options.timeoutMs),
      });
    } catch (error) {
      throw registryUnreachable(this.base, error, this.options.timeoutMs);
    }
  }

  private failure(response: Response, what: string): Promise<DmError> {
    return registryFailure(response, this.base, what, this.options.timeoutMs);
  }

  async resolve(refs: readonly RegistryReference[]): Promise<Resolution[]> {
    const out: Resolution[] = [];
    for (let start = 0; start < refs.length; start += MAX_BATCH) {
      const batch = refs.slice(start, start + MAX_BATCH);
      const texts = batch.map(formatReference);
      const response = await this.request('POST', '/api/v1/resolve', { refs: texts });
      if (!response.ok)
        throw await this.failure(
          response,
          `the registry server could not resolve ${texts.length} references`,
        );
      const { results } = await registryJson<{ results: BatchResolveItem[] }>(
        response,
        this.base,
        this.options.timeoutMs,
      );
      results.forEach((item, i) => {
        if (item.resolution) {
          out.push(this.toResolved(texts[i]!, item.resolution));
        } else if (!item.error || NOT_HOSTED.has(item.error.code)) {
          const ref = batch[i]!;
          out.push(
            new Declined(
              `the registry server at ${this.base} does not host ${ref.host}/${ref.owner}/${ref.repo}`,
            ),
          );
        } else {
          // A batch item has no status of its own: a code dm does not know is a plain error.
          out.push(relayedError(0, item.error, (message) => message));
        }
      });
    }
    return out;
  }

  /** The one mapping (server-resolution.ts), and a warning when the server holds the version in quarantine. */
  private toResolved(reference: string, r: ServerResolution): ResolvedVersion {
    const resolved = resolvedFromServer(reference, r);
    if (r.quarantined) {
      // The server serves the content it first saw; its source has since changed it.
      // A few of the changed files, and how many more: one line, however many files changed.
      const files = r.quarantined.changedFiles.map((f) => f.path);
      const named =
        files.length > WARNING_FILES
          ? `${files.slice(0, WARNING_FILES).join(', ')} and ${files.length - WARNING_FILES} more files`
          : files.join(', ') || 'it';
      this.options.onWarning?.(
        `${resolved.template} ${r.version} is quarantined on ${this.base} since ${r.quarantined.since}: its source changed ${named} (dm serves the content first seen; docs/integrity-store.md)`,
      );
    }
    return resolved;
  }

  async versions(ref: RegistryReference): Promise<string[] | null> {
    const response = await this.request('GET', `/api/v1/templates/${encodePath(formatTemplateName(ref))}`);
    if (response.status === 404) {
      const error = await this.failure(response, formatTemplateName(ref));
      return NOT_HOSTED.has(error.code) ? null : [];
    }
    if (!response.ok)
      throw await this.failure(response, `cannot list the versions of ${formatTemplateName(ref)}`);
    const body = await registryJson<{ versions: { version: string }[] }>(
      response,
      this.base,
      this.options.timeoutMs,
    );
    return body.versions.map((v) => v.version);
  }

  async fetchFile(resolved: ResolvedVersion, file: ResolvedFile): Promise<Buffer | null> {
    const path = `/api/v1/templates/${encodePath(resolved.template)}/versions/${encodeURIComponent(resolved.version)}/files/${encodePath(file.path)}`;
    const response = await this.request('GET', path);
    if (response.status === 404) return null;
    if (!response.ok)
      throw await this.failure(
        response,
        `cannot fetch ${file.path} of ${resolved.template}:${resolved.version}`,
      );
    return registryBody(response, this.base, { limit: MAX_FILE_BYTES, timeoutMs: this.options.timeoutMs });
  }
}

function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/**
 * `dm install`'s checksum step (docs/integrity.md §5, "The client"): every version digest the
 * install is about to lock is checked against the registry server's checksum log, as Go checks
 * go.sum lines against its checksum database. The log's verifier key comes from the client's
 * configuration (`checksumKey`, `DM_CHECKSUM_KEY`), never from the server it checks; the latest
 * verified checkpoint is remembered in the state directory and every later checkpoint must be
 * consistent with it. Registries matching `DM_NOSUMCHECK` are not checked.
 */
import { join } from 'node:path';
import type { DmConfig } from '../config/config.js';
import { DmError } from '../error.js';
import { httpSignal } from '../http-limit.js';
import {
  type ChecksumLogSource,
  ChecksumVerifier,
  decodeProof,
  FileCheckpointMemory,
  type LookupAnswer,
  MAX_NOTE_BYTES,
  parseVerifierKey,
} from '../integrity/index.js';
import { registryBody, registryFailure, registryJson, registryUnreachable } from './registry-answer.js';
import type { ResolvedVersion } from './types.js';

/** The checksum log of a registry server over HTTP (`GET /api/v1/checksums/…`). */
export class HttpChecksumLog implements ChecksumLogSource {
  private readonly base: string;

  constructor(private readonly options: { url: string; token?: string | undefined; timeoutMs?: number }) {
    this.base = options.url.replace(/\/+$/, '');
  }

  private async get(path: string, what: string): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        headers,
        signal: httpSignal(this.options.timeoutMs),
      });
    } catch (error) {
      throw registryUnreachable(this.base, error, this.options.timeoutMs);
    }
    if (!response.ok) throw await registryFailure(response, this.base, what, this.options.timeoutMs);
    return response;
  }

  async latestCheckpoint(): Promise<string> {
    const response = await this.get('/api/v1/checksums/latest', 'cannot read the checksum log');
    const text = (
      await registryBody(response, this.base, {
        limit: MAX_NOTE_BYTES,
        timeoutMs: this.options.timeoutMs,
        tooLarge: () =>
          new DmError(
            'CHECKSUM_CHECKPOINT_INVALID',
            `${this.base} answered a checkpoint larger than a note can be`,
            {
              category: 'invalid-input',
            },
          ),
      })
    ).toString('utf8');
    return text;
  }

  async consistencyProof(first: number, second: number): Promise<Buffer[]> {
    const response = await this.get(
      `/api/v1/checksums/consistency?from=${first}&to=${second}`,
      `cannot prove the checksum log's size ${second} extends size ${first}`,
    );
    return decodeProof(
      (await registryJson<{ proof?: unknown }>(response, this.base, this.options.timeoutMs)).proof,
    );
  }

  async lookup(key: string): Promise<LookupAnswer> {
    const path = key.split('/').map(encodeURIComponent).join('/');
    const response = await this.get(
      `/api/v1/checksums/lookup/${path}`,
      `cannot look up ${key} in the checksum log`,
    );
    const a = await registryJson<Record<string, unknown>>(response, this.base, this.options.timeoutMs);
    if (typeof a.record !== 'string' || typeof a.index !== 'number' || typeof a.checkpoint !== 'string') {
      throw new DmError(
        'CHECKSUM_PROOF_INVALID',
        `${this.base} answered a lookup of ${key} without record, index and checkpoint`,
        {
          category: 'invalid-input',
        },
      );
    }
    return { record: a.record, index: a.index, checkpoint: a.checkpoint, proof: decodeProof(a.proof) };
  }
}

/** Whether a registry (`host/owner/repo`) is exempt: a pattern matches it or a path prefix of it (`*` within a segment). */
export function exemptFromSumCheck(registry: string, patterns: readonly string[]): boolean {
  const segments = registry.split('/');
  return patterns.some((pattern) => {
    const parts = pattern.split('/');
    if (parts.length > segments.length) return false;
    return parts.every((part, i) => {
      const re = new RegExp(
        `^${part
          .split('*')
          .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('[^/]*')}$`,
      );
      return re.test(segments[i]!);
    });
  });
}

/** The verifier install uses, when a registry server and its log key are configured. */
export function checksumVerifierFor(config: DmConfig): ChecksumVerifier | undefined {
  if (!config.registryUrl || !config.checksumKey || config.offline) return undefined;
  const key = parseVerifierKey(config.checksumKey);
  return new ChecksumVerifier({
    key,
    source: new HttpChecksumLog({
      url: config.registryUrl,
      token: config.registryToken,
      timeoutMs: config.httpTimeoutMs,
    }),
    memory: new FileCheckpointMemory(
      join(config.dirs.state, 'checksums', encodeURIComponent(key.name), 'latest'),
    ),
  });
}

/**
 * Checks each resolution's digest against the log (registry references not exempt by
 * `DM_NOSUMCHECK`). A contradiction is CHECKSUM_MISMATCH naming the reference, both digests and
 * where the lock entry came from; the caller writes no dm.lock then.
 */
export async function verifyChecksums(
  verifier: ChecksumVerifier,
  resolutions: readonly ResolvedVersion[],
  options: {
    exempt: readonly string[];
    lockPath: string;
    locked: (r: ResolvedVersion) => boolean;
    /** Answered by the registry server itself: its log must hold the version. */
    fromServer: (r: ResolvedVersion) => boolean;
    warn?: ((message: string) => void) | undefined;
  },
): Promise<number> {
  let checked = 0;
  for (const r of resolutions) {
    const registry = r.template.split('/').slice(0, 3).join('/');
    if (!/^[^/]+\/[^/]+\/[^/]+\/./.test(r.template) || exemptFromSumCheck(registry, options.exempt)) continue;
    try {
      await verifier.verifyDigest({ template: r.template, version: r.version, digest: r.digest });
      checked++;
    } catch (error) {
      if (error instanceof DmError && error.code === 'CHECKSUM_RECORD_NOT_FOUND' && !options.fromServer(r)) {
        // A registry the server does not host (a --registry-dir, a git source): not in its log.
        options.warn?.(
          `${r.template}:${r.version} is not in the checksum log of ${verifier.key.name}; not verified`,
        );
        continue;
      }
      if (!(error instanceof DmError) || error.code !== 'CHECKSUM_MISMATCH') throw error;
      const from = options.locked(r) ? `pinned by ${options.lockPath}` : `answered for ${r.reference}`;
      throw new DmError('CHECKSUM_MISMATCH', `${r.template}:${r.version} (${from}): ${error.message}`, {
        category: 'conflict',
        details: { ...(error.details as Record<string, unknown>), reference: r.reference },
        hint: `the content changed after it was first published; nothing was locked or written. To skip this registry on purpose: DM_NOSUMCHECK=${registry}`,
      });
    }
  }
  return checked;
}

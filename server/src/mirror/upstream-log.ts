/**
 * A mirror's view of its upstream's checksum log (docs/mirroring.md, "The upstream's checksum
 * log"): the upstream's record of a version, and, when the mirror is given the upstream's verifier
 * key (`--upstream-checksum-key`), the client's own verification of it — the checkpoint's
 * signature, its consistency with the checkpoint verified before, and the record's inclusion
 * proof (client/src/integrity/verifier.ts). A mirror that knows the key refuses a version its
 * upstream's log contradicts, and says so; without a key the record is read unverified, only to
 * learn of changes the upstream accepted.
 */
import { DmError } from '../../../client/src/error.js';
import {
  type CheckpointMemory,
  ChecksumVerifier,
  type LogRecord,
  MemoryCheckpointMemory,
  parseRecord,
  recordKey,
} from '../../../client/src/integrity/index.js';
import { HttpChecksumLog } from '../../../client/src/resolve/index.js';

export interface UpstreamLogOptions {
  url: string;
  token?: string | undefined;
  /** The upstream log's verifier key (`dm-registry checksum-key` on the upstream prints it). */
  key?: string | undefined;
  /** Where the latest verified checkpoint is kept (default: memory, for this process). */
  memory?: CheckpointMemory;
  timeoutMs?: number;
}

export class UpstreamLog {
  private readonly source: HttpChecksumLog;
  private readonly verifier: ChecksumVerifier | undefined;

  constructor(private readonly options: UpstreamLogOptions) {
    this.source = new HttpChecksumLog({
      url: options.url,
      token: options.token,
      timeoutMs: options.timeoutMs ?? 10_000,
    });
    this.verifier = options.key
      ? new ChecksumVerifier({
          key: options.key,
          source: this.source,
          memory: options.memory ?? new MemoryCheckpointMemory(),
        })
      : undefined;
  }

  /** Whether versions pulled from this upstream are verified against its log. */
  get verifying(): boolean {
    return this.verifier !== undefined;
  }

  /**
   * The upstream log's newest record of `expected`'s version. With a key: verified (checkpoint,
   * consistency, inclusion) and required to carry `expected.digest`, else
   * `UPSTREAM_CHECKSUM_MISMATCH` (the version is not stored). Without one: read as answered, or
   * undefined when the upstream has no log record of it.
   */
  async record(expected: Pick<LogRecord, 'template' | 'version' | 'digest'>): Promise<LogRecord | undefined> {
    if (this.verifier) {
      try {
        return (await this.verifier.verifyDigest(expected)).record;
      } catch (error) {
        if (!(error instanceof DmError)) throw error;
        throw new DmError(
          'UPSTREAM_CHECKSUM_MISMATCH',
          `${this.options.url} answered ${recordKey(expected)} with digest ${expected.digest}, which its own checksum log does not confirm (${error.code}: ${error.message}); not stored`,
          { category: 'upstream', details: { upstream: this.options.url, cause: error.code } },
        );
      }
    }
    try {
      return parseRecord((await this.source.lookup(recordKey(expected))).record);
    } catch (error) {
      if (error instanceof DmError) return undefined;
      throw error;
    }
  }
}

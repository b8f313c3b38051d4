/**
 * The server's side of issue 11 in one object the service holds (docs/integrity-store.md): the
 * checksum log's signer key, what happens after a swap quarantined versions (one log line each,
 * the metric, one notification per configured URL), accepting changed content, and the signed
 * checkpoint reads serve.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { DmError } from '../../client/src/error.js';
import { generateLogKey, type LogSigner, parseSignerKey } from '../../client/src/integrity/index.js';
import { Notifier, type NotifierOptions } from './notify.js';
import type { Accepted, AcceptInput, ChecksumQueries, QuarantineEvent } from './store/contract.js';

export interface ChecksumsOptions {
  /** The log's signer key; default a key made for this process only (tests). */
  signer?: LogSigner | undefined;
  notify?: Pick<NotifierOptions, 'urls' | 'secret' | 'timeoutMs' | 'attempts' | 'retryBaseMs'> | undefined;
  /** Counts quarantines (the metric), by registry label. */
  onQuarantine?: ((registry: string, count: number) => void) | undefined;
}

type Log = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export class Checksums {
  readonly signer: LogSigner;
  readonly notifier: Notifier;

  constructor(
    private readonly store: ChecksumQueries,
    private readonly options: ChecksumsOptions,
    private readonly log: Log,
    private readonly clock: () => number,
  ) {
    this.signer = options.signer ?? parseSignerKey(generateLogKey('dm-registry.invalid/checksums').signerKey);
    this.notifier = new Notifier({ urls: [], ...options.notify, log });
  }

  /**
   * After a swap committed: a log line, the metric and a notification per quarantined version.
   * `label` is the registry's metrics label (PRIVATE_LABEL for a private one). Never throws.
   */
  quarantined(events: readonly QuarantineEvent[], label: string): void {
    for (const e of events) {
      try {
        this.log('warn', 'version quarantined', {
          registry: e.registry,
          key: `${e.template}@${e.version}`,
          firstDigest: e.firstDigest,
          newDigest: e.newDigest,
          changedFiles: e.changedFiles.map((f) => f.path),
        });
        this.options.onQuarantine?.(label, 1);
        this.#notify(e);
      } catch (error) {
        this.log('error', 'quarantine bookkeeping failed', { error: String(error) });
      }
    }
  }

  #notify(e: QuarantineEvent): void {
    const id = e.id ?? e.openId;
    this.notifier.send(e, () => {
      if (id === undefined) return;
      this.store
        .markNotified(id, this.clock())
        .catch((error: unknown) =>
          this.log('error', 'quarantine delivery mark failed', { id, error: String(error) }),
        );
    });
  }

  /** Sends again what a previous process did not deliver (docs/integrity-store.md §2). Never rejects. */
  async resendUndelivered(): Promise<void> {
    if (!this.notifier.enabled) return;
    try {
      for (const e of await this.store.undelivered()) this.#notify(e);
    } catch (error) {
      this.log('error', 'undelivered quarantine notifications could not be read', { error: String(error) });
    }
  }

  async accept(input: Omit<AcceptInput, 'signer' | 'now'>): Promise<Accepted> {
    const accepted = await this.store.accept({ ...input, signer: this.signer, now: this.clock() });
    this.log('info', 'quarantine accepted', {
      registry: input.registry,
      key: `${accepted.template}@${accepted.version}`,
      oldDigest: accepted.oldDigest,
      newDigest: accepted.newDigest,
      by: accepted.acceptedBy,
      reason: accepted.reason,
    });
    return accepted;
  }

  /** The newest signed checkpoint (signing the current size first when needed). */
  checkpoint(): Promise<{ size: number; note: string }> {
    return this.store.checkpoint(this.signer, this.clock());
  }
}

/**
 * The checksum log's signer key (docs/integrity-store.md §5): read from `file`, or created there
 * (mode 0600, like secret.key) named `name` when the file does not exist yet. A key file that
 * does not hold a signer key is refused, naming the file, without echoing it.
 */
export function loadChecksumKey(options: { file: string; name: string }): LogSigner {
  let text: string;
  try {
    text = readFileSync(options.file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new DmError(
        'CHECKSUM_KEY_INVALID',
        `cannot read the checksum log key ${options.file}: ${(error as Error).message}`,
        {
          category: 'invalid-input',
        },
      );
    }
    const { signerKey } = generateLogKey(options.name);
    mkdirSync(dirname(options.file), { recursive: true });
    writeFileAtomic.sync(options.file, `${signerKey}\n`, { mode: 0o600 });
    return parseSignerKey(signerKey);
  }
  try {
    return parseSignerKey(text.trim());
  } catch (error) {
    throw new DmError('CHECKSUM_KEY_INVALID', `${options.file}: ${(error as Error).message}`, {
      category: 'invalid-input',
    });
  }
}

/**
 * Outgoing notifications of quarantined versions (docs/integrity-store.md §2): one POST per
 * configured URL, body `{event: "version.quarantined", …}`, signed like GitHub's webhooks
 * (`X-Dm-Signature-256: sha256=<hex HMAC-SHA256 of the body>`). Deliveries run in the
 * background, one at a time, each attempt bounded by a timeout, a bounded number of retries with
 * growing pauses; nothing a receiver does (hang, refuse, answer 500, vanish) can reject into the
 * process. A quarantine counts as delivered once every URL answered 2xx (`onDelivered`).
 */
import { createHmac } from 'node:crypto';
import { networkFailure } from '../../client/src/error.js';
import type { QuarantineEvent } from './store/contract.js';

export interface NotifierOptions {
  urls: readonly string[];
  /** The HMAC key; without it, no signature header is sent. */
  secret?: string | undefined;
  /** Per attempt (default 10 s). */
  timeoutMs?: number;
  /** Attempts per URL (default 4). */
  attempts?: number;
  /** Pause before the n-th retry: base · 4^(n−1) (default 1 s). */
  retryBaseMs?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

/** The body of a notification. */
export function notificationBody(e: QuarantineEvent): string {
  return JSON.stringify({
    event: 'version.quarantined',
    registry: e.registry,
    template: e.template,
    version: e.version,
    firstDigest: e.firstDigest,
    newDigest: e.newDigest,
    changedFiles: e.changedFiles,
    since: new Date(e.since).toISOString(),
  });
}

/** `sha256=<hex>` of a body under a secret (what a receiver recomputes). */
export function signatureOf(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

export const SIGNATURE_HEADER = 'X-Dm-Signature-256';

export class Notifier {
  readonly #options: NotifierOptions;
  #chain: Promise<void> = Promise.resolve();
  #pending = 0;
  #stopped = false;

  constructor(options: NotifierOptions) {
    this.#options = options;
  }

  get enabled(): boolean {
    return this.#options.urls.length > 0;
  }

  /** Queues one notification; `onDelivered` runs when every URL took it. Never throws. */
  send(event: QuarantineEvent, onDelivered: () => void): void {
    if (!this.enabled) return;
    this.#pending++;
    this.#chain = this.#chain
      .then(async () => {
        if (this.#stopped) return;
        const body = notificationBody(event);
        let all = true;
        for (const url of this.#options.urls) all = (await this.#deliver(url, body, event)) && all;
        if (all) onDelivered();
      })
      .catch((error: unknown) => {
        this.#options.log?.('error', 'notification failed', { error: String(error) });
      })
      .finally(() => {
        this.#pending--;
      });
  }

  /** Resolves when the queue is empty (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#pending > 0) await this.#chain;
  }

  /** Stops retrying; queued notifications stay undelivered (resent at the next start). */
  stop(): void {
    this.#stopped = true;
  }

  async #deliver(url: string, body: string, event: QuarantineEvent): Promise<boolean> {
    const attempts = this.#options.attempts ?? 4;
    const base = this.#options.retryBaseMs ?? 1000;
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': 'dm-registry',
      'X-Dm-Event': 'version.quarantined',
    };
    if (this.#options.secret) headers[SIGNATURE_HEADER] = signatureOf(this.#options.secret, body);
    let last = '';
    for (let i = 0; i < attempts && !this.#stopped; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, base * 4 ** (i - 1)).unref());
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers,
          body,
          redirect: 'error',
          signal: AbortSignal.timeout(this.#options.timeoutMs ?? 10_000),
        });
        await res.body?.cancel().catch(() => {});
        if (res.ok) return true;
        last = `HTTP ${res.status}`;
      } catch (error) {
        last = networkFailure(error)?.reason ?? (error instanceof Error ? error.message : String(error));
      }
    }
    this.#options.log?.('warn', 'notification not delivered', {
      url: new URL(url).origin,
      template: event.template,
      version: event.version,
      error: last,
    });
    return false;
  }
}

/**
 * The one time limit of every HTTP call dm makes — registry server, Deployment Manager, checksum
 * log, GitHub, template URLs (docs/client.md "Configuration": `--http-timeout`, `httpTimeout`,
 * default 30 s) — and the one sentence that says it ran out.
 */

export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;

/** The abort signal of one HTTP call under the configured limit. */
export function httpSignal(timeoutMs: number | undefined): AbortSignal {
  return AbortSignal.timeout(timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS);
}

/** Whether `error` (from fetch) is the limit running out. */
export function isHttpTimeout(error: unknown): boolean {
  const e = error as { name?: string; cause?: { name?: string } } | undefined;
  return e?.name === 'TimeoutError' || e?.cause?.name === 'TimeoutError';
}

/** `(no answer within 30 s; --http-timeout sets the limit)`: what every timed-out call says. */
export function noAnswerInTime(timeoutMs: number | undefined): string {
  const seconds = (timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS) / 1000;
  return `(no answer within ${seconds} s; --http-timeout or the config key httpTimeout sets the limit)`;
}

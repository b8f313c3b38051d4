/**
 * The one time limit of every HTTP call dm makes — registry server, Deployment Manager, checksum
 * log, GitHub, template URLs, OCI registries (docs/client.md "Configuration": `--http-timeout`,
 * `httpTimeout`, default 30 s) — and the one sentence that says a call got no answer: the limit ran
 * out, or the network's reason in words (docs/errors.md "Unreachable: the reason").
 */
import { DmError, type ErrorCode, networkFailure } from './error.js';

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

/** The hint of a TLS failure where `oci://` was given: --plain-http is how to speak plain HTTP there. */
export const PLAIN_HTTP_HINT =
  'for a registry that speaks plain HTTP (a loopback or test registry), pass --plain-http';

/** `no answer within 30 s (--http-timeout …)`: what every timed-out call says. */
export function noAnswerInTime(timeoutMs: number | undefined): string {
  const seconds = (timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS) / 1000;
  return `no answer within ${seconds} s (--http-timeout or the config key httpTimeout sets the limit)`;
}

/** The codes of "X cannot be reached", each of category unreachable. */
export type NoAnswerCode =
  | 'REGISTRY_UNREACHABLE'
  | 'URL_UNREACHABLE'
  | 'MANAGER_UNREACHABLE'
  | 'OCI_UNREACHABLE'
  | 'SOURCE_UNREACHABLE'
  | 'UNREACHABLE';

export interface NoAnswerOptions {
  /** The limit the call ran under, for the sentence when it ran out. */
  timeoutMs?: number | undefined;
  /** What to check (the flag that names the host); a certificate failure has its own. */
  hint?: string | undefined;
  /** A hint for a TLS failure that is not about the certificate (an OCI registry: --plain-http). */
  tlsHint?: string | undefined;
  details?: Record<string, unknown>;
}

const CERTIFICATE_HINT =
  'a server whose certificate is signed by a private authority: point NODE_EXTRA_CA_CERTS at that authority’s certificate (PEM)';

/**
 * The DmError of an HTTP call that got no answer: `cannot reach SUBJECT: REASON` (exit 5), SUBJECT
 * naming what was called (`the registry server at http://…`), REASON the limit running out or the
 * network's reason in words (`the host name does not resolve (ENOTFOUND)`, `connection refused
 * (ECONNREFUSED)`, `the server's certificate is not accepted: …`). Every fetch of dm that fails
 * before an answer ends here.
 */
export function noAnswer(
  code: NoAnswerCode,
  subject: string,
  error: unknown,
  options: NoAnswerOptions = {},
): DmError<ErrorCode> {
  const network = isHttpTimeout(error) ? undefined : networkFailure(error);
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  const reason = isHttpTimeout(error)
    ? noAnswerInTime(options.timeoutMs)
    : (network?.reason ??
      (cause instanceof Error ? cause.message : (error as Error)?.message) ??
      String(error));
  const hint =
    network?.kind === 'certificate'
      ? CERTIFICATE_HINT
      : (network?.kind === 'tls' || network?.kind === 'reset') && options.tlsHint
        ? options.tlsHint
        : options.hint;
  return new DmError(code, `cannot reach ${subject}: ${reason}`, {
    category: 'unreachable',
    cause: error,
    ...(hint === undefined ? {} : { hint }),
    ...(options.details === undefined ? {} : { details: options.details }),
  });
}

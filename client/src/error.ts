/**
 * The one error type for everything a user can get wrong or run into.
 *
 * A DmError carries a stable `code` from the one table of codes (client/src/error-codes.ts,
 * documented in docs/errors.md: SCREAMING_SNAKE, or a borrowed error kind such as Deckhand's
 * `SubstitutionSourceNotFound`), one sentence that names the bad value and where it is (file:line,
 * property path, reference), an optional hint, optional machine-readable details, and a category,
 * which the code decides. Edges translate the category: the CLI to an exit code, the server to an
 * HTTP status (docs/errors.md). Library code throws; only edges catch and print.
 */
import {
  type CategoryOf,
  categoriesOf,
  type ErrorCategory,
  type ErrorCode,
  isErrorCode,
} from './error-codes.js';

export type { ErrorCategory, ErrorCode } from './error-codes.js';

/**
 * `category` may be left out: the code's own (default) category applies. Codes that may be of
 * several categories list them in client/src/error-codes.ts, and only those compile here.
 */
export interface DmErrorOptions<K extends ErrorCategory = ErrorCategory> {
  hint?: string;
  details?: Record<string, unknown>;
  category?: K;
  cause?: unknown;
}

export class DmError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly category: ErrorCategory;

  constructor(code: C, message: string, options: DmErrorOptions<CategoryOf<C>> = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DmError';
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
    this.category = options.category ?? categoriesOf(code)[0]!;
  }

  /** The JSON shape both the CLI (`-o json`) and the server print: `{error: {code, message, details}}`. */
  toJSON(): {
    error: { code: ErrorCode; message: string; hint?: string; details?: Record<string, unknown> };
  } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.hint === undefined ? {} : { hint: this.hint }),
        ...(this.details === undefined ? {} : { details: this.details }),
      },
    };
  }
}

export function isDmError(value: unknown): value is DmError {
  return value instanceof DmError;
}

const EXIT_CODES: Record<ErrorCategory, number> = {
  usage: 2,
  'invalid-input': 1,
  'not-found': 3,
  validation: 4,
  conflict: 1,
  unreachable: 5,
  unauthorized: 1,
  forbidden: 1,
  'rate-limited': 5,
  upstream: 5,
  'upstream-timeout': 5,
  limit: 1,
  blocked: 1,
  error: 1,
};

/** The exit code of a category (docs/errors.md). */
export function exitCodeOfCategory(category: ErrorCategory): number {
  return EXIT_CODES[category];
}

/** The HTTP status of a category (docs/errors.md). */
export function httpStatusOfCategory(category: ErrorCategory): number {
  return HTTP_STATUSES[category];
}

/** Exit code for the CLI, docs/errors.md: 0 ok, 1 error, 2 usage, 3 not found, 4 validation, 5 unreachable. */
export function exitCodeFor(error: unknown): number {
  return isDmError(error) ? EXIT_CODES[error.category] : 1;
}

const HTTP_STATUSES: Record<ErrorCategory, number> = {
  usage: 400,
  'invalid-input': 400,
  'not-found': 404,
  validation: 422,
  conflict: 409,
  unreachable: 503,
  unauthorized: 401,
  forbidden: 403,
  'rate-limited': 429,
  upstream: 502,
  'upstream-timeout': 504,
  limit: 422,
  blocked: 422,
  error: 500,
};

/** HTTP status for the server, docs/errors.md. */
export function httpStatusFor(error: unknown): number {
  return isDmError(error) ? HTTP_STATUSES[error.category] : 500;
}

/**
 * A Node system error (`EISDIR`, `EACCES`, `EADDRINUSE`, a DNS failure, …) as one plain sentence,
 * or undefined when `error` is not one dm knows how to say. Edges use it before "internal error".
 */
export function fromSystemError(error: unknown, what?: string): DmError | undefined {
  if (!(error instanceof Error)) return undefined;
  const e = error as NodeJS.ErrnoException & { hostname?: string; address?: string; port?: number };
  const subject = what ?? e.path ?? e.hostname ?? e.address;
  const make = (code: ErrorCode, message: string) => new DmError(code, message, { cause: error });
  switch (e.code) {
    case 'EISDIR':
      return make('IS_A_DIRECTORY', `${subject ?? 'the path'} is a directory, not a file`);
    case 'ENOTDIR':
      return make('NOT_A_DIRECTORY', `${subject ?? 'a part of the path'} is not a directory`);
    case 'EACCES':
    case 'EPERM':
      return make('PERMISSION_DENIED', `permission denied: ${subject ?? 'a file'}`);
    case 'ENOENT':
      return make('FILE_NOT_FOUND', `${subject ?? 'a file'} does not exist`);
    case 'EADDRINUSE':
      return make('PORT_IN_USE', `port ${e.port ?? subject} is in use${what ? ` (${what})` : ''}`);
    default: {
      const network = isDmError(error) ? undefined : networkFailure(error);
      if (!network) return undefined;
      return make('UNREACHABLE', `cannot reach ${network.host ?? what ?? 'the server'}: ${network.reason}`);
    }
  }
}

/** What kind of network failure it was (a caller may add a hint: --plain-http on a TLS failure). */
export type NetworkFailureKind =
  | 'dns'
  | 'refused'
  | 'reset'
  | 'timeout'
  | 'unroutable'
  | 'certificate'
  | 'tls'
  | 'not-http'
  | 'blocked-port';

export interface NetworkFailure {
  kind: NetworkFailureKind;
  /** In plain words, with the system's code: `the host name does not resolve (ENOTFOUND)`. */
  reason: string;
  code?: string;
  /** The host (and port) the system error names, when it names one. */
  host?: string;
}

const CERTIFICATE_CODE = /CERT|SELF_SIGNED|^UNABLE_TO_|HOSTNAME_MISMATCH|^INVALID_CA$|^PATH_LENGTH_EXCEEDED$/;

/**
 * Why a connection got no answer, in plain words (docs/errors.md "Unreachable: the reason"), from the
 * network error anywhere in `error`'s cause chain — fetch puts it in `cause` under a bare "fetch
 * failed" — or undefined when there is none. The one table of these words: every "cannot reach"
 * (http-limit.ts `noAnswer`, fromSystemError) says them.
 */
export function networkFailure(error: unknown): NetworkFailure | undefined {
  let e: unknown = error;
  for (let depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++) {
    if (isDmError(e)) continue;
    const found = oneNetworkFailure(e as SystemError);
    if (found) return found;
  }
  return undefined;
}

type SystemError = Error & {
  code?: unknown;
  reason?: unknown;
  hostname?: unknown;
  address?: unknown;
  port?: unknown;
};

function oneNetworkFailure(e: SystemError): NetworkFailure | undefined {
  const code = typeof e.code === 'string' ? e.code : undefined;
  const host =
    typeof e.hostname === 'string'
      ? e.hostname
      : typeof e.address === 'string'
        ? `${e.address.includes(':') ? `[${e.address}]` : e.address}${typeof e.port === 'number' ? `:${e.port}` : ''}`
        : undefined;
  const said = (kind: NetworkFailureKind, words: string): NetworkFailure => ({
    kind,
    reason: code === undefined ? words : `${words} (${code})`,
    ...(code === undefined ? {} : { code }),
    ...(host === undefined ? {} : { host }),
  });
  switch (code) {
    case 'ENOTFOUND':
      return said('dns', 'the host name does not resolve');
    case 'EAI_AGAIN':
      return said('dns', 'the host name cannot be looked up now, DNS does not answer');
    case 'ECONNREFUSED':
      return said('refused', 'connection refused');
    case 'ECONNRESET':
      return said('reset', 'the connection was reset');
    case 'UND_ERR_SOCKET':
      return said('reset', 'the other side closed the connection');
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return said('timeout', 'the connection timed out');
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return said('timeout', 'the answer did not come in time');
    case 'EHOSTUNREACH':
      return said('unroutable', 'no route to the host');
    case 'ENETUNREACH':
      return said('unroutable', 'the network is unreachable');
  }
  // Node's own sentence up to its first ';' (Node 24 adds advice about its flags there).
  const nodeSays = (typeof e.reason === 'string' ? e.reason : e.message).split(';')[0]!.trim();
  if (code !== undefined && CERTIFICATE_CODE.test(code))
    return said('certificate', `the server's certificate is not accepted: ${nodeSays}`);
  if (code !== undefined && (code === 'EPROTO' || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')))
    return said('tls', `the TLS handshake failed: ${nodeSays}`);
  if (e.name === 'HTTPParserError' || code?.startsWith('HPE_'))
    return said('not-http', 'what answered does not speak HTTP');
  if (e.message === 'bad port') return said('blocked-port', 'fetch never connects to this port (bad port)');
  return undefined;
}

/** The category of an HTTP status, for errors relayed from a server whose code dm does not know. */
const STATUS_CATEGORIES: Readonly<Record<number, ErrorCategory>> = {
  400: 'invalid-input',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  409: 'conflict',
  422: 'validation',
  429: 'rate-limited',
  502: 'upstream',
  504: 'upstream-timeout',
};

function categoryOfStatus(status: number): ErrorCategory {
  return STATUS_CATEGORIES[status] ?? (status >= 500 ? 'unreachable' : 'error');
}

/**
 * A DmError relayed from a dm server's `{error: {code, message, details, hint}}` answer. A code dm
 * knows keeps its own category, so the CLI exits the same way as when the failure happens locally;
 * anything else (a newer server's code, or no JSON error at all) is `REMOTE_ERROR`, categorised by
 * the HTTP status, with the server's code and status in its details.
 */
export function relayedError(
  status: number,
  answer: { code?: unknown; message?: unknown; hint?: unknown; details?: unknown } | undefined,
  message: (serverMessage: string) => string,
): DmError {
  const serverMessage = typeof answer?.message === 'string' ? answer.message : `HTTP ${status}`;
  const hint = typeof answer?.hint === 'string' ? { hint: answer.hint } : {};
  const details =
    answer?.details !== null && typeof answer?.details === 'object'
      ? (answer.details as Record<string, unknown>)
      : undefined;
  if (isErrorCode(answer?.code))
    return new DmError(answer.code, message(serverMessage), { ...hint, ...(details ? { details } : {}) });
  return new DmError('REMOTE_ERROR', message(serverMessage), {
    category: categoryOfStatus(status),
    ...hint,
    details: {
      ...details,
      status,
      ...(typeof answer?.code === 'string' ? { code: answer.code.slice(0, 64) } : {}),
    },
  });
}

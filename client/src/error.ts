/**
 * The one error type for everything a user can get wrong or run into.
 *
 * A DmError carries a stable `code` (SCREAMING_SNAKE, or a spec's own error kind such as
 * Deckhand's `SubstitutionSourceNotFound`), one sentence that names the bad value and where it
 * is (file:line, property path, reference), an optional hint, optional machine-readable details,
 * and a category. Edges translate the category: the CLI to an exit code (spec/cli.md), the server
 * to an HTTP status (spec/server.md §2). Library code throws; only edges catch and print.
 */

/** What kind of failure this is; decides exit codes and HTTP statuses at the edges. */
export type ErrorCategory =
  | 'usage' // bad flags or arguments: exit 2, HTTP 400
  | 'invalid-input' // malformed reference, YAML, document: exit 1, HTTP 400
  | 'not-found' // reference, version, deployment, file: exit 3, HTTP 404
  | 'validation' // schema or lint validation failed: exit 4, HTTP 422
  | 'conflict' // exit 1, HTTP 409
  | 'unreachable' // network, registry server, cluster: exit 5, HTTP 503
  | 'unauthorized' // exit 1, HTTP 401
  | 'forbidden' // exit 1, HTTP 403
  | 'rate-limited' // exit 5, HTTP 429
  | 'upstream' // a mirror's upstream registry failed or is known down: exit 5, HTTP 502
  | 'limit' // a resource limit was hit (time, memory, size): exit 1, HTTP 422
  | 'blocked' // untrusted code tried something forbidden: exit 1, HTTP 422
  | 'error'; // anything else: exit 1, HTTP 500

export interface DmErrorOptions {
  hint?: string;
  details?: Record<string, unknown>;
  category?: ErrorCategory;
  cause?: unknown;
}

export class DmError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly category: ErrorCategory;

  constructor(code: string, message: string, options: DmErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DmError';
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
    this.category = options.category ?? 'error';
  }

  /** The JSON shape both the CLI (`-o json`) and the server print: `{error: {code, message, details}}`. */
  toJSON(): { error: { code: string; message: string; hint?: string; details?: Record<string, unknown> } } {
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
  limit: 1,
  blocked: 1,
  error: 1,
};

/** Exit code for the CLI, spec/cli.md: 0 ok, 1 error, 2 usage, 3 not found, 4 validation, 5 unreachable. */
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
  limit: 422,
  blocked: 422,
  error: 500,
};

/** HTTP status for the server, spec/server.md §2. */
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
  const make = (code: string, message: string, category: ErrorCategory, hint?: string) =>
    new DmError(code, message, { category, cause: error, ...(hint ? { hint } : {}) });
  switch (e.code) {
    case 'EISDIR':
      return make('IS_A_DIRECTORY', `${subject ?? 'the path'} is a directory, not a file`, 'usage');
    case 'ENOTDIR':
      return make('NOT_A_DIRECTORY', `${subject ?? 'a part of the path'} is not a directory`, 'usage');
    case 'EACCES':
    case 'EPERM':
      return make('PERMISSION_DENIED', `permission denied: ${subject ?? 'a file'}`, 'error');
    case 'ENOENT':
      return make('FILE_NOT_FOUND', `${subject ?? 'a file'} does not exist`, 'not-found');
    case 'EADDRINUSE':
      return make('PORT_IN_USE', `port ${e.port ?? subject} is in use${what ? ` (${what})` : ''}`, 'usage');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return make(
        'UNREACHABLE',
        `cannot reach ${e.hostname ?? subject ?? 'the host'} (DNS lookup failed)`,
        'unreachable',
      );
    case 'ECONNREFUSED':
      return make(
        'UNREACHABLE',
        `cannot reach ${subject ?? 'the server'}${e.port ? `:${e.port}` : ''} (connection refused)`,
        'unreachable',
      );
    default:
      return undefined;
  }
}

/**
 * Structured JSON logs, one object per line (docs/server.md "Running it": JSON logs on stdout). Lines are
 * buffered and written once per event-loop turn so that logging every request stays cheap.
 * Callers log facts, never secrets: tokens, credentials and signatures are not passed in, and
 * fields named like secrets are redacted as a last line of defence.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
  /** One access-log line (info), built without the generic path's redaction scan: it runs per request. */
  request(requestId: string, method: string, path: string, status: number, ms: number): void;
  flush(): void;
}

const SECRET_FIELD = /token|secret|password|authorization|credential|signature/i;
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(
  options: { write?: (text: string) => void; level?: LogLevel; clock?: () => number } = {},
): Logger {
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  const min = ORDER[options.level ?? 'info'];
  const clock = options.clock ?? Date.now;
  let buffer = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (buffer) {
      const text = buffer;
      buffer = '';
      write(text);
    }
  };
  const append = (line: string) => {
    buffer += line;
    if (buffer.length > 64 * 1024) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return {
    log(level, message, fields) {
      if (ORDER[level] < min) return;
      const entry: Record<string, unknown> = { time: new Date(clock()).toISOString(), level, msg: message };
      if (fields) {
        for (const [k, v] of Object.entries(fields)) entry[k] = SECRET_FIELD.test(k) ? '[redacted]' : v;
      }
      append(`${JSON.stringify(entry)}\n`);
    },
    request(requestId, method, path, status, ms) {
      if (ORDER.info < min) return;
      append(
        `{"time":"${new Date(clock()).toISOString()}","level":"info","msg":"request","requestId":${JSON.stringify(requestId)},"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${status},"ms":${ms}}\n`,
      );
    },
    flush,
  };
}

/** A logger that drops everything (tests that do not look at logs). */
export const silentLogger: Logger = { log: () => {}, request: () => {}, flush: () => {} };

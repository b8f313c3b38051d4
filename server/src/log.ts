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
/** Printable ASCII without `"` and `\\`: JSON.stringify would only add the quotes. */
const JSON_PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const jsonString = (s: string): string => (JSON_PLAIN.test(s) ? `"${s}"` : JSON.stringify(s));
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(
  options: { write?: (text: string) => void; level?: LogLevel; clock?: () => number } = {},
): Logger {
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  const min = ORDER[options.level ?? 'info'];
  const clock = options.clock ?? Date.now;
  let buffer = '';
  let scheduled = false;
  // The access line's time: Date#toISOString costs about a microsecond, so the text up to the
  // seconds is made once a second and the milliseconds appended (the same text).
  let second = Number.NaN;
  let secondText = '';
  const isoTime = (time: number): string => {
    const ms = Math.floor(time);
    const s = Math.floor(ms / 1000);
    if (s !== second) {
      second = s;
      secondText = new Date(s * 1000).toISOString().slice(0, -4);
    }
    const milli = ms - s * 1000;
    return `${secondText}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
  };
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
  // The access line's method and path as JSON, kept while they repeat (they mostly do: a read
  // path under load is one route), so a line costs one check of the request id only.
  let lastMethod = '';
  let lastPath = '';
  let methodPath = '';
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
      if (method !== lastMethod || path !== lastPath) {
        lastMethod = method;
        lastPath = path;
        methodPath = `"method":${jsonString(method)},"path":${jsonString(path)}`;
      }
      append(
        `{"time":"${isoTime(clock())}","level":"info","msg":"request","requestId":${jsonString(requestId)},${methodPath},"status":${status},"ms":${ms}}\n`,
      );
    },
    flush,
  };
}

/** A logger that drops everything (tests that do not look at logs). */
export const silentLogger: Logger = { log: () => {}, request: () => {}, flush: () => {} };

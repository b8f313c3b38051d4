/**
 * The one place the CLI prints: data on stdout as text, YAML or JSON; diagnostics on stderr.
 * With `-o json` a failing command prints `{"error": {code, message, details}}` on stdout (docs/errors.md).
 */

import type { OutputFormat } from '../config/config.js';
import { formatYaml } from '../document/yaml.js';
import { DmError, fromSystemError, isDmError } from '../error.js';

export interface Printable<T = unknown> {
  /** The machine-readable result, printed as is with `-o json` / `-o yaml`. */
  data: T;
  /** The human form for `-o text`; defaults to YAML of `data`. */
  text?: (data: T) => string;
}

export interface Streams {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

export const processStreams: Streams = {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
};

function withNewline(s: string): string {
  return s === '' || s.endsWith('\n') ? s : `${s}\n`;
}

export function printResult<T>(
  result: Printable<T>,
  output: OutputFormat,
  streams: Streams = processStreams,
): void {
  if (output === 'json') {
    streams.stdout(`${JSON.stringify(result.data, null, 2)}\n`);
  } else if (output === 'yaml') {
    streams.stdout(withNewline(formatYaml(result.data)));
  } else {
    streams.stdout(withNewline(result.text ? result.text(result.data) : formatYaml(result.data)));
  }
}

export interface PrintErrorOptions {
  output: OutputFormat;
  verbose: boolean;
  color?: boolean;
}

/** Prints an error: one sentence (+ hint) on stderr, the JSON error object on stdout with `-o json`. */
export function printError(
  error: unknown,
  options: PrintErrorOptions,
  streams: Streams = processStreams,
): void {
  const dmError = isDmError(error)
    ? error
    : (fromSystemError(error) ??
      new DmError('INTERNAL', `internal error: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      }));
  if (options.output === 'json') {
    streams.stdout(`${JSON.stringify(dmError.toJSON(), null, 2)}\n`);
  }
  const red = options.color ? '\u001b[31m' : '';
  const reset = options.color ? '\u001b[0m' : '';
  let text = `${red}error${reset}: ${dmError.message}\n`;
  if (dmError.hint) text += `hint: ${dmError.hint}\n`;
  if (options.verbose) {
    const stack = (isDmError(error) && error.cause instanceof Error ? error.cause : error) as Error;
    if (stack?.stack) text += `${stack.stack}\n`;
  }
  streams.stderr(text);
}

/** A plain text table: columns padded to their widest cell. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** A result with its text form; typed so that `text` sees the data's type. */
export function printable<T>(data: T, text?: (data: T) => string): Printable<T> {
  return text ? { data, text } : { data };
}

/** A count in English: `1 template`, `2 templates`, `1 named collection` (plural: word + "s" unless given). */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

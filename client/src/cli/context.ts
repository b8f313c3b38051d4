/**
 * Glue between commander and the library: every command's action receives a CommandContext
 * (configuration read once, streams, global flags) and returns a Printable or nothing.
 */
import type { Command } from 'commander';
import { type DmConfig, loadConfig } from '../config/config.js';
import { type PropertyMap, parsePropertyAssignments } from '../config/properties.js';
import type { DmError } from '../error.js';
import { type Printable, printResult, processStreams, type Streams } from './format.js';

export interface CommandContext {
  config: DmConfig;
  env: Record<string, string | undefined>;
  cwd: string;
  streams: Streams;
  /** `--properties` flags, merged. */
  properties: PropertyMap;
  /** `-f/--values` files, in order. */
  valuesFiles: string[];
  /** `--registry-dir dir[=name]` flags, in order. */
  registryDirs: string[];
  /** Whether stderr is a terminal (progress bars). */
  interactive: boolean;
}

export type CommandHandler<T = unknown> = (
  ctx: CommandContext,
  args: string[],
  options: Record<string, unknown>,
) => Promise<Printable<T> | undefined | void>;

export interface GlobalOptions {
  registry?: string;
  registryUrl?: string;
  managerUrl?: string;
  registryDir?: string[];
  properties?: string[];
  values?: string[];
  output?: string;
  offline?: boolean;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  config?: string;
  quiet?: boolean;
  verbose?: boolean;
  color?: boolean;
  plainHttp?: boolean;
  httpTimeout?: string;
}

export interface ActionOptions {
  /** `dm config` itself: a broken config file is a warning (defaults apply), never a failure. */
  tolerateBrokenConfig?: boolean;
}

export function contextFromCommand(command: Command, actionOptions: ActionOptions = {}): CommandContext {
  const opts = command.optsWithGlobals() as GlobalOptions;
  const env = process.env;
  const config = loadConfig({
    ...(actionOptions.tolerateBrokenConfig
      ? {
          onBrokenFile: (error: DmError) =>
            processStreams.stderr(
              `warning: ${error.message}; using the defaults (dm config set|unset repairs it)\n`,
            ),
        }
      : {}),
    flags: {
      registry: opts.registry,
      registryUrl: opts.registryUrl,
      managerUrl: opts.managerUrl,
      output: opts.output,
      offline: opts.offline,
      verbose: opts.verbose,
      quiet: opts.quiet,
      color: opts.color === false ? false : undefined,
      kubeconfig: opts.kubeconfig,
      context: opts.context,
      namespace: opts.namespace,
      config: opts.config,
      plainHttp: opts.plainHttp,
      httpTimeout: opts.httpTimeout,
    },
    env,
  });
  return {
    config,
    env,
    cwd: process.cwd(),
    streams: processStreams,
    properties: parsePropertyAssignments(opts.properties ?? []),
    valuesFiles: opts.values ?? [],
    registryDirs: opts.registryDir ?? [],
    interactive: Boolean(process.stderr.isTTY),
  };
}

/** Wraps a handler as a commander action: builds the context, runs, prints the result. */
export function action<T>(
  handler: CommandHandler<T>,
  actionOptions: ActionOptions = {},
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const options = command.opts();
    const positional = command.processedArgs.flatMap((a: unknown) =>
      a === undefined ? [] : Array.isArray(a) ? (a as string[]) : [String(a)],
    );
    const ctx = contextFromCommand(command, actionOptions);
    const name = commandName(command);
    const started = performance.now();
    const waiting = waitIndicator(ctx, name);
    let result: Printable<T> | undefined | void;
    try {
      result = await handler({ ...ctx, streams: waiting.streams }, positional, options);
    } finally {
      waiting.stop();
      if (ctx.config.verbose) {
        ctx.streams.stderr(`dm: ${name} took ${Math.round(performance.now() - started)} ms\n`);
      }
    }
    if (result) printResult(result, ctx.config.output, ctx.streams);
  };
}

/** How every command warns: `warning: …` on stderr, nothing with -q (docs/client.md "Progress, -q and -v"). */
export function warner(ctx: CommandContext): (message: string) => void {
  return (message) => {
    if (!ctx.config.quiet) ctx.streams.stderr(`warning: ${message}\n`);
  };
}

/** `install`, `deployments list`: the command as typed, without `dm`. */
export function commandName(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** How long a command may be silent on a terminal before it says it is still working. */
const WAIT_NOTICE_MS = 1000;

/**
 * On a terminal (not -q, text output), a command silent for over a second says it is still working
 * (`dm install: working… 3s` on stderr, redrawn each second, erased at the end) — for waits on the
 * network, git or kubectl (docs/client.md "Progress"). The first thing the command prints itself
 * (its own progress bar, a warning, output) ends the notice for good.
 */
function waitIndicator(ctx: CommandContext, name: string): { streams: Streams; stop: () => void } {
  if (!ctx.interactive || ctx.config.quiet || ctx.config.output !== 'text') {
    return { streams: ctx.streams, stop: () => {} };
  }
  const started = Date.now();
  let shown = false;
  let timer: NodeJS.Timeout | undefined = setInterval(() => {
    shown = true;
    ctx.streams.stderr(`\r\x1b[Kdm ${name}: working… ${Math.floor((Date.now() - started) / 1000)}s`);
  }, WAIT_NOTICE_MS);
  timer.unref();
  const stop = () => {
    if (timer === undefined) return;
    clearInterval(timer);
    timer = undefined;
    if (shown) ctx.streams.stderr('\r\x1b[K');
  };
  return {
    stop,
    streams: {
      stdout: (text) => {
        stop();
        ctx.streams.stdout(text);
      },
      stderr: (text) => {
        stop();
        ctx.streams.stderr(text);
      },
    },
  };
}

/**
 * The properties the command's configuration expands with: `-f` values files, then `--properties`
 * (the one precedence, client/src/merge/command-properties.ts).
 */
export async function propertiesOf(ctx: CommandContext): Promise<Record<string, unknown>> {
  const { commandProperties } = await import('../merge/command-properties.js');
  return commandProperties(ctx.valuesFiles, ctx.properties, { cwd: ctx.cwd });
}

/** Collects a repeatable flag's values into an array. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

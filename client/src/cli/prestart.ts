/**
 * `dm expand` starts its rendering processes first thing (bin/dm.js, before the CLI and the
 * engine load), so that their start-up overlaps dm's own instead of following it (docs/expansion.md,
 * "Speed"). This only guesses from the arguments: the expansion decides for itself what it needs
 * and takes a process over only where it would have started the very same one
 * (render-sandbox.ts, startRenderersEarly); a guess that was wrong costs a process that is killed.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { pythonRunnerDir } from '../expand/python/runner-cache.js';
import { enginesNamedIn, startRenderersEarly } from '../expand/sandbox/render-sandbox.js';
import { rendererSnapshotDir } from '../expand/sandbox/renderer-snapshot.js';

/** Largest configuration read for the guess (the expansion reads it again, with its own limits). */
const MAX_GUESS_BYTES = 1024 * 1024;

/** The value of `--name <v>` or `--name=v` in args, if given. */
function flagValue(args: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === name) value = args[i + 1];
    else if (a.startsWith(`${name}=`)) value = a.slice(name.length + 1);
  }
  return value;
}

/** The engines the first readable file among the arguments names (a template file: its own). */
function enginesOf(args: readonly string[]): { jinja: boolean; python: boolean } {
  for (const arg of args) {
    if (arg.startsWith('-')) continue;
    try {
      if (!statSync(arg).isFile() || statSync(arg).size > MAX_GUESS_BYTES) continue;
      const named = enginesNamedIn(readFileSync(arg, 'utf8'), dirname(arg));
      return { jinja: named.jinja || arg.endsWith('.jinja'), python: named.python || arg.endsWith('.py') };
    } catch {}
  }
  return { jinja: false, python: false };
}

/**
 * For `dm expand <args>`: starts the rendering process its configuration needs first (the Jinja
 * renderer from its snapshot in `dmCacheDir`, dm's cache directory, when there is one). Never
 * throws. When it names Jinja (or a schema, checked there), that is the Jinja process only: the
 * Python process would start beside it and slow its start on a small machine, and it is not
 * needed before a first rendering comes back; the command starts it once the CLI has loaded
 * (RenderSandbox.warm). Python alone starts here.
 */
export function prestartForExpand(args: readonly string[], dmCacheDir?: string): void {
  try {
    const memory = flagValue(args, '--memory');
    const python = flagValue(args, '--python');
    const engines = enginesOf(args);
    startRenderersEarly(engines.jinja ? { jinja: true } : engines, {
      ...(memory !== undefined ? { memoryMb: Number(memory) } : {}),
      ...(python !== undefined ? { python } : {}),
      // The same directory as the command's (commands/expand.ts), or the process is not taken.
      ...(dmCacheDir !== undefined
        ? { snapshots: rendererSnapshotDir(dmCacheDir), pythonRunners: pythonRunnerDir(dmCacheDir) }
        : {}),
    });
  } catch {}
}

/** Runs the real `dm` binary (bin/dm.js → dist/) in a subprocess, with its own XDG directories. */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const dmBin = join(repoRoot, 'bin', 'dm.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  input?: string;
  /** What a "killed by" note calls the program (default: the file's name). */
  label?: string;
  /**
   * Kill the program (SIGKILL) if it has not ended after this many ms: for a test of something
   * that could hang, so that a regression fails the test instead of holding the run.
   */
  killAfterMs?: number;
}

/** The homes `isolatedEnv` made, removed when the test process exits (its callers keep no handle to close). */
const homes: string[] = [];
process.once('exit', () => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/** Fresh, empty XDG directories for one test's `dm` runs (removed when the test process exits). */
export async function isolatedEnv(): Promise<Record<string, string>> {
  const home = await mkdtemp(join(tmpdir(), 'dm-home-'));
  homes.push(home);
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_STATE_HOME: join(home, 'state'),
  };
}

export function runDm(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1', ...options.env })) {
    if (v !== undefined && !k.startsWith('DM_')) env[k] = v;
  }
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined) env[k] = v;
  // Each run in its own process, unless a test asks for the expansion agent (test/cli/agent.test.ts):
  // an agent started from a test's temporary home would outlive the test.
  env.DM_AGENT ??= 'off';
  return runProcess(process.execPath, [dmBin, ...args], {
    ...options,
    cwd: options.cwd ?? repoRoot,
    env,
    label: 'dm',
  });
}

/**
 * Runs a program to its end with its output collected; stdin is `input` (or empty). `env` is the
 * whole environment (default: this process's).
 */
export function runProcess(
  file: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env = options.env ?? process.env;
    const child = spawn(file, args, { ...(options.cwd ? { cwd: options.cwd } : {}), env });
    const timer =
      options.killAfterMs === undefined
        ? undefined
        : setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // Killed by a signal: the shell's 128 + signal number, never a status a test could expect.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      return code !== null
        ? resolve({ code, stdout, stderr })
        : resolve({
            code: 128 + (signal ? constants.signals[signal] : 0),
            stdout,
            stderr: `${stderr}\n[${options.label ?? basename(file)} was killed by ${signal}]`,
          });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** The argument lists of the live descendants of `pid` (from /proc). */
export function descendants(pid: number): string[][] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: string[][] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      try {
        out.push(readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0').filter(Boolean));
      } catch {
        // gone meanwhile
      }
      walk(c);
    }
  };
  walk(pid);
  return out;
}

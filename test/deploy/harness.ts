/**
 * Runs the real `dm` CLI (a child process) with the real kubectl against the stand-in API server,
 * each test in its own HOME/XDG directories. kubectl goes through a recording wrapper so tests can
 * count and inspect invocations.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type KubeStandin, type StandinOptions, startKubeStandin } from '../kube-standin/server.js';

const root = new URL('../../../', import.meta.url).pathname;
export const DM_BIN = join(root, 'bin', 'dm.js');

export interface DmRun {
  /** Exit status; null when dm did not exit by itself (killed at the time limit, or not started). */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface DeployHarness {
  standin: KubeStandin;
  dir: string;
  kubeconfig: string;
  /** `input` is dm's standard input (default: none, closed). */
  dm(args: string[], options?: { timeoutMs?: number; input?: string }): Promise<DmRun>;
  /** dm with -o json; parses stdout. */
  dmJson<T = unknown>(args: string[]): Promise<{ code: number | null; data: T; stderr: string }>;
  file(name: string, text: string): string;
  /** kubectl argument lists dm ran, in order (since the last reset). */
  kubectlCalls(): string[][];
  resetKubectlCalls(): void;
  close(): Promise<void>;
}

export async function deployHarness(options: StandinOptions = {}): Promise<DeployHarness> {
  const standin = await startKubeStandin(options);
  const dir = mkdtempSync(join(tmpdir(), 'dm-deploy-test-'));
  const kubeconfig = standin.writeKubeconfig(dir, { contexts: { other: 'other-ns' } });
  const callLog = join(dir, 'kubectl-calls.jsonl');
  const wrapper = join(dir, 'kubectl-recorder.mjs');
  writeFileSync(
    wrapper,
    `#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
const args = process.argv.slice(2);
appendFileSync(${JSON.stringify(callLog)}, JSON.stringify(args) + '\\n');
const r = spawnSync('kubectl', args, { stdio: 'inherit' });
process.exit(r.status ?? 1);
`,
  );
  chmodSync(wrapper, 0o755);
  writeFileSync(callLog, '');
  mkdirSync(join(dir, 'work'));
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    DM_KUBECTL: wrapper,
    NO_COLOR: '1',
  };
  const dm = (args: string[], o: { timeoutMs?: number; input?: string } = {}) =>
    new Promise<DmRun>((resolve) => {
      const child = execFile(
        process.execPath,
        [DM_BIN, '--kubeconfig', kubeconfig, ...args],
        { cwd: join(dir, 'work'), env, timeout: o.timeoutMs ?? 300_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (!error) return resolve({ code: 0, stdout, stderr });
          if (typeof error.code === 'number') return resolve({ code: error.code, stdout, stderr });
          const why = error.killed ? 'killed at the time limit' : error.message;
          resolve({ code: null, stdout, stderr: `${stderr}\n[dm did not exit by itself: ${why}]` });
        },
      );
      child.stdin?.end(o.input ?? '');
    });
  return {
    standin,
    dir,
    kubeconfig,
    dm,
    async dmJson<T>(args: string[]) {
      const r = await dm(['-o', 'json', ...args]);
      let data: T;
      try {
        data = JSON.parse(r.stdout) as T;
      } catch {
        throw new Error(`dm ${args.join(' ')} printed no JSON (exit ${r.code}): ${r.stdout}\n${r.stderr}`);
      }
      return { code: r.code, data, stderr: r.stderr };
    },
    file(name, text) {
      const path = join(dir, 'work', name);
      writeFileSync(path, text);
      return path;
    },
    kubectlCalls: () =>
      readFileSync(callLog, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as string[]),
    resetKubectlCalls: () => writeFileSync(callLog, ''),
    async close() {
      await standin.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The subcommand of a kubectl argument list (after the target flags). */
export function subcommand(args: string[]): string {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (['--kubeconfig', '--context', '--namespace', '--cache-dir', '-n'].includes(a)) {
      i++;
      continue;
    }
    if (!a.startsWith('-')) return a;
  }
  return '';
}

/**
 * Runs the real `kubectl` against a stand-in (asynchronously: the stand-in lives in the same process,
 * so a synchronous spawn would deadlock). Test code only.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';

/**
 * How long one kubectl run may take before it is killed. A limit, not an expectation: a run on an idle
 * machine takes well under a second, but a loaded 2-core CI machine has been seen to take 20 s.
 */
export const KUBECTL_TIME_LIMIT_MS = 180_000;

export interface KubectlRun {
  args: string[];
  /** Exit status; null when kubectl did not exit by itself (killed at the time limit, or not started). */
  code: number | null;
  stdout: string;
  /** kubectl's stderr, followed by why it did not exit by itself when `code` is null. */
  stderr: string;
}

export interface KubectlOptions {
  kubeconfig: string;
  cacheDir: string;
  /** Input on stdin (for `-f -`). */
  input?: string;
  timeoutMs?: number;
}

export function kubectl(args: string[], options: KubectlOptions): Promise<KubectlRun> {
  const limit = options.timeoutMs ?? KUBECTL_TIME_LIMIT_MS;
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', options.kubeconfig, '--cache-dir', options.cacheDir, ...args],
      { timeout: limit, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve({ args, code: 0, stdout, stderr });
        if (typeof error.code === 'number') return resolve({ args, code: error.code, stdout, stderr });
        const why = error.killed ? `killed at the ${limit / 1000} s time limit` : error.message;
        resolve({ args, code: null, stdout, stderr: `${stderr}\n[kubectl did not exit by itself: ${why}]` });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}

function describeRun(run: KubectlRun): string {
  return `kubectl ${run.args.join(' ')} exited ${run.code ?? 'abnormally'}; stderr:\n${run.stderr}`;
}

/** Asserts that kubectl exited 0; the message names the command and carries its stderr. */
export function assertSucceeded(run: KubectlRun): KubectlRun {
  assert.equal(run.code, 0, describeRun(run));
  return run;
}

/** Asserts that kubectl exited by itself with a failure status (not 0, and not killed at the limit). */
export function assertFailed(run: KubectlRun): KubectlRun {
  assert.ok(run.code !== null && run.code > 0, describeRun(run));
  return run;
}

/** The request lines (`METHOD path?query`) kubectl itself logs at -v=6 or more, ports and hashes removed. */
export function requestLinesFromKubectlLog(stderr: string): string[] {
  const out: string[] = [];
  for (const line of stderr.split('\n')) {
    const m = /round_trippers\.go:\d+\] (GET|PUT|POST|PATCH|DELETE) https?:\/\/[^/]+(\/\S*)/.exec(line);
    if (m) out.push(normalizeRequestLine(`${m[1]} ${m[2]}`));
  }
  return out;
}

/** Drops `timeout=32s`; OpenAPI hashes, watch timeouts and resource versions become placeholders. */
export function normalizeRequestLine(line: string): string {
  const [method, target] = line.split(' ') as [string, string];
  const url = new URL(target, 'http://x');
  url.searchParams.delete('timeout');
  if (url.searchParams.has('hash')) url.searchParams.set('hash', 'H');
  if (url.searchParams.has('timeoutSeconds')) url.searchParams.set('timeoutSeconds', 'T');
  const rv = url.searchParams.get('resourceVersion');
  if (rv !== null && rv !== '0' && rv !== '') url.searchParams.set('resourceVersion', 'RV');
  const q = url.searchParams.toString();
  return `${method} ${url.pathname}${q ? `?${q}` : ''}`;
}

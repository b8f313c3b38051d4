/**
 * Runs the real `kubectl` against a stand-in (asynchronously: the stand-in lives in the same process,
 * so a synchronous spawn would deadlock). Test code only.
 */
import { execFile } from 'node:child_process';

export interface KubectlRun {
  code: number;
  stdout: string;
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
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', options.kubeconfig, '--cache-dir', options.cacheDir, ...args],
      { timeout: options.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
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

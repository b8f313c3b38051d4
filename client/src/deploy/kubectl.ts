/**
 * The one way dm runs `kubectl` (docs/deployments.md "Order and batching"): argument arrays only (never a shell),
 * `--kubeconfig` and `--context` passed through as given, documents on stdin, and a count of
 * invocations (the bench and tests read it). The namespace is not a kubectl flag: it is the default
 * namespace dm writes into objects that name none, so an object naming its own namespace applies the
 * same from `dm deploy -n x` and from the Deployment Manager service (docs/deployments.md "From
 * primitive to object").
 */
import { spawn } from 'node:child_process';
import { DmError } from '../error.js';

export interface KubectlTarget {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  /** Namespace of objects that name none (`-n`, the service's deployment namespace); never `--namespace`. */
  namespace?: string | undefined;
}

export interface KubectlOptions extends KubectlTarget {
  /** The kubectl executable (default `kubectl` on PATH). */
  binary?: string;
  /** Discovery cache directory (`--cache-dir`). */
  cacheDir?: string | undefined;
  /** Environment for kubectl; default: this process's. */
  env?: Record<string, string | undefined>;
  /** Per-invocation time limit, ms (default 10 minutes). */
  timeoutMs?: number;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class Kubectl {
  /** How many times kubectl was started. */
  invocations = 0;
  /** Every argument list, in order (for tests and --verbose). */
  readonly calls: string[][] = [];

  constructor(readonly options: KubectlOptions = {}) {}

  /**
   * Flags selecting the cluster, as the user gave them. Every object dm sends or names carries its
   * namespace, and kubectl refuses a document whose namespace differs from `--namespace`.
   */
  targetArgs(): string[] {
    const o = this.options;
    return [
      ...(o.kubeconfig ? ['--kubeconfig', o.kubeconfig] : []),
      ...(o.context ? ['--context', o.context] : []),
      ...(o.cacheDir ? ['--cache-dir', o.cacheDir] : []),
    ];
  }

  /**
   * Runs kubectl once. A context whose user holds no credentials makes kubectl ask for a username
   * (on stdout) and fail on the closed input with "EOF": that is CLUSTER_UNAUTHORIZED saying what
   * is missing (docs/deployments.md "When the cluster says no"), whatever the command.
   */
  async run(args: readonly string[], input?: string): Promise<KubectlResult> {
    const r = await this.runOnce(args, input);
    if (r.code !== 0 && CREDENTIALS_PROMPT.test(r.stdout)) {
      const target = await readTarget(this).catch(() => undefined);
      const context = this.options.context ?? target?.context;
      throw new DmError(
        'CLUSTER_UNAUTHORIZED',
        `context '${context ?? '(none)'}' has no credentials for the cluster${target?.server ? ` at ${target.server}` : ''} (its kubeconfig user names no token, client certificate or exec plugin)`,
        {
          hint: "give that context's user a token, client certificate or exec plugin in the kubeconfig, or pick another context with --context",
        },
      );
    }
    return r;
  }

  private runOnce(args: readonly string[], input?: string): Promise<KubectlResult> {
    const full = [...this.targetArgs(), ...args];
    this.invocations++;
    this.calls.push(full);
    const binary = this.options.binary ?? 'kubectl';
    return new Promise((resolve, reject) => {
      const child = spawn(binary, full, {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: (this.options.env ?? process.env) as NodeJS.ProcessEnv,
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => out.push(c));
      child.stderr.on('data', (c: Buffer) => err.push(c));
      const timer = setTimeout(() => child.kill('SIGTERM'), this.options.timeoutMs ?? 600_000);
      child.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          new DmError(
            'KUBECTL_NOT_FOUND',
            error.code === 'ENOENT'
              ? `cannot run '${binary}': not found on PATH`
              : `cannot run '${binary}': ${error.message}`,
            { category: 'unreachable', hint: 'install kubectl, or put it on PATH' },
          ),
        );
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({
          code: code ?? 1,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
        });
      });
      child.stdin.on('error', () => {});
      child.stdin.end(input ?? '');
    });
  }
}

export interface ClusterTarget {
  context: string | undefined;
  namespace: string;
  server: string | undefined;
}

/** The context, its namespace and server, as kubectl resolves them (no cluster call). */
export async function readTarget(kubectl: Kubectl): Promise<ClusterTarget> {
  const r = await kubectl.run(['config', 'view', '--minify', '-o', 'json']);
  if (r.code !== 0) {
    const why = /current-context must exist/.test(r.stderr)
      ? 'no Kubernetes context is selected (the kubeconfig is missing or has no current-context)'
      : `kubectl cannot use the kubeconfig: ${r.stderr.trim()}`;
    throw new DmError('KUBECONFIG_INVALID', why, {
      category: 'unreachable',
      hint: 'pass --kubeconfig and --context, or set KUBECONFIG',
    });
  }
  const view = JSON.parse(r.stdout) as {
    'current-context'?: string;
    contexts?: { context?: { namespace?: string } }[];
    clusters?: { cluster?: { server?: string } }[];
  };
  return {
    context: view['current-context'],
    namespace: kubectl.options.namespace ?? view.contexts?.[0]?.context?.namespace ?? 'default',
    server: view.clusters?.[0]?.cluster?.server,
  };
}

/** `cannot reach the cluster at <server> (context '<name>')`: nothing answered. */
export function unreachableMessage(target: Partial<ClusterTarget> | undefined): string {
  return `cannot reach the cluster${target?.server ? ` at ${target.server}` : ''}${target?.context ? ` (context '${target.context}')` : ''}`;
}

/** kubectl's own words for what went wrong: its first error, else its last line that is not a log line. */
export function kubectlSays(stderr: string): string {
  const first = splitErrors(stderr)[0];
  if (first) return first.replace(/^error: /, '');
  const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !/^[IWE]\d{4} /.test(l));
  return lines[lines.length - 1]?.trim() ?? 'kubectl failed';
}

/** An RBAC denial: `Error from server (Forbidden): … is forbidden: User "…" cannot …`. */
const RBAC_DENIAL = /^Error from server \(Forbidden\):.*\bUser "[^"]*" cannot /;
/** kubectl's basic-auth prompt, printed when the context's user has nothing to authenticate with. */
const CREDENTIALS_PROMPT = /^Please enter Username: /;
/** The API server refused the credentials (HTTP 401), in kubectl's words. */
const UNAUTHORIZED =
  /You must be logged in to the server|^error: Unauthorized$|Error from server \(Unauthorized\)/m;

/**
 * What a cluster that answered but said no said (docs/deployments.md "When the cluster says no"):
 * the context's credentials refused (`CLUSTER_UNAUTHORIZED`), or, when every one of the `objects`
 * kubectl was given is an RBAC denial, its permissions (`CLUSTER_FORBIDDEN`); both exit 1 with
 * kubectl's words and the context's name. Undefined for anything else (nothing answered is
 * `isUnreachable`; one object refused among others is that object's failure).
 */
export async function clusterRefusal(
  kubectl: Kubectl,
  stderr: string,
  objects = 1,
): Promise<DmError | undefined> {
  const errors = splitErrors(stderr);
  const unauthorized = UNAUTHORIZED.test(stderr);
  const forbidden = errors.length >= objects && errors.every((e) => RBAC_DENIAL.test(e));
  if (!unauthorized && !forbidden) return undefined;
  const target = await readTarget(kubectl).catch(() => undefined);
  const context = kubectl.options.context ?? target?.context;
  const cluster = `the cluster${target?.server ? ` at ${target.server}` : ''}`;
  const words = kubectlSays(stderr);
  if (unauthorized) {
    return new DmError(
      'CLUSTER_UNAUTHORIZED',
      `${cluster} refused the credentials of context '${context ?? '(none)'}': ${words}`,
      { hint: "renew that context's token or certificate in the kubeconfig, or pick another with --context" },
    );
  }
  return new DmError(
    'CLUSTER_FORBIDDEN',
    `${cluster} refused what context '${context ?? '(none)'}' asked: ${words}`,
    {
      hint: "the context's user lacks the RBAC permission named; ask the cluster's administrator, or pick another context with --context",
    },
  );
}

/** Whether kubectl's error output says the cluster could not be reached. */
export function isUnreachable(stderr: string): boolean {
  return /connection refused|no such host|i\/o timeout|Unable to connect to the server|dial tcp|TLS handshake timeout|context deadline exceeded|the server is currently unable/i.test(
    stderr,
  );
}

/** Splits kubectl's stderr into one message per error (`Error from server …`, `error: …`). */
export function splitErrors(stderr: string): string[] {
  const blocks: string[] = [];
  for (const line of stderr.split('\n')) {
    if (/^(Error from server|error:|Error: |error when )/.test(line)) blocks.push(line);
    else if (blocks.length > 0 && line.trim() !== '' && !/^[IWE]\d{4} /.test(line)) {
      blocks[blocks.length - 1] += `\n${line}`;
    }
  }
  return blocks.map((b) => b.trim());
}

/**
 * A real OCI registry for the tests (docs/oci.md "Tests"): Debian's `docker-registry` (the CNCF
 * distribution server) on a loopback port, storing in a temporary directory, optionally behind
 * htpasswd basic authentication (the file written by Debian's `htpasswd -B`). Stopped by `stop()`
 * and, as a last resort, when the test process exits.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface OciRegistry {
  /** `127.0.0.1:<port>`. */
  host: string;
  dir: string;
  stop(): void;
}

export const DOCKER_REGISTRY = '/usr/bin/docker-registry';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface TokenAuth {
  /** The token service's URL (the `realm` of the registry's Bearer challenge). */
  realm: string;
  service: string;
  issuer: string;
  /** PEM certificate whose key signs the tokens (the registry's root certificate bundle). */
  certFile: string;
}

/**
 * Starts a registry; with `users`, every request needs one of them (basic auth); with `token`, a
 * bearer token from that token service (the registry's `auth: token:` configuration).
 */
export async function startOciRegistry(
  options: { users?: Record<string, string>; token?: TokenAuth } = {},
): Promise<OciRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'dm-oci-'));
  let lastError = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const auth = options.users
      ? (() => {
          const file = join(dir, 'htpasswd');
          const lines = Object.entries(options.users).map(([user, password]) =>
            execFileSync('htpasswd', ['-nbB', user, password], { encoding: 'utf8' }).trim(),
          );
          writeFileSync(file, `${lines.join('\n')}\n`);
          return `auth:\n  htpasswd:\n    realm: dm-test\n    path: ${file}\n`;
        })()
      : options.token
        ? `auth:\n  token:\n    realm: ${options.token.realm}\n    service: ${options.token.service}\n    issuer: ${options.token.issuer}\n    rootcertbundle: ${options.token.certFile}\n`
        : '';
    const config = join(dir, 'config.yml');
    writeFileSync(
      config,
      `version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, 'data')}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:${port}\n${auth}`,
    );
    const child = spawn(DOCKER_REGISTRY, ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    running.add(child);
    let stderr = '';
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Ready when /v2/ answers (200 open, 401 with auth); a port taken meanwhile ends the process.
    for (let i = 0; i < 600; i++) {
      const state = await Promise.race([
        exited.then(() => 'exited' as const),
        fetch(`http://127.0.0.1:${port}/v2/`)
          .then((r) => (r.status === 200 || r.status === 401 ? ('ready' as const) : ('wait' as const)))
          .catch(() => 'wait' as const),
      ]);
      if (state === 'ready') {
        return {
          host: `127.0.0.1:${port}`,
          dir,
          stop() {
            child.kill('SIGKILL');
            running.delete(child);
            rmSync(dir, { recursive: true, force: true });
          },
        };
      }
      if (state === 'exited') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    running.delete(child);
    lastError = stderr.slice(-500);
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`docker-registry did not start: ${lastError}`);
}

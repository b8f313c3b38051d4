/**
 * Credentials for OCI registries (docs/oci.md "Credentials"), read as podman, skopeo and docker
 * write them: an `auths` map of `host[:port]` (or `host[:port]/namespace`) to `{auth: base64(user:password)}`.
 * The files are looked at in the containers-auth.json order: `$REGISTRY_AUTH_FILE`,
 * `$XDG_RUNTIME_DIR/containers/auth.json`, `$XDG_CONFIG_HOME/containers/auth.json`, then docker's
 * `$DOCKER_CONFIG/config.json` (default `~/.docker/config.json`). Credential helpers are not run.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DmError } from '../error.js';

export interface BasicCredentials {
  username: string;
  password: string;
  /** The file the credentials came from, for messages. */
  file: string;
}

/** The auth files to look in, first match wins (only files that exist are read). */
export function authFiles(env: Record<string, string | undefined>): string[] {
  const home = env.HOME || homedir();
  const files: string[] = [];
  if (env.REGISTRY_AUTH_FILE) files.push(env.REGISTRY_AUTH_FILE);
  if (env.XDG_RUNTIME_DIR) files.push(join(env.XDG_RUNTIME_DIR, 'containers', 'auth.json'));
  files.push(join(env.XDG_CONFIG_HOME || join(home, '.config'), 'containers', 'auth.json'));
  files.push(join(env.DOCKER_CONFIG || join(home, '.docker'), 'config.json'));
  return files;
}

/** An auths key as a plain `host[:port][/path]` (docker writes `https://host/v1/` for some). */
function normaliseKey(key: string): string {
  return key
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/\/v[12]\/?$/, '')
    .replace(/\/+$/, '');
}

function readAuths(file: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new DmError(
      'CONFIG_UNREADABLE',
      `cannot read registry credentials ${file}: ${(error as Error).message}`,
      {
        category: 'invalid-input',
      },
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new DmError('INVALID_CONFIG_FILE', `${file}: registry credentials are not JSON`);
  }
  const auths = (data as { auths?: unknown } | null)?.auths;
  return auths && typeof auths === 'object' ? (auths as Record<string, unknown>) : {};
}

/**
 * The credentials for a repository (`host[:port]/name`): the longest key that is the host or a
 * path prefix of the repository, in the first file that has one.
 */
export function findCredentials(
  files: readonly string[],
  host: string,
  repository: string,
): BasicCredentials | undefined {
  const full = `${host}/${repository}`;
  for (const file of files) {
    const auths = readAuths(file);
    if (!auths) continue;
    let best: { length: number; auth: string } | undefined;
    for (const [key, value] of Object.entries(auths)) {
      const k = normaliseKey(key);
      if (k !== host && !full.startsWith(`${k}/`) && k !== full) continue;
      const auth = (value as { auth?: unknown } | null)?.auth;
      if (typeof auth !== 'string' || auth === '') continue;
      if (!best || k.length > best.length) best = { length: k.length, auth };
    }
    if (!best) continue;
    const decoded = Buffer.from(best.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon <= 0) {
      throw new DmError(
        'INVALID_CONFIG_FILE',
        `${file}: the auth entry for ${host} is not base64 of user:password`,
      );
    }
    return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1), file };
  }
  return undefined;
}

export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** Parses `WWW-Authenticate: Bearer realm="…",service="…",scope="…"` (one challenge). */
export function parseChallenge(header: string | null): Challenge | undefined {
  if (!header) return undefined;
  const match = /^\s*([A-Za-z]+)\s*(.*)$/s.exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  for (const m of match[2]!.matchAll(/([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) {
    params[m[1]!.toLowerCase()] = (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1');
  }
  return { scheme: match[1]!.toLowerCase(), params };
}

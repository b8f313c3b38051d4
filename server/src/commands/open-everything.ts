/**
 * Opens what a `dm-registry` command needs (keys, store, service, app) from its options and the
 * environment (docs/server.md "Running it"), and the few steps more than one command shares.
 */

import { hostname } from 'node:os';
import { join } from 'node:path';
import { DmError } from '../../../client/src/error.js';
import type { CreateAppDeps } from '../api/app.js';
import {
  type CommonOptions,
  type DatabaseTarget,
  databaseTarget,
  localDir,
  openDatabase,
  syncLeaseTtl,
} from './target.js';

export async function openEverything(
  target: DatabaseTarget,
  env: NodeJS.ProcessEnv,
  extra: {
    accessLog?: boolean;
    clusters?: string[] | undefined;
    upstreams?: Pick<CreateAppDeps, 'upstreams' | 'upstreamTtlMs' | 'upstreamNegativeTtlMs'>;
    /** `--checksum-key FILE` (default log.key in the data directory) and `--notify-url` (repeatable). */
    checksumKey?: string | undefined;
    notifyUrls?: string[] | undefined;
  },
) {
  const { loadSecretKey } = await import('../store/secrets.js');
  const { createApp } = await import('../api/app.js');
  const { defaultSourceFactory } = await import('../service.js');
  const { createLogger } = await import('../log.js');
  const dataDir = localDir(target);
  // Keys before the database: a refused key file leaves no pool open.
  const { loadChecksumKey } = await import('../checksums.js');
  const signer = loadChecksumKey({
    file: extra.checksumKey ?? join(dataDir, 'log.key'),
    name: `${hostname().toLowerCase()}/checksums`,
  });
  const database = await openDatabase(target);
  const { store } = database;
  // `start` logs to stdout; one-off commands keep stdout for their output.
  const logger = createLogger(extra.accessLog === false ? { write: (t) => process.stderr.write(t) } : {});
  const secretKey = loadSecretKey({
    keyBase64: env.DM_REGISTRY_SECRET_KEY,
    keyFile: join(dataDir, 'secret.key'),
  });
  const githubApiUrl = env.GITHUB_API_URL;
  const manager = extra.clusters?.length
    ? await import('../manager/deployment-manager.js').then(async ({ parseClusterFlags }) => ({
        clusters: parseClusterFlags(extra.clusters!),
        ...(await import('../manager/manager-tokens.js')).managerPaths(join(dataDir, 'registry.db')),
        kubectlBinary: env.DM_KUBECTL,
        leaseTtlMs: syncLeaseTtl(env).syncLeaseTtlMs,
        env,
      }))
    : undefined;
  const githubHosts = githubApiUrl ? [new URL(githubApiUrl).hostname.replace(/^api\./, '')] : [];
  let server: ReturnType<typeof createApp>;
  try {
    server = createApp({
      store,
      sources: defaultSourceFactory({
        githubApiUrl,
        githubToken: env.GITHUB_TOKEN,
        gitCacheDir: join(dataDir, 'git'),
        onWarning: (message, details) => logger.log('warn', message, details),
      }),
      secretKey,
      adminTokens: env.DM_ADMIN_TOKEN ? [env.DM_ADMIN_TOKEN] : [],
      // A token for /metrics alone: the scraper sees private sums (docs/server.md, "HTTP API").
      metricsTokens: env.DM_METRICS_TOKEN ? [env.DM_METRICS_TOKEN] : [],
      ...syncLeaseTtl(env),
      githubHosts,
      logger,
      ...(extra.accessLog === undefined ? {} : { accessLog: extra.accessLog }),
      manager,
      ...extra.upstreams,
      ...(extra.upstreams?.upstreams
        ? {
            // The latest checkpoint of each upstream's log a verifying mirror checked, kept across
            // restarts (docs/mirroring.md): `<data>/upstream-checksums/<upstream>/latest`.
            upstreams: extra.upstreams.upstreams.map((u) =>
              u.checksumKey === undefined
                ? u
                : {
                    ...u,
                    checkpointFile: join(
                      dataDir,
                      'upstream-checksums',
                      u.url.replace(/^https?:\/\//, '').replace(/[^A-Za-z0-9._-]+/g, '_'),
                      'latest',
                    ),
                  },
            ),
          }
        : {}),
      checksums: {
        signer,
        notify: { urls: notifyUrlsOf(extra.notifyUrls ?? []), secret: env.DM_REGISTRY_NOTIFY_SECRET },
      },
    });
  } catch (error) {
    await database.close();
    throw error;
  }
  return { store, server, logger, githubHosts, database };
}

/** `--notify-url` values: http(s) URLs only (docs/integrity-store.md §2). */
function notifyUrlsOf(urls: readonly string[]): string[] {
  return urls.map((url) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {}
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new DmError('INVALID_FLAG_VALUE', `--notify-url '${url.slice(0, 200)}' is not an http(s) URL`, {
        category: 'usage',
      });
    }
    return parsed.toString();
  });
}

/** Adds (or updates) the registries named by `--index source[=name]`; returns their ids. */
export async function ensureIndexed(
  server: Awaited<ReturnType<typeof openEverything>>['server'],
  flags: readonly string[],
  githubHosts: readonly string[],
): Promise<{ id: number; name: string; local: boolean }[]> {
  const { parseSourceSpec } = await import('../source/source-spec.js');
  const out: { id: number; name: string; local: boolean }[] = [];
  for (const flag of flags) {
    const eqAt = flag.lastIndexOf('=');
    const hasName = eqAt > 0 && !/^[a-z]+:\/\//.test(flag.slice(eqAt + 1));
    const source = hasName ? flag.slice(0, eqAt) : flag;
    const spec = parseSourceSpec(source, {
      githubHosts,
      upstreams: server.service.mirror?.upstreams.map((u) => u.url) ?? [],
    });
    const local = spec.type === 'directory' || (spec.type === 'git' && !/^[a-z]+:\/\/|@/.test(spec.location));
    // The name given, else the source's own (a local directory's registry.yaml `name:`, source-spec.ts).
    const name = (hasName ? flag.slice(eqAt + 1) : undefined) ?? spec.defaultName;
    const row = await server.service.addOrUpdate({ source, name });
    out.push({ id: row.id, name: row.name, local });
  }
  return out;
}

/** Opens the database and service for a one-off command, runs `work`, closes. */
export async function withService(
  o: CommonOptions,
  env: NodeJS.ProcessEnv,
  work: (service: Awaited<ReturnType<typeof openEverything>>['server']['service']) => Promise<void>,
): Promise<void> {
  const { server, database } = await openEverything(databaseTarget(o.db, env, o.dataDir), env, {
    accessLog: false,
  });
  try {
    await work(server.service);
  } finally {
    await server.service.stop();
    await database.close();
  }
}

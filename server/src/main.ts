/**
 * `dm-registry` (docs/server.md "Running it"): `start`, `index`, `migrate`, `token create`.
 * Configuration is read here, once, with the precedence flag > environment > default
 * (DM_REGISTRY_DB, DM_REGISTRY_PORT, DM_ADMIN_TOKEN, DM_REGISTRY_SECRET_KEY, GITHUB_TOKEN,
 * GITHUB_API_URL), and passed down as options; the library below never reads process.env.
 */

import { readFileSync } from 'node:fs';
import net from 'node:net';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { packageVersion } from '../../client/src/cli/package-version.js';
import { parseYaml } from '../../client/src/document/yaml.js';
import { DmError, exitCodeFor, fromSystemError, isDmError } from '../../client/src/error.js';
import { parseVerifierKey } from '../../client/src/integrity/keys.js';
import { ADMIN_ACCESS } from './api/access.js';
import type { CreateAppDeps } from './api/app.js';
import { Upstream } from './mirror/upstream.js';
import { commitShown } from './source/directory.js';
import { parseOrganisationList } from './store/visibility.js';

interface CommonOptions {
  db?: string;
  dataDir?: string;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The database, and the data directory: where this process keeps what is its own (see `localDir`). */
type DatabaseTarget = ({ kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string }) & {
  dataDir: string;
};

const DATA_DIR_HELP =
  'where this process keeps its own files: keys, git cache, upstream checkpoints (env DM_REGISTRY_DATA_DIR; default: beside an SQLite file, ./data with PostgreSQL)';

/**
 * `file:./data/registry.db` (or a path) → an SQLite file; `postgres://…` → PostgreSQL. The data
 * directory is `--data-dir`, else DM_REGISTRY_DATA_DIR, else the SQLite file's directory, else
 * (PostgreSQL) `./data` of the working directory (docs/server.md, "Running it").
 */
function databaseTarget(
  option: string | undefined,
  env: NodeJS.ProcessEnv,
  dataDirOption?: string,
): DatabaseTarget {
  const text = option ?? env.DM_REGISTRY_DB ?? 'file:./data/registry.db';
  const given = dataDirOption ?? env.DM_REGISTRY_DATA_DIR;
  const dataDir = given ? resolve(given) : undefined;
  if (/^postgres(ql)?:\/\//i.test(text))
    return { kind: 'postgres', url: text, dataDir: dataDir ?? resolve('data') };
  const file = resolve(text.replace(/^file:/, ''));
  return { kind: 'sqlite', file, dataDir: dataDir ?? dirname(file) };
}

/**
 * Where a process keeps what is its own (the git cache, the secret key file when
 * DM_REGISTRY_SECRET_KEY is not set, the checksum log's key, the upstream checkpoints, the
 * Deployment Manager's state): the target's data directory.
 */
function localDir(target: DatabaseTarget): string {
  return target.dataDir;
}

/** Opens the store of `--db` (migrations applied); `close` ends it. */
async function openDatabase(target: DatabaseTarget) {
  if (target.kind === 'postgres') {
    const { openPostgresStore } = await import('./store/postgres.js');
    const store = await openPostgresStore(target.url);
    return { store, display: store.displayUrl, close: () => store.close() };
  }
  const { openStore } = await import('./store/db.js');
  const store = openStore(target.file);
  return { store, display: target.file, close: async () => store.close() };
}

/** DM_REGISTRY_SYNC_LEASE_TTL_MS: how long a sync lease outlives its last heartbeat (PostgreSQL). */
function syncLeaseTtl(env: NodeJS.ProcessEnv): { syncLeaseTtlMs?: number } {
  const text = env.DM_REGISTRY_SYNC_LEASE_TTL_MS;
  if (text === undefined || text === '') return {};
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 300 || ms > 3_600_000) {
    throw new DmError(
      'USAGE',
      `DM_REGISTRY_SYNC_LEASE_TTL_MS must be a whole number of milliseconds from 300 to 3600000, not '${text}'`,
      { category: 'usage' },
    );
  }
  return { syncLeaseTtlMs: ms };
}

/** `name:` declared in a local registry's registry.yaml, as the client reads it. */
function declaredName(dir: string): string | undefined {
  try {
    const doc = parseYaml(readFileSync(join(dir, 'registry.yaml'), 'utf8'));
    const name = doc && typeof doc === 'object' ? (doc as Record<string, unknown>).name : undefined;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

async function openEverything(
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
  const { loadSecretKey } = await import('./store/secrets.js');
  const { createApp } = await import('./api/app.js');
  const { defaultSourceFactory } = await import('./service.js');
  const { createLogger } = await import('./log.js');
  const dataDir = localDir(target);
  // Keys before the database: a refused key file leaves no pool open.
  const { loadChecksumKey } = await import('./checksums.js');
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
    ? await import('./manager/deployment-manager.js').then(async ({ parseClusterFlags }) => ({
        clusters: parseClusterFlags(extra.clusters!),
        ...(await import('./manager/manager-tokens.js')).managerPaths(join(dataDir, 'registry.db')),
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
async function ensureIndexed(
  server: Awaited<ReturnType<typeof openEverything>>['server'],
  flags: readonly string[],
  githubHosts: readonly string[],
): Promise<{ id: number; name: string; local: boolean }[]> {
  const { parseSourceSpec } = await import('./source/source-spec.js');
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
    const name =
      (hasName ? flag.slice(eqAt + 1) : undefined) ??
      (local ? declaredName(spec.location) : undefined) ??
      spec.defaultName;
    const row = await server.service.addOrUpdate({ source, name });
    out.push({ id: row.id, name: row.name, local });
  }
  return out;
}

/** An upstream's checksum log verifier key from its file (docs/mirroring.md), checked. */
function readVerifierKeyFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new DmError(
      'USAGE',
      `--upstream-checksum-key ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      {
        category: 'usage',
      },
    );
  }
  try {
    parseVerifierKey(text);
  } catch {
    throw new DmError(
      'CHECKSUM_KEY_INVALID',
      `${file} is not a checksum log verifier key (dm-registry checksum-key prints one)`,
      {
        category: 'invalid-input',
      },
    );
  }
  return text;
}

/** `--upstream URL` (repeatable) with `--upstream-token-env NAME` paired by position (docs/mirroring.md). */
function upstreamsOf(
  options: {
    upstream?: string[];
    upstreamTokenEnv?: string[];
    upstreamChecksumKey?: string[];
    upstreamTtl?: string;
    upstreamNegativeTtl?: string;
  },
  env: NodeJS.ProcessEnv,
): Pick<CreateAppDeps, 'upstreams' | 'upstreamTtlMs' | 'upstreamNegativeTtlMs'> | undefined {
  const urls = options.upstream ?? [];
  const tokenEnvs = options.upstreamTokenEnv ?? [];
  const keyFiles = options.upstreamChecksumKey ?? [];
  if (urls.length === 0) {
    if (tokenEnvs.length > 0 || keyFiles.length > 0 || options.upstreamTtl || options.upstreamNegativeTtl) {
      throw new DmError(
        'USAGE',
        '--upstream-token-env, --upstream-checksum-key, --upstream-ttl and --upstream-negative-ttl need --upstream',
        {
          category: 'usage',
        },
      );
    }
    return undefined;
  }
  if (keyFiles.length > urls.length) {
    throw new DmError(
      'USAGE',
      `${keyFiles.length} --upstream-checksum-key for ${urls.length} --upstream: they pair by position`,
      { category: 'usage' },
    );
  }
  if (tokenEnvs.length > urls.length) {
    throw new DmError(
      'USAGE',
      `${tokenEnvs.length} --upstream-token-env for ${urls.length} --upstream: they pair by position`,
      {
        category: 'usage',
      },
    );
  }
  const seconds = (flag: string, text: string | undefined, fallback: number) => {
    if (text === undefined) return fallback * 1000;
    const n = Number(text);
    if (!Number.isFinite(n) || n < 0 || text.trim() === '') {
      throw new DmError('USAGE', `${flag} must be a number of seconds, not '${text}'`, { category: 'usage' });
    }
    return n * 1000;
  };
  return {
    upstreams: urls.map((url, i) => {
      const name = tokenEnvs[i];
      if (name !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        throw new DmError(
          'USAGE',
          `--upstream-token-env takes an environment variable's name, not '${name}'`,
          {
            category: 'usage',
          },
        );
      }
      const token = name === undefined ? undefined : env[name];
      if (name !== undefined && !token) {
        throw new DmError('USAGE', `--upstream-token-env ${name}: the environment variable is not set`, {
          category: 'usage',
        });
      }
      const keyFile = keyFiles[i];
      return {
        url: Upstream.normaliseUrl(url),
        token,
        ...(keyFile === undefined ? {} : { checksumKey: readVerifierKeyFile(keyFile) }),
      };
    }),
    upstreamTtlMs: seconds('--upstream-ttl', options.upstreamTtl, 300),
    upstreamNegativeTtlMs: seconds('--upstream-negative-ttl', options.upstreamNegativeTtl, 60),
  };
}

async function start(
  options: CommonOptions & {
    port?: string;
    host?: string;
    index?: string[];
    defaultRegistry?: string;
    cluster?: string[];
    upstream?: string[];
    upstreamTokenEnv?: string[];
    upstreamChecksumKey?: string[];
    upstreamTtl?: string;
    upstreamNegativeTtl?: string;
    checksumKey?: string;
    notifyUrl?: string[];
  },
  env: NodeJS.ProcessEnv,
) {
  const { serve } = await import('@hono/node-server');
  const upstreams = upstreamsOf(options, env);
  const target = databaseTarget(options.db, env, options.dataDir);
  const port = Number(options.port ?? env.DM_REGISTRY_PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new DmError('INVALID_PORT', `'${options.port ?? env.DM_REGISTRY_PORT}' is not a port number`, {
      category: 'usage',
    });
  }
  // Loopback unless told otherwise: a server started to try dm is not reachable from the network.
  const host = options.host ?? env.DM_REGISTRY_HOST ?? '127.0.0.1';
  const hostFlag = options.host !== undefined ? '--host' : 'DM_REGISTRY_HOST';
  if (
    net.isIP(host) === 0 &&
    !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(host)
  ) {
    throw new DmError('INVALID_HOST', `'${host}' is not an address or host name (${hostFlag})`, {
      category: 'usage',
      hint: 'for example --host 127.0.0.1, --host 0.0.0.0 (every IPv4 interface) or --host ::',
    });
  }
  const { server, logger, githubHosts, database } = await openEverything(target, env, {
    clusters: options.cluster,
    upstreams,
    checksumKey: options.checksumKey,
    notifyUrls: options.notifyUrl,
  });
  const { service, app } = server;
  // The last line of defence: background work handles its own failures (service.sync never
  // rejects); anything that still escapes is logged, and the server keeps serving.
  process.on('unhandledRejection', (reason) => {
    logger.log('error', 'unhandled rejection', {
      error: reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason),
    });
  });
  const indexed = await ensureIndexed(server, options.index ?? [], githubHosts);
  const defaultRegistry = options.defaultRegistry ?? indexed[0]?.name;
  service.catalog.defaultRegistry = defaultRegistry;

  // Local sources are indexed before listening (a new user can query at once); remote ones after.
  for (const r of indexed.filter((i) => i.local)) await service.sync(r.id, 'start');
  for (const r of indexed.filter((i) => !i.local)) void service.sync(r.id, 'start');
  service.startScheduler();

  const http = serve({ fetch: app.fetch, port, hostname: host }, (info) => {
    logger.log('info', 'listening', {
      port: info.port,
      host,
      url: `http://${net.isIPv6(host) ? `[${host}]` : host}:${info.port}/`,
      db: database.display,
      defaultRegistry: defaultRegistry ?? null,
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      http.once('listening', resolve);
      http.once('error', reject);
    });
  } catch (error) {
    await service.stop();
    await database.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      throw new DmError(
        'INVALID_HOST',
        `cannot listen on '${host}' (${hostFlag}): not an address of this machine`,
        {
          category: 'usage',
          cause: error,
        },
      );
    }
    throw (
      fromSystemError(error, options.port !== undefined ? '--port' : 'DM_REGISTRY_PORT or --port') ?? error
    );
  }
  // Draining (docs/server.md, "Stopping"): on SIGTERM every response says `Connection: close`, so
  // keep-alive clients stop reusing their sockets; after the drain period the server stops
  // accepting new connections and closes each socket only once it has been idle for the drain
  // period (a connection accepted a moment ago still gets its request answered, with
  // `Connection: close`), waits for requests and syncs in flight, and exits. Node's own
  // `server.close()` would also close sockets whose first request has not been read yet, which
  // resets those clients.
  let stopping = false;
  const drainMs = Number.isFinite(Number(env.DM_REGISTRY_DRAIN_MS ?? 1000))
    ? Math.max(0, Number(env.DM_REGISTRY_DRAIN_MS ?? 1000))
    : 1000;
  const httpServer = http as unknown as import('node:http').Server;
  const sockets = new Map<import('node:net').Socket, { busy: number; since: number }>();
  httpServer.on('connection', (socket) => {
    sockets.set(socket, { busy: 0, since: Date.now() });
    socket.on('close', () => sockets.delete(socket));
  });
  httpServer.prependListener('request', (req, res) => {
    if (stopping) res.setHeader('Connection', 'close');
    const state = sockets.get(req.socket);
    if (!state) return;
    state.busy++;
    res.once('close', () => {
      state.busy--;
      state.since = Date.now();
    });
  });
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log('info', 'shutting down', { signal, drainMs });
    setTimeout(() => {
      // Stop accepting (the net.Server's close, not the HTTP server's, which closes idle sockets).
      net.Server.prototype.close.call(httpServer, async () => {
        clearInterval(sweep);
        await service.stop();
        // Operations in flight finish (or, past the forced exit, are marked interrupted at the next start).
        await server.manager?.idle();
        await server.manager?.close();
        logger.log('info', 'stopped');
        logger.flush();
        await database.close();
        process.exit(0);
      });
      const sweep = setInterval(() => {
        const now = Date.now();
        for (const [socket, state] of sockets) {
          if (state.busy === 0 && now - state.since >= drainMs) socket.destroy();
        }
      }, 50);
    }, drainMs);
    setTimeout(() => {
      logger.log('warn', 'forced exit after 10 s');
      logger.flush();
      process.exit(1);
    }, 10_000 + drainMs).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function indexOnce(
  source: string,
  options: CommonOptions & { json?: boolean },
  env: NodeJS.ProcessEnv,
) {
  const { server, githubHosts, logger, database } = await openEverything(
    databaseTarget(options.db, env, options.dataDir),
    env,
    {
      accessLog: false,
    },
  );
  try {
    const [entry] = await ensureIndexed(server, [source], githubHosts);
    const outcome = await server.service.sync(entry!.id, 'cli');
    const row = await server.service.find(entry!.id, ADMIN_ACCESS);
    const info = await server.service.info(row, { findings: true, viewer: ADMIN_ACCESS });
    logger.flush();
    // A directory has no commit: its fingerprint is the store's alone, shown as '' as in every
    // answer (docs/server.md "HTTP API"), and the text says what was read, not that fingerprint.
    const sync = { ...outcome, commit: commitShown(outcome.commit) };
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ sync, registry: info }, null, 2)}\n`);
    } else {
      const counts = `${info.counts.templates} templates, ${info.counts.versions} versions`;
      const lines = [
        info.source.type === 'directory'
          ? `${info.name}: ${outcome.status}; indexed ${counts} from directory ${info.source.location}`
          : `${info.name}: ${outcome.status} at ${outcome.commit ?? '-'}; ${counts}; ${outcome.apiRequests} source requests`,
        ...(info.findings ?? []).map((f) => `${f.severity} ${f.code} ${f.path}: ${f.message}`),
        ...(outcome.error ? [`error ${outcome.error.code}: ${outcome.error.message}`] : []),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    if (outcome.status === 'failed') process.exitCode = 1;
  } finally {
    await server.service.stop();
    await database.close();
  }
}

/** `30d`, `12h`, `90m`, `8w`, `45s` → milliseconds. */
function parseDuration(text: string): number {
  const m = /^(\d{1,6})([smhdw])$/.exec(text.trim());
  if (!m || Number(m[1]) === 0) {
    throw new DmError(
      'USAGE',
      `--expires '${text}' must be a positive number with s, m, h, d or w (e.g. 30d)`,
      {
        category: 'usage',
      },
    );
  }
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2] as 's'];
  return Number(m[1]) * unit;
}

/** Opens the database and service for a one-off command, runs `work`, closes. */
async function withService(
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

export function buildProgram(env: NodeJS.ProcessEnv): Command {
  const program = new Command('dm-registry');
  program
    .description('The dm template registry server.')
    .version(packageVersion(), '--version', 'print the version')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  dm-registry start --index registry-fixtures          # serve the sample registry on :8080',
        '  dm-registry index github.com/acme/templates --json  # index once, print the findings',
        '  dm-registry token create --admin',
        '',
      ].join('\n'),
    )
    .exitOverride();
  program
    .command('start')
    .description('migrate the database, index the given sources and serve the API')
    .option('--port <port>', 'port (env DM_REGISTRY_PORT; default 8080)')
    .option(
      '--host <address>',
      'address to listen on (env DM_REGISTRY_HOST; default 127.0.0.1, loopback only; 0.0.0.0 or :: for every interface)',
    )
    .option('--db <url>', 'database: file:./data/registry.db or postgres://user@host/db (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .option('--index <source[=host/owner/repo]>', 'a source to index (repeatable)', collect)
    .option(
      '--default-registry <host/owner/repo>',
      'registry for short references (default: the first --index)',
    )
    .option('--cluster <name=kubeconfig>', 'a cluster for the Deployment Manager (repeatable)', collect)
    .option('--upstream <url>', 'a registry server to pull through, tried in order (repeatable)', collect)
    .option(
      '--upstream-token-env <name>',
      "the variable holding the n-th upstream's token (repeatable)",
      collect,
    )
    .option(
      '--upstream-checksum-key <file>',
      "the n-th upstream's checksum log verifier key (dm-registry checksum-key there); pulled versions are verified (repeatable)",
      collect,
    )
    .option(
      '--upstream-ttl <seconds>',
      'how long what a floating reference resolves to is trusted (default 300)',
    )
    .option(
      '--upstream-negative-ttl <seconds>',
      "how long an upstream's not-found is remembered (default 60)",
    )
    .option(
      '--checksum-key <file>',
      "the checksum log's signer key (default log.key in the data directory; created)",
    )
    .option(
      '--notify-url <url>',
      'POST quarantined versions here, signed with DM_REGISTRY_NOTIFY_SECRET (repeatable)',
      collect,
    )
    .addHelpText(
      'after',
      '\nExamples:\n  dm-registry start --index registry-fixtures\n  dm-registry start --upstream https://registry.example --upstream-token-env UPSTREAM_TOKEN\n  dm-registry start --port 9090 --index registry-fixtures --index github.com/acme/templates@main\n  dm-registry start --host 0.0.0.0 --index registry-fixtures   # reachable from other machines\n',
    )
    .action((o) => start(o, env));
  program
    .command('checksum-key')
    .description("print the checksum log's verifier key, for clients' checksumKey (docs/integrity-store.md)")
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .option('--checksum-key <file>', 'the signer key file (default log.key in the data directory)')
    .addHelpText(
      'after',
      '\nExamples:\n  dm-registry checksum-key --db file:./data/registry.db\n  dm-registry checksum-key --checksum-key /etc/dm-registry/log.key\n',
    )
    .action(async (o: CommonOptions & { checksumKey?: string }) => {
      const { loadChecksumKey } = await import('./checksums.js');
      const signer = loadChecksumKey({
        file: o.checksumKey ?? join(localDir(databaseTarget(o.db, env, o.dataDir)), 'log.key'),
        name: `${hostname().toLowerCase()}/checksums`,
      });
      process.stdout.write(`${signer.verifierKey}\n`);
    });
  program
    .command('index <source>')
    .description('index one source once and print the findings')
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  dm-registry index registry-fixtures\n  dm-registry index github.com/acme/templates@main --db file:./data/registry.db --json\n',
    )
    .action((source, o) => indexOnce(source, o, env));
  program
    .command('migrate')
    .description('apply the database migrations')
    .option('--db <url>', 'database: file:<path> or postgres://user@host/db (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText('after', '\nExample:\n  dm-registry migrate --db file:./data/registry.db\n')
    .action(async (o: CommonOptions) => {
      const target = databaseTarget(o.db, env, o.dataDir);
      if (target.kind === 'postgres') {
        const { openPostgresStore } = await import('./store/postgres.js');
        const store = await openPostgresStore(target.url, { max: 1 });
        await store.close();
        process.stdout.write(`migrations applied to ${store.displayUrl}\n`);
        return;
      }
      const { openStore } = await import('./store/db.js');
      openStore(target.file).close();
      process.stdout.write(`migrations applied to ${target.file}\n`);
    });
  const bundle = program
    .command('bundle')
    .description('air-gap bundles: templates carried on a file (docs/mirroring.md)')
    .addHelpText(
      'after',
      '\nExamples:\n  dm-registry bundle keygen --out bundle.key\n  dm-registry bundle export --out site.tgz --registry github.com/acme/templates --sign-key bundle.key\n  dm-registry bundle import site.tgz --verify-key bundle.key.pub\n',
    );
  bundle
    .command('keygen')
    .description('make an Ed25519 key pair for signing bundles: FILE (0600) and FILE.pub')
    .requiredOption('--out <file>', 'where to write the private key (never overwritten)')
    .addHelpText('after', '\nExample:\n  dm-registry bundle keygen --out bundle.key\n')
    .action(async (o: { out: string }) => {
      const { generateBundleKey } = await import('./mirror/bundle-format.js');
      const keys = await generateBundleKey(o.out);
      process.stdout.write(`private key ${keys.privateKey}\npublic key ${keys.publicKey}\n`);
    });
  bundle
    .command('export')
    .description('write the selected versions, and every template they reference, into one .tar.gz')
    .requiredOption('--out <file>', 'the bundle to write')
    .option('--registry <name>', 'carry this registry whole (repeatable; default: every registry)', collect)
    .option('--lock <file>', 'carry the versions this dm.lock pins (repeatable)', collect)
    .option('--since <bundle>', 'carry only what this earlier bundle lacks (a delta)')
    .option('--sign-key <file>', 'sign the manifest with this key (dm-registry bundle keygen)')
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText(
      'after',
      '\nExample:\n  dm-registry bundle export --out site.tgz --lock dm.lock --sign-key bundle.key\n',
    )
    .action(
      async (
        o: CommonOptions & {
          out: string;
          registry?: string[];
          lock?: string[];
          since?: string;
          signKey?: string;
        },
      ) => {
        const { exportBundle } = await import('./mirror/bundle.js');
        const { store, close } = await openDatabase(databaseTarget(o.db, env, o.dataDir));
        try {
          const r = await exportBundle(store, {
            out: o.out,
            ...(o.registry ? { registries: o.registry } : {}),
            ...(o.lock ? { locks: o.lock } : {}),
            ...(o.since ? { since: o.since } : {}),
            ...(o.signKey ? { signKey: o.signKey } : {}),
          });
          for (const ref of r.unresolved)
            process.stderr.write(`warning: ${ref} is not on this server; not carried\n`);
          process.stdout.write(
            `${r.file}: ${r.versions} versions, ${r.blobs} files, ${r.bytes} bytes, digest ${r.digest}\n`,
          );
        } finally {
          await close();
        }
      },
    );
  bundle
    .command('import <file>')
    .description('verify a bundle completely, then add its versions in one transaction')
    .option('--verify-key <file>', 'refuse the bundle unless this public key verifies its signature')
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText(
      'after',
      '\nExample:\n  dm-registry bundle import site.tgz --verify-key bundle.key.pub --db file:./data/registry.db\n',
    )
    .action(async (file: string, o: CommonOptions & { verifyKey?: string }) => {
      const { importBundle } = await import('./mirror/bundle.js');
      const { store, close } = await openDatabase(databaseTarget(o.db, env, o.dataDir));
      try {
        const r = await importBundle(store, file, o.verifyKey ? { verifyKey: o.verifyKey } : {});
        if (r.quarantined > 0) {
          process.stderr.write(
            `warning: ${r.quarantined} versions differ from what this database first saw; quarantined, not added\n`,
          );
        }
        process.stdout.write(
          `${file}: ${r.added} versions added, ${r.unchanged} already present, ${r.registries} registries${r.signed ? ', signature verified' : ''}\n`,
        );
      } finally {
        await close();
      }
    });
  const token = program
    .command('token')
    .description('API tokens')
    .addHelpText(
      'after',
      '\nExamples:\n  dm-registry token create --admin\n  dm-registry token create --read github.com/acme/private\n',
    );
  token
    .command('create')
    .description('create an API token (printed once; stored hashed)')
    .option('--admin', 'a token for the write endpoints')
    .option('--read <registry>', 'a token that may read a private registry (host/owner/repo, or * for all)')
    .option('--org <organisations>', "a token that may read its organisations' registries: a,b")
    .option('--expires <duration>', 'refuse the token after this long: 90m, 12h, 30d, 8w')
    .option(
      '--deploy <cluster/namespace>',
      'a token that may change and read deployments there (repeatable)',
      collect,
    )
    .option(
      '--read-deployments <cluster/namespace>',
      'a token that may read deployments there (repeatable)',
      collect,
    )
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText(
      'after',
      '\nExamples:\n  dm-registry token create --admin\n  dm-registry token create --read github.com/acme/private --expires 30d --db file:./data/registry.db\n  dm-registry token create --org acme,acme-labs\n  dm-registry token create --deploy prod/web\n',
    )
    .action(
      async (
        o: CommonOptions & {
          admin?: boolean;
          read?: string;
          org?: string;
          expires?: string;
          deploy?: string[];
          readDeployments?: string[];
        },
      ) => {
        if (o.deploy || o.readDeployments) {
          const { createManagerToken } = await import('./manager/manager-tokens.js');
          if (o.admin || o.read || o.org || o.expires || (o.deploy && o.readDeployments)) {
            throw new DmError('USAGE', 'give --deploy or --read-deployments alone', { category: 'usage' });
          }
          const role = o.deploy ? 'deploy' : 'read';
          const dbFile = join(localDir(databaseTarget(o.db, env, o.dataDir)), 'registry.db');
          await withService(o, env, async (service) => {
            const token = await createManagerToken(
              service.store,
              dbFile,
              role,
              o.deploy ?? o.readDeployments!,
            );
            process.stdout.write(`${token}\n`);
          });
          return;
        }
        if ([o.admin, o.read, o.org].filter((x) => x !== undefined).length !== 1) {
          throw new DmError(
            'USAGE',
            'give exactly one of --admin, --read <registry> or --org <organisations>',
            {
              category: 'usage',
            },
          );
        }
        const organisations =
          o.org === undefined ? undefined : parseOrganisationList(o.org, '--org', 'usage');
        const expiresAt = o.expires === undefined ? null : Date.now() + parseDuration(o.expires);
        await withService(o, env, async (service) => {
          const created = o.admin
            ? await service.createToken({ admin: true, expiresAt })
            : organisations
              ? await service.createToken({ admin: false, registry: null, organisations, expiresAt })
              : await service.createToken({
                  admin: false,
                  registry: o.read === '*' ? null : o.read!,
                  expiresAt,
                });
          process.stdout.write(`${created}\n`);
        });
      },
    );
  token
    .command('list')
    .description('list the tokens: id, role, registry, created, expires, last used (never the token)')
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText('after', '\nExample:\n  dm-registry token list')
    .action(async (o: CommonOptions) => {
      await withService(o, env, async (service) => {
        const iso = (t: number | null) => (t === null ? '-' : new Date(t).toISOString());
        const lines = (await service.listTokens()).map(
          (t) =>
            `${t.id}\t${t.role}\t${t.organisations.length ? `org:${t.organisations.join(',')}` : (t.registry ?? '-')}\tcreated ${iso(t.createdAt)}\texpires ${iso(t.expiresAt)}\tlast used ${iso(t.lastUsedAt)}`,
        );
        process.stdout.write(lines.length ? `${lines.join('\n')}\n` : 'no tokens\n');
      });
    });
  token
    .command('revoke <id-or-token>')
    .description(
      'revoke a token (by its id from `token list`, or the token itself); a running server stops accepting it within a second',
    )
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText('after', '\nExample:\n  dm-registry token revoke 3')
    .action(async (idOrToken: string, o: CommonOptions) => {
      await withService(o, env, async (service) => {
        await service.revokeToken(idOrToken);
        process.stdout.write('revoked\n');
      });
    });
  return program;
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  try {
    await buildProgram(env).parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    const message = isDmError(error) ? error.message : error instanceof Error ? error.message : String(error);
    process.stderr.write(`dm-registry: ${message}\n`);
    if (isDmError(error) && error.hint) process.stderr.write(`hint: ${error.hint}\n`);
    process.exitCode = exitCodeFor(error);
  }
}

await main(process.argv);

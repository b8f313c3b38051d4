/** `dm-registry start` (docs/server.md "Running it"; docs/mirroring.md for --upstream). */

import { readFileSync } from 'node:fs';
import { maxHeaderSize } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Command } from 'commander';
import { DmError, fromSystemError } from '../../../client/src/error.js';
import { parseVerifierKey } from '../../../client/src/integrity/index.js';
import type { CreateAppDeps } from '../api/app.js';
import { Upstream } from '../mirror/upstream.js';
import { ensureIndexed, openEverything } from './open-everything.js';
import { type CommonOptions, collect, DATA_DIR_HELP, databaseTarget } from './target.js';

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
  const { serveApp } = await import('../api/listener.js');
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
  const { service } = server;
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

  // The app behind the server's own listener: cached resolve answers are written from memory
  // (docs/server.md "Read path").
  const http = serveApp(server, { port, hostname: host }, (info) => {
    logger.log('info', 'listening', {
      port: info.port,
      host,
      url: `http://${net.isIPv6(host) ? `[${host}]` : host}:${info.port}/`,
      db: database.display,
      defaultRegistry: defaultRegistry ?? null,
    });
  });
  http.on('clientError', answerClientError);
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
  // Draining (docs/server.md, "Running it"): on SIGTERM every response says `Connection: close`, so
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
  const httpServer = http;
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

export function registerStart(program: Command, env: NodeJS.ProcessEnv): void {
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
}

/**
 * What Node's HTTP parser refuses before the app sees a request (docs/server.md "Errors"): headers
 * or a URL over Node's limit answer 431 with the usual JSON error body (Node's own answer has none),
 * a request that did not arrive in time 408, anything else unparseable 400; then the connection closes.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const answer = (status: string, dmError?: DmError) => {
    const body = dmError ? JSON.stringify(dmError.toJSON()) : '';
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    answer(
      '431 Request Header Fields Too Large',
      new DmError(
        'HEADERS_TOO_LARGE',
        `the request's URL and headers are larger than the ${Math.round(maxHeaderSize / 1024)} KB this server reads`,
      ),
    );
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') answer('408 Request Timeout');
  else answer('400 Bad Request');
}

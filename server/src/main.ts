/**
 * `dm-registry` (spec/cli.md, dm-registry section): `start`, `index`, `migrate`, `token create`.
 * Configuration is read here, once, with the precedence flag > environment > default
 * (DM_REGISTRY_DB, DM_REGISTRY_PORT, DM_ADMIN_TOKEN, DM_REGISTRY_SECRET_KEY, GITHUB_TOKEN,
 * GITHUB_API_URL), and passed down as options; the library below never reads process.env.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { parseYaml } from '../../client/src/document/yaml.js';
import { DmError, exitCodeFor, isDmError } from '../../client/src/error.js';

interface CommonOptions {
  db?: string;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `file:./data/registry.db` → path; postgres is §6 (not yet). */
function databaseFile(option: string | undefined, env: NodeJS.ProcessEnv): string {
  const text = option ?? env.DM_REGISTRY_DB ?? 'file:./data/registry.db';
  if (/^postgres(ql)?:\/\//.test(text)) {
    throw new DmError(
      'UNSUPPORTED_DATABASE',
      'PostgreSQL is not supported yet; use an SQLite file (file:./data/registry.db)',
      {
        category: 'usage',
      },
    );
  }
  return resolve(text.replace(/^file:/, ''));
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
  dbFile: string,
  env: NodeJS.ProcessEnv,
  extra: { accessLog?: boolean; clusters?: string[] | undefined },
) {
  const { openStore } = await import('./store/db.js');
  const { loadSecretKey } = await import('./store/secrets.js');
  const { createApp } = await import('./api/app.js');
  const { defaultSourceFactory } = await import('./service.js');
  const { createLogger } = await import('./log.js');
  const store = openStore(dbFile);
  const dataDir = dirname(dbFile);
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
        ...(await import('./manager/manager-tokens.js')).managerPaths(dbFile),
        kubectlBinary: env.DM_KUBECTL,
        env,
      }))
    : undefined;
  const githubHosts = githubApiUrl ? [new URL(githubApiUrl).hostname.replace(/^api\./, '')] : [];
  const server = createApp({
    store,
    sources: defaultSourceFactory({
      githubApiUrl,
      githubToken: env.GITHUB_TOKEN,
      gitCacheDir: join(dataDir, 'git'),
      onWarning: (message, details) => logger.log('warn', message, details),
    }),
    secretKey,
    adminTokens: env.DM_ADMIN_TOKEN ? [env.DM_ADMIN_TOKEN] : [],
    githubHosts,
    logger,
    ...(extra.accessLog === undefined ? {} : { accessLog: extra.accessLog }),
    manager,
  });
  return { store, server, logger, githubHosts };
}

/** Adds (or updates) the registries named by `--index source[=name]`; returns their ids. */
async function ensureIndexed(
  server: Awaited<ReturnType<typeof openEverything>>['server'],
  flags: readonly string[],
  githubHosts: readonly string[],
): Promise<{ id: number; name: string; local: boolean }[]> {
  const { parseSourceSpec } = await import('./source/source-spec.js');
  const { registries } = await import('./store/schema.js');
  const { eq } = await import('drizzle-orm');
  const out: { id: number; name: string; local: boolean }[] = [];
  for (const flag of flags) {
    const eqAt = flag.lastIndexOf('=');
    const hasName = eqAt > 0 && !/^[a-z]+:\/\//.test(flag.slice(eqAt + 1));
    const source = hasName ? flag.slice(0, eqAt) : flag;
    const spec = parseSourceSpec(source, { githubHosts });
    const local = spec.type === 'directory' || (spec.type === 'git' && !/^[a-z]+:\/\/|@/.test(spec.location));
    const name =
      (hasName ? flag.slice(eqAt + 1) : undefined) ??
      (local ? declaredName(spec.location) : undefined) ??
      spec.defaultName;
    const existing = server.service.store.db.select().from(registries).where(eq(registries.name, name)).get();
    if (existing) {
      server.service.store.db
        .update(registries)
        .set({ sourceType: spec.type, source: spec.location, branch: spec.branch, path: spec.path })
        .where(eq(registries.id, existing.id))
        .run();
      out.push({ id: existing.id, name, local });
    } else {
      const row = server.service.add({ source, name });
      out.push({ id: row.id, name, local });
    }
  }
  return out;
}

async function start(
  options: CommonOptions & { port?: string; index?: string[]; defaultRegistry?: string; cluster?: string[] },
  env: NodeJS.ProcessEnv,
) {
  const { serve } = await import('@hono/node-server');
  const dbFile = databaseFile(options.db, env);
  const port = Number(options.port ?? env.DM_REGISTRY_PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new DmError('INVALID_PORT', `'${options.port ?? env.DM_REGISTRY_PORT}' is not a port number`, {
      category: 'usage',
    });
  }
  const { store, server, logger, githubHosts } = await openEverything(dbFile, env, {
    clusters: options.cluster,
  });
  const { service, app } = server;
  const indexed = await ensureIndexed(server, options.index ?? [], githubHosts);
  const defaultRegistry = options.defaultRegistry ?? indexed[0]?.name;
  service.catalog.defaultRegistry = defaultRegistry;

  // Local sources are indexed before listening (a new user can query at once); remote ones after.
  for (const r of indexed.filter((i) => i.local)) await service.sync(r.id, 'start');
  for (const r of indexed.filter((i) => !i.local)) void service.sync(r.id, 'start');
  service.startScheduler();

  const http = serve({ fetch: app.fetch, port }, (info) => {
    logger.log('info', 'listening', {
      port: info.port,
      db: dbFile,
      defaultRegistry: defaultRegistry ?? null,
    });
  });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log('info', 'shutting down', { signal });
    http.close(async () => {
      await service.stop();
      // Operations in flight finish (or, past the forced exit, are marked interrupted at the next start).
      await server.manager?.idle();
      logger.log('info', 'stopped');
      logger.flush();
      store.close();
      process.exit(0);
    });
    // Idle keep-alive connections would hold close() open.
    (http as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
    setTimeout(() => {
      logger.log('warn', 'forced exit after 10 s');
      logger.flush();
      process.exit(1);
    }, 10_000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function indexOnce(
  source: string,
  options: CommonOptions & { json?: boolean },
  env: NodeJS.ProcessEnv,
) {
  const { store, server, githubHosts, logger } = await openEverything(databaseFile(options.db, env), env, {
    accessLog: false,
  });
  try {
    const [entry] = await ensureIndexed(server, [source], githubHosts);
    const outcome = await server.service.sync(entry!.id, 'cli');
    const row = server.service.find(entry!.id, {
      admin: true,
      canRead: () => true,
      readable: () => ({ all: true, ids: [] }),
    });
    const info = server.service.info(row, true);
    logger.flush();
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ sync: outcome, registry: info }, null, 2)}\n`);
    } else {
      const lines = [
        `${info.name}: ${outcome.status} at ${outcome.commit ?? '-'}; ${info.counts.templates} templates, ${info.counts.versions} versions; ${outcome.apiRequests} source requests`,
        ...(info.findings ?? []).map((f) => `${f.severity} ${f.code} ${f.path}: ${f.message}`),
        ...(outcome.error ? [`error ${outcome.error.code}: ${outcome.error.message}`] : []),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    if (outcome.status === 'failed') process.exitCode = 1;
  } finally {
    store.close();
  }
}

export function buildProgram(env: NodeJS.ProcessEnv): Command {
  const program = new Command('dm-registry');
  program.description('The dm template registry server.').exitOverride();
  program
    .command('start')
    .description('migrate the database, index the given sources and serve the API')
    .option('--port <port>', 'port (env DM_REGISTRY_PORT; default 8080)')
    .option('--db <url>', 'database: file:./data/registry.db (env DM_REGISTRY_DB)')
    .option('--index <source[=host/owner/repo]>', 'a source to index (repeatable)', collect)
    .option(
      '--default-registry <host/owner/repo>',
      'registry for short references (default: the first --index)',
    )
    .option('--cluster <name=kubeconfig>', 'a cluster for the Deployment Manager (repeatable)', collect)
    .addHelpText(
      'after',
      '\nExample:\n  dm-registry start --index registry-fixtures --index github.com/acme/templates@main',
    )
    .action((o) => start(o, env));
  program
    .command('index <source>')
    .description('index one source once and print the findings')
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--json', 'print JSON')
    .action((source, o) => indexOnce(source, o, env));
  program
    .command('migrate')
    .description('apply the database migrations')
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .action(async (o: CommonOptions) => {
      const { openStore } = await import('./store/db.js');
      const file = databaseFile(o.db, env);
      openStore(file).close();
      process.stdout.write(`migrations applied to ${file}\n`);
    });
  const token = program.command('token').description('API tokens');
  token
    .command('create')
    .description('create an API token (printed once; stored hashed)')
    .option('--admin', 'a token for the write endpoints')
    .option('--read <registry>', 'a token that may read a private registry (host/owner/repo, or * for all)')
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
    .action(
      async (
        o: CommonOptions & { admin?: boolean; read?: string; deploy?: string[]; readDeployments?: string[] },
      ) => {
        if (o.deploy || o.readDeployments) {
          const { createManagerToken } = await import('./manager/manager-tokens.js');
          if (o.admin || o.read || (o.deploy && o.readDeployments)) {
            throw new DmError('USAGE', 'give --deploy or --read-deployments alone', { category: 'usage' });
          }
          const role = o.deploy ? 'deploy' : 'read';
          process.stdout.write(
            `${createManagerToken(databaseFile(o.db, env), role, o.deploy ?? o.readDeployments!)}\n`,
          );
          return;
        }
        if (!o.admin === !o.read) {
          throw new DmError('USAGE', 'give exactly one of --admin or --read <registry>', {
            category: 'usage',
          });
        }
        const { store, server } = await openEverything(databaseFile(o.db, env), env, { accessLog: false });
        try {
          const created = o.admin
            ? server.service.createToken({ admin: true })
            : server.service.createToken({ admin: false, registry: o.read === '*' ? null : o.read! });
          process.stdout.write(`${created}\n`);
        } finally {
          store.close();
        }
      },
    );
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

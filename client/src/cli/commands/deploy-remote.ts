/**
 * `dm deploy`, `dm deployments`, `dm manifests` and `dm types` with `--manager-url` (docs/manager.md):
 * the same results as the local commands, from the Deployment Manager service. `dm deploy` sends
 * the configuration with its imports, follows the operation to its end (progress on a terminal),
 * and prints and exits as the local command does.
 */

import type { DryRunResult } from '../../deploy/deploy.js';
import { DmError } from '../../error.js';
import type { ResourceView as ResourceJson } from '../../wire/manager-api.js';
import type { CommandContext } from '../context.js';
import type { Printable } from '../format.js';
import { reportInstances, reportManifestList, reportTypes } from './deploy-output.js';

type Row = { name: string; outcome: string; message?: string };

async function client(ctx: CommandContext) {
  const { ManagerClient } = await import('../../deploy/manager-client.js');
  return new ManagerClient({
    url: ctx.config.managerUrl!,
    token: ctx.config.managerToken,
    timeoutMs: ctx.config.httpTimeoutMs,
  });
}

const enc = encodeURIComponent;

/**
 * The configuration with every file its expansion reads (docs/manager.md, "Imports"): imports by
 * URL come through the resolver chain `dm expand` uses (dm.lock beside the configuration, the
 * cache, then the network), built only when the configuration has one.
 */
export async function payloadOf(
  ctx: CommandContext,
  arg: string,
  name: string,
  options: Record<string, unknown>,
): ReturnType<typeof import('../../deploy/manager-client.js').configurationPayload> {
  const [{ configurationPayload }, { lazyTemplateSource }] = await Promise.all([
    import('../../deploy/manager-client.js'),
    import('../../expand/local-template-source.js'),
  ]);
  const registry = lazyTemplateSource(async () => {
    const { createRegistryTemplateSource } = await import('../../resolve/registry-template-source.js');
    const { warner } = await import('../context.js');
    return createRegistryTemplateSource({
      config: ctx.config,
      registryDirs: ctx.registryDirs,
      configPath: arg,
      warn: warner(ctx),
    });
  });
  return configurationPayload(arg, name, {
    importsDir: typeof options.importsDir === 'string' ? options.importsDir : undefined,
    loadUrl: (url) => registry.load(url),
  });
}

function progressLine(op: {
  status: string;
  progress: { action: string; level: number; total: number; done: number }[];
}): string {
  const levels = op.progress.map(
    (p) => `${p.action === 'prune' ? 'prune ' : ''}L${p.level} ${p.done}/${p.total}`,
  );
  return `${op.status}${levels.length ? `: ${levels.join(', ')}` : ''}`;
}

/** Runs an operation to its end and reports it as `deployConfiguration` does. */
export async function runOperation(
  ctx: CommandContext,
  start: (c: Awaited<ReturnType<typeof client>>) => Promise<{ id: string }>,
) {
  const c = await client(ctx);
  const accepted = await start(c);
  const op = await c.follow(accepted.id, (o) => {
    if (ctx.interactive && ctx.config.output === 'text' && !ctx.config.quiet) {
      ctx.streams.stderr(`\r\x1b[K${progressLine(o)}`);
    }
  });
  if (ctx.interactive && ctx.config.output === 'text' && !ctx.config.quiet) ctx.streams.stderr('\r\x1b[K');
  if (!op.manifest) {
    throw new DmError('DEPLOY_FAILED', `deployment '${op.deployment}': ${op.error ?? op.status}`, {
      category: op.status === 'interrupted' ? 'error' : 'error',
    });
  }
  const m = await c.request<{ resources: ResourceJson[] }>(
    'GET',
    `/api/v1/deployments/${enc(op.deployment)}/manifests/${enc(op.manifest)}`,
  );
  const row = (r: ResourceJson): Row => ({
    name: r.name,
    outcome: r.outcome,
    ...(r.message ? { message: r.message } : {}),
  });
  return {
    deployment: op.deployment,
    manifest: op.manifest,
    action: op.action,
    status: op.status === 'done' ? ('applied' as const) : ('failed' as const),
    resources: m.resources.filter((r) => r.action === 'apply').map(row),
    pruned: m.resources.filter((r) => r.action === 'prune').map(row),
    operation: op.id,
  };
}

/**
 * `dm deploy` through the service: a create (POST) for a new deployment, else an update (PUT),
 * followed to its end; with `--dry-run` the same request with `?dryRun=true` answers the plan.
 */
export async function remoteDeploy(
  ctx: CommandContext,
  arg: string,
  name: string,
  properties: Record<string, unknown>,
  options: Record<string, unknown>,
): Promise<
  (DryRunResult & { dryRun: true }) | (Awaited<ReturnType<typeof runOperation>> & { dryRun?: undefined })
> {
  const configuration = await payloadOf(ctx, arg, name, options);
  const timeout = Number(options.timeout ?? 300);
  const body = {
    configuration,
    ...(Object.keys(properties).length ? { properties } : {}),
    ...(options.wait ? { waitForReady: true } : {}),
    ...(options.pruneAll ? { pruneAll: true } : {}),
    ...(options.forceConflicts ? { forceConflicts: true } : {}),
    ...(Number.isInteger(timeout) && timeout > 0 && timeout <= 3600 ? { timeoutSeconds: timeout } : {}),
  };
  const query = options.dryRun ? '?dryRun=true' : '';
  const send = async <T>(c: Awaited<ReturnType<typeof client>>): Promise<T> => {
    try {
      await c.request('GET', `/api/v1/deployments/${enc(name)}`);
    } catch (error) {
      if (!(error instanceof DmError) || error.category !== 'not-found') throw error;
      const cluster = typeof options.cluster === 'string' ? options.cluster : ctx.config.kube.context;
      if (!cluster) {
        throw new DmError(
          'CLUSTER_REQUIRED',
          `deployment '${name}' is new: name its cluster with --cluster`,
          {
            category: 'usage',
          },
        );
      }
      return c.request<T>('POST', `/api/v1/deployments${query}`, {
        name,
        cluster,
        ...(ctx.config.kube.namespace ? { namespace: ctx.config.kube.namespace } : {}),
        ...body,
      });
    }
    return c.request<T>('PUT', `/api/v1/deployments/${enc(name)}${query}`, body);
  };
  if (options.dryRun) return send<DryRunResult & { dryRun: true }>(await client(ctx));
  return runOperation(ctx, (c) => send<{ id: string }>(c));
}

export async function remoteDelete(ctx: CommandContext, name: string) {
  return runOperation(ctx, (c) => c.request<{ id: string }>('DELETE', `/api/v1/deployments/${enc(name)}`));
}

export async function remoteList(ctx: CommandContext): Promise<Printable> {
  const list = await (await client(ctx)).request<
    { name: string; state: string; latestManifest: string | null; updatedAt: string }[]
  >('GET', '/api/v1/deployments');
  const { reportDeploymentList } = await import('./deploy-output.js');
  return reportDeploymentList(
    list.map((x) => ({ name: x.name, state: x.state, manifest: x.latestManifest, updated: x.updatedAt })),
  );
}

export async function remoteGet(ctx: CommandContext, name: string): Promise<Printable> {
  const d = await (await client(ctx)).request<{
    name: string;
    state: string;
    latestManifest: string | null;
    lastGoodManifest: string | null;
    manifests: string[];
    resources: ResourceJson[];
  }>('GET', `/api/v1/deployments/${enc(name)}`);
  return {
    data: {
      name: d.name,
      state: d.state,
      manifest: d.latestManifest,
      lastGoodManifest: d.lastGoodManifest,
      manifests: d.manifests,
      resources: d.resources,
    },
  };
}

export async function remoteManifests(
  ctx: CommandContext,
  deployment: string,
  id: string | undefined,
): Promise<Printable> {
  const c = await client(ctx);
  if (id === undefined) {
    const all = await c.request<{ name: string; action: string; status: string; createdAt: string }[]>(
      'GET',
      `/api/v1/deployments/${enc(deployment)}/manifests`,
    );
    const d = all.map((m) => ({ name: m.name, action: m.action, status: m.status, created: m.createdAt }));
    return reportManifestList(d);
  }
  const m = await c.request<Record<string, unknown>>(
    'GET',
    `/api/v1/deployments/${enc(deployment)}/manifests/${enc(id)}`,
  );
  const { createdAt, finishedAt, ...rest } = m;
  return { data: { ...rest, created: createdAt, ...(finishedAt ? { finished: finishedAt } : {}) } };
}

export async function remoteTypes(ctx: CommandContext): Promise<Printable> {
  const d = await (await client(ctx)).request<{ type: string; instances: number }[]>('GET', '/api/v1/types');
  return reportTypes(d);
}

export async function remoteInstances(ctx: CommandContext, type: string): Promise<Printable> {
  const d = await (await client(ctx)).request<
    { name: string; type: string; deployment: string; manifest: string; path: string }[]
  >('GET', `/api/v1/types/${enc(type)}/instances`);
  return reportInstances(type, d);
}

/**
 * The Deployment Manager API (docs/manager.md, DM's manager API): deployments, manifests, expand,
 * types and operations under `/api/v1`. Creates, updates and deletes answer 202 with an operation
 * (`?wait=true` answers when it has finished); reads need a token that may read the deployment.
 */
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DmError } from '../../../client/src/error.js';
import { type AppEnv, jsonBody } from '../api/http.js';
import { type DeploymentManager, parseConfiguration, parseDeploymentRequest } from './deployment-manager.js';
import { type ManagerAccess, managerAccessFor, requireDeployRights } from './manager-access.js';
import { deploymentPage } from './page.js';
import {
  deploymentSummary,
  deploymentView,
  manifestSummary,
  manifestView,
  type OperationView,
  operationView,
} from './shapes.js';

/** Largest configuration body (the configuration and its imports), bytes. */
export const MAX_CONFIGURATION_BYTES = 8 * 1024 * 1024;

/** The paths this module serves (answered MANAGER_NOT_CONFIGURED without clusters). */
export const MANAGER_ROUTE_PATTERNS = [
  '/api/v1/deployments',
  '/api/v1/deployments/*',
  '/api/v1/expand',
  '/api/v1/types',
  '/api/v1/types/*',
  '/api/v1/operations/*',
  '/deployments/*',
];

export function managerRoutes(manager: DeploymentManager): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const limit = bodyLimit({
    maxSize: MAX_CONFIGURATION_BYTES,
    onError: () => {
      throw new DmError(
        'BODY_TOO_LARGE',
        `the request body is larger than ${MAX_CONFIGURATION_BYTES} bytes`,
        {
          category: 'limit',
        },
      );
    },
  });
  const accessOf = (c: {
    req: { header(name: string): string | undefined };
    get(k: 'service'): AppEnv['Variables']['service'];
  }): Promise<ManagerAccess> =>
    // Nothing is read before what a stopped server left is recovered (interrupted, not running).
    manager.ready.then(() =>
      managerAccessFor(c.req.header('authorization'), {
        tokens: c.get('service').tokens,
        operations: manager.operations,
      }),
    );
  // A configuration body is read in one of the manager's bounded slots (after the caller's rights
  // are checked), never by every request at once.
  const readConfiguration = (c: Context<AppEnv>) => manager.configurationReads.run(() => jsonBody(c));
  const wantsWait = (q: string | undefined) => q === 'true' || q === '1';
  const wantsDryRun = wantsWait;
  const answer = async (op: { id: string }, wait: boolean): Promise<[OperationView, 200 | 202]> => {
    if (wait) await manager.waitFor(op.id);
    const view = await operationView((await manager.operations.get(op.id))!, manager.store);
    return [view, wait ? 200 : 202];
  };

  app.get('/api/v1/deployments', async (c) => {
    const access = await accessOf(c);
    const where = await manager.operations.placements();
    const list = (await manager.store.listDeployments()).flatMap((d) => {
      const p = where.get(d.name);
      return p && access.canRead(p.cluster, p.namespace) ? [deploymentSummary(d, p)] : [];
    });
    return c.json(list);
  });

  app.post('/api/v1/deployments', limit, async (c) => {
    const access = await accessOf(c);
    requireDeployRights(access);
    const req = parseDeploymentRequest(await readConfiguration(c));
    if (wantsDryRun(c.req.query('dryRun'))) return c.json(await manager.plan(req, 'create', access));
    const op = await manager.submit(req, 'create', access);
    const [view, status] = await answer(op, wantsWait(c.req.query('wait')));
    c.header('Location', `/api/v1/operations/${op.id}`);
    return c.json(view, status);
  });

  app.get('/api/v1/deployments/:name', async (c) => {
    const access = await accessOf(c);
    const name = c.req.param('name');
    const p = await manager.visible(name, access);
    const d = await manager.store.getDeployment(name);
    if (!d) {
      throw new DmError('DEPLOYMENT_NOT_FOUND', `deployment '${name}' does not exist`, {
        category: 'not-found',
      });
    }
    return c.json(await deploymentView(d, p, manager.store));
  });

  app.put('/api/v1/deployments/:name', limit, async (c) => {
    const access = await accessOf(c);
    requireDeployRights(access);
    const req = parseDeploymentRequest(await readConfiguration(c), c.req.param('name'));
    if (wantsDryRun(c.req.query('dryRun'))) return c.json(await manager.plan(req, 'update', access));
    const op = await manager.submit(req, 'update', access);
    const [view, status] = await answer(op, wantsWait(c.req.query('wait')));
    c.header('Location', `/api/v1/operations/${op.id}`);
    return c.json(view, status);
  });

  app.delete('/api/v1/deployments/:name', async (c) => {
    const access = await accessOf(c);
    requireDeployRights(access);
    const op = await manager.remove(c.req.param('name'), access);
    const [view, status] = await answer(op, wantsWait(c.req.query('wait')));
    c.header('Location', `/api/v1/operations/${op.id}`);
    return c.json(view, status);
  });

  app.get('/api/v1/deployments/:name/manifests', async (c) => {
    const access = await accessOf(c);
    const name = c.req.param('name');
    await manager.visible(name, access);
    return c.json((await manager.store.listManifests(name)).map(manifestSummary));
  });

  app.get('/api/v1/deployments/:name/manifests/:manifest', async (c) => {
    const access = await accessOf(c);
    const name = c.req.param('name');
    const id = c.req.param('manifest');
    const p = await manager.visible(name, access);
    const all = await manager.store.listManifests(name);
    const m = all.find((x) => x.name === id || String(x.seq) === id);
    if (!m) {
      throw new DmError('MANIFEST_NOT_FOUND', `deployment '${name}' has no manifest '${id}'`, {
        category: 'not-found',
        details: { manifests: all.map((x) => x.name) },
      });
    }
    return c.json(await manifestView(m, p.cluster, manager.store));
  });

  // dm diff and dm drift through the service (docs/deployments.md "Diff and drift").
  app.post('/api/v1/deployments/:name/diff', limit, async (c) => {
    const access = await accessOf(c);
    const req = parseDeploymentRequest(await readConfiguration(c), c.req.param('name'));
    return c.json(await manager.diff(req, access));
  });

  app.get('/api/v1/deployments/:name/drift', async (c) => {
    const access = await accessOf(c);
    return c.json(await manager.drift(c.req.param('name'), access));
  });

  // dm rollback (an operation; ?dryRun=true the plan) and dm history (docs/deployments.md "Rollback and history").
  app.post('/api/v1/deployments/:name/rollback', async (c) => {
    const access = await accessOf(c);
    const body = c.req.header('content-type')?.includes('json') ? await jsonBody(c) : {};
    if (body.manifest !== undefined && typeof body.manifest !== 'string') {
      throw new DmError('INVALID_REQUEST', 'manifest must be a manifest name or sequence number', {
        category: 'invalid-input',
      });
    }
    const out = await manager.rollback(
      c.req.param('name'),
      body.manifest as string | undefined,
      access,
      wantsDryRun(c.req.query('dryRun')),
    );
    if (!('id' in out)) return c.json(out);
    const [view, status] = await answer(out, wantsWait(c.req.query('wait')));
    c.header('Location', `/api/v1/operations/${out.id}`);
    return c.json(view, status);
  });

  app.get('/api/v1/deployments/:name/history', async (c) => {
    const access = await accessOf(c);
    return c.json(await manager.history(c.req.param('name'), access));
  });

  app.get('/api/v1/deployments/:name/operations', async (c) => {
    const access = await accessOf(c);
    const name = c.req.param('name');
    await manager.visible(name, access);
    const ops = await manager.operations.listFor(name);
    return c.json(await Promise.all(ops.map((op) => operationView(op, manager.store))));
  });

  // `?wait=N` (1-30 s) holds the answer until the operation has finished or N seconds have passed
  // (docs/manager.md): a client following an operation learns its end at once, without polling.
  app.get('/api/v1/operations/:id', async (c) => {
    const access = await accessOf(c);
    const id = c.req.param('id');
    const found = await manager.operations.get(id);
    if (!found || !access.canRead(found.cluster, found.namespace)) {
      throw new DmError('OPERATION_NOT_FOUND', `no operation '${id}'`, {
        category: 'not-found',
      });
    }
    const wait = c.req.query('wait');
    if (wait !== undefined) {
      const seconds = Number(wait);
      if (!Number.isInteger(seconds) || seconds < 1 || seconds > 30) {
        throw new DmError(
          'INVALID_PARAMETER',
          `wait must be a whole number of seconds from 1 to 30, not '${wait}'`,
          {
            category: 'invalid-input',
          },
        );
      }
      await manager.waitFor(id, seconds * 1000);
    }
    return c.json(await operationView((await manager.operations.get(id)) ?? found, manager.store));
  });

  app.post('/api/v1/expand', limit, async (c) => {
    const access = await accessOf(c);
    const body = await readConfiguration(c);
    const name = typeof body.name === 'string' ? body.name : 'expand';
    const properties = body.properties;
    if (
      properties !== undefined &&
      (properties === null || typeof properties !== 'object' || Array.isArray(properties))
    ) {
      throw new DmError('INVALID_REQUEST', 'properties must be an object', { category: 'invalid-input' });
    }
    // The answer's JSON is made in the expansion worker (docs/manager.md): the request thread sends it.
    const answer = await manager.expandToJson(
      name,
      parseConfiguration(body.configuration),
      (properties ?? {}) as Record<string, unknown>,
      access,
    );
    return c.body(answer, 200, { 'Content-Type': 'application/json' });
  });

  /** Instances visible to the caller (of deployments it may read). */
  const visibleInstances = async (access: ManagerAccess, type: string) => {
    const where = await manager.operations.placements();
    return (await manager.store.listInstances(type)).filter((i) => {
      const p = where.get(i.deployment);
      return p !== undefined && access.canRead(p.cluster, p.namespace);
    });
  };

  app.get('/api/v1/types', async (c) => {
    const access = await accessOf(c);
    const counts = new Map<string, number>();
    for (const i of await visibleInstances(access, 'all')) counts.set(i.type, (counts.get(i.type) ?? 0) + 1);
    return c.json(
      [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([type, instances]) => ({ type, instances })),
    );
  });

  app.get('/api/v1/types/:type/instances', async (c) => {
    const access = await accessOf(c);
    return c.json(
      (await visibleInstances(access, c.req.param('type'))).map((i) => ({
        name: i.name,
        type: i.type,
        deployment: i.deployment,
        manifest: i.manifest,
        path: i.path,
      })),
    );
  });

  app.get('/deployments/:name', async (c) => {
    const access = await accessOf(c);
    return c.html(await deploymentPage(manager, c.req.param('name'), access));
  });

  return app;
}

/** On a server without clusters the manager's paths say so (rather than "no endpoint"). */
export function managerNotConfigured(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const refuse = () => {
    throw new DmError(
      'MANAGER_NOT_CONFIGURED',
      'this server hosts no deployments; start it with --cluster NAME=KUBECONFIG',
      { category: 'not-found' },
    );
  };
  for (const path of MANAGER_ROUTE_PATTERNS) app.all(path, refuse);
  app.all('/api/v1/operations', refuse);
  return app;
}

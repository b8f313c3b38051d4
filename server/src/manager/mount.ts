/**
 * Mounting the Deployment Manager on the registry server's app (docs/manager.md): with clusters
 * configured, the manager's routes over its state — its own SQLite file when the server runs on
 * SQLite, the server's PostgreSQL (with the deployment lease) when it runs there; without, its paths answer
 * MANAGER_NOT_CONFIGURED. Registry references resolve from this server's catalog: an admin
 * token sees every registry, other tokens the public ones.
 */
import type { Hono } from 'hono';
import type { AppEnv } from '../api/http.js';
import type { Logger } from '../log.js';
import type { RegistryService } from '../service.js';
import { sharedPool } from '../store/open-store.js';
import { replicaName } from '../store/replica.js';
import type { CatalogView } from './catalog-resolver.js';
import { DeploymentLeases } from './deployment-lease.js';
import { DeploymentManager, type ManagerConfig } from './deployment-manager.js';
import type { ManagerAccess } from './manager-access.js';
import { openManagerState } from './manager-tokens.js';
import { managerNotConfigured, managerRoutes } from './routes.js';

export type { ManagerConfig } from './deployment-manager.js';

function catalogView(service: RegistryService, access: ManagerAccess): CatalogView {
  const registryAccess = {
    canRead: (r: { visibility: string }) => access.admin || r.visibility !== 'private',
  };
  return {
    resolve: (reference) => service.catalog.resolve(reference, registryAccess),
    fileContent: (sha256) => service.data.catalog.content(sha256),
  };
}

export function mountManager(
  app: Hono<AppEnv>,
  config: ManagerConfig | undefined,
  service: RegistryService,
  logger: Logger,
): DeploymentManager | undefined {
  if (!config) {
    app.route('/', managerNotConfigured());
    return undefined;
  }
  const store = service.store;
  const shared = sharedPool(store);
  const leases = shared
    ? new DeploymentLeases(shared.pool, config.replica ?? replicaName(), config.leaseTtlMs ?? 15_000)
    : undefined;
  const manager = new DeploymentManager(
    config,
    {
      catalog: (access) => catalogView(service, access),
      defaultRegistry: () => service.catalog.defaultRegistry,
      log: (level, message, fields) => logger.log(level, message, fields),
    },
    openManagerState(store, config.stateFile),
    leases,
  );
  app.route('/', managerRoutes(manager));
  return manager;
}

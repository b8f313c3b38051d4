/**
 * The Deployment Manager service (docs/manager.md): deployments, manifests and types over HTTP,
 * with the library `dm deploy` uses — `loadDeploymentInput` to expand a configuration sent with its
 * imports, `deployConfiguration` / `deleteDeployment` to apply it with kubectl against a cluster
 * configured on the server, and the same deployments database. Changes are operations: accepted at
 * once (pending), run one at a time per deployment in the order they came (a queue, not 409), and
 * recorded as they go, so a server killed mid-apply restarts with the operation interrupted and the
 * deployment's previous manifest current (OperationStore.recoverInterrupted).
 *
 * The state is the server's database's dialect: SQLite (`manager.db` beside the server's file) or,
 * for replicas sharing PostgreSQL, the server's PostgreSQL (docs/manager.md "Several replicas"),
 * where a lease per deployment (deployment-lease.ts) keeps two replicas from changing one
 * deployment at once, and the replica that next takes an expired lease marks the operation of the
 * replica that died interrupted.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isMapping } from '../../../client/src/data.js';
import type { DeploymentInput } from '../../../client/src/deploy/index.js';
import {
  checkPrunes,
  type DiffResult,
  type DryRunResult,
  deleteDeployment,
  deployConfiguration,
  deploymentHistory,
  diffDeployment,
  driftDeployment,
  getLive,
  type HistoryEntry,
  Kubectl,
  objectKey,
  planDeployment,
  planRollback,
  readTarget,
  rollbackInput,
  servedKinds,
  toObjects,
  validateDeploymentName,
} from '../../../client/src/deploy/index.js';
import { DmError } from '../../../client/src/error.js';
import type { StateDatabase } from '../../../client/src/state/index.js';
import {
  DeploymentStore,
  type NewOperation,
  type OperationRow,
  OperationStore,
} from '../../../client/src/state/index.js';
import { Admission, type AdmissionOptions } from '../api/admission.js';
import type { CatalogView } from './catalog-resolver.js';
import type { DeploymentLeases } from './deployment-lease.js';
import type { ExpansionJob } from './expand-configuration.js';
import { ExpansionPool } from './expansion-pool.js';
import type { ManagerAccess } from './manager-access.js';

export interface ManagerConfig {
  /** Configured clusters: name → kubeconfig file (`--cluster NAME=KUBECONFIG`). */
  clusters: Record<string, string>;
  /** The manager's SQLite file (beside the server's database); unused on PostgreSQL. */
  stateFile: string;
  /** How long a deployment's lease lasts without a heartbeat on PostgreSQL (ms; default 15 s). */
  leaseTtlMs?: number | undefined;
  /** This replica's name in leases (default `host:pid`; tests run two in one process). */
  replica?: string | undefined;
  /** Where the manager keeps caches (templates, kubectl discovery). */
  dataDir: string;
  /** kubectl executable (DM_KUBECTL; default `kubectl`). */
  kubectlBinary?: string | undefined;
  /** Environment kubectl runs with. */
  env?: Record<string, string | undefined>;
  /** Operations applied at once across deployments (default 4); the others wait, pending. */
  maxConcurrentOperations?: number;
  /**
   * Expansions (create, update, dry run, `POST /expand`) at once and waiting beyond those (default
   * 2 and 8); more are refused with 503 SERVER_BUSY and Retry-After (docs/manager.md).
   */
  expansions?: AdmissionOptions;
}

export interface ManagerDeps {
  /** Resolves registry references for a caller (the server's catalog). */
  catalog: (access: ManagerAccess) => CatalogView;
  defaultRegistry: () => string | undefined;
  log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

export interface ConfigurationBody {
  content: string;
  imports: { name: string; content: string }[];
}

/** `POST /api/v1/deployments` (and PUT): DM's shape plus dm's optional properties and readiness wait. */
export interface DeploymentRequest {
  name: string;
  cluster: string;
  namespace?: string | undefined;
  configuration: ConfigurationBody;
  properties?: Record<string, unknown> | undefined;
  waitForReady?: boolean | undefined;
  timeoutSeconds?: number | undefined;
  /** Let the change prune every object, or more than half (`dm deploy --prune-all`). */
  pruneAll?: boolean | undefined;
  /** Take back fields another field manager changed (`dm deploy --force-conflicts`). */
  forceConflicts?: boolean | undefined;
}

const MAX_IMPORTS = 500;
const IMPORT_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(\/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$/;
const CLUSTER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function invalid(message: string): DmError {
  return new DmError('INVALID_REQUEST', message, { category: 'invalid-input' });
}

/** Checks a configuration body: `{content, imports: [{name, content}]}`, names safe as relative paths. */
export function parseConfiguration(value: unknown): ConfigurationBody {
  if (!isMapping(value) || typeof value.content !== 'string') {
    throw invalid('configuration must be an object with content (the configuration text) and imports');
  }
  const imports = value.imports ?? [];
  if (!Array.isArray(imports) || imports.length > MAX_IMPORTS) {
    throw invalid(`configuration.imports must be a list of at most ${MAX_IMPORTS} {name, content}`);
  }
  const seen = new Set<string>();
  const out = imports.map((i, n) => {
    if (!isMapping(i) || typeof i.name !== 'string' || typeof i.content !== 'string') {
      throw invalid(`configuration.imports[${n}] must be {name, content} with strings`);
    }
    if (i.name.length > 200 || !IMPORT_NAME.test(i.name) || i.name.split('/').includes('..')) {
      throw invalid(
        `configuration.imports[${n}].name '${i.name.slice(0, 200)}' must be a relative file name`,
      );
    }
    if (seen.has(i.name) || i.name === 'config.yaml') {
      throw invalid(`configuration.imports[${n}].name '${i.name}' is given twice (or is config.yaml)`);
    }
    seen.add(i.name);
    return { name: i.name, content: i.content };
  });
  return { content: value.content, imports: out };
}

/** Checks a create/update body; `name` from the path wins for PUT. */
export function parseDeploymentRequest(body: Record<string, unknown>, pathName?: string): DeploymentRequest {
  const name = pathName ?? body.name;
  if (typeof name !== 'string') throw invalid('name is required (the deployment name)');
  if (pathName !== undefined && body.name !== undefined && body.name !== pathName) {
    throw invalid(`name '${String(body.name)}' in the body differs from '${pathName}' in the path`);
  }
  validateDeploymentName(name);
  if (typeof body.cluster !== 'string' && pathName === undefined) {
    throw invalid('cluster is required (a cluster configured on the server)');
  }
  if (
    body.namespace !== undefined &&
    (typeof body.namespace !== 'string' || !CLUSTER_NAME.test(body.namespace))
  ) {
    throw invalid('namespace must be a DNS label');
  }
  if (body.properties !== undefined && !isMapping(body.properties))
    throw invalid('properties must be an object');
  if (body.waitForReady !== undefined && typeof body.waitForReady !== 'boolean') {
    throw invalid('waitForReady must be true or false');
  }
  for (const flag of ['pruneAll', 'forceConflicts'] as const) {
    if (body[flag] !== undefined && typeof body[flag] !== 'boolean')
      throw invalid(`${flag} must be true or false`);
  }
  const timeout = body.timeoutSeconds;
  if (
    timeout !== undefined &&
    (!Number.isInteger(timeout) || (timeout as number) < 1 || (timeout as number) > 3600)
  ) {
    throw invalid('timeoutSeconds must be a whole number from 1 to 3600');
  }
  return {
    name,
    cluster: typeof body.cluster === 'string' ? body.cluster : '',
    namespace: body.namespace as string | undefined,
    configuration: parseConfiguration(body.configuration),
    properties: body.properties as Record<string, unknown> | undefined,
    waitForReady: body.waitForReady as boolean | undefined,
    timeoutSeconds: timeout as number | undefined,
    pruneAll: body.pruneAll as boolean | undefined,
    forceConflicts: body.forceConflicts as boolean | undefined,
  };
}

/** Parses `--cluster NAME=KUBECONFIG` flags; the files must exist. */
export function parseClusterFlags(flags: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const flag of flags) {
    const at = flag.indexOf('=');
    const name = flag.slice(0, at);
    const file = flag.slice(at + 1);
    if (at <= 0 || !CLUSTER_NAME.test(name) || file === '') {
      throw new DmError('INVALID_CLUSTER', `--cluster '${flag}' must be NAME=KUBECONFIG (NAME a DNS label)`, {
        category: 'usage',
      });
    }
    if (!existsSync(file)) {
      throw new DmError('INVALID_CLUSTER', `--cluster ${name}: kubeconfig ${file} does not exist`, {
        category: 'usage',
      });
    }
    if (out[name]) {
      throw new DmError('INVALID_CLUSTER', `--cluster ${name} is given twice`, { category: 'usage' });
    }
    out[name] = file;
  }
  return out;
}

export class DeploymentManager {
  readonly store: DeploymentStore;
  readonly operations: OperationStore;
  /** The tail of each deployment's queue of operations. */
  private readonly queues = new Map<string, Promise<void>>();
  /** Completion of operations this process runs. */
  private readonly running = new Map<string, Promise<void>>();
  /** Slots for operations running at once (bounded kubectl processes and memory). */
  private slots: number;
  private readonly waitingForSlot: (() => void)[] = [];
  /** Operations left by a stopped server recovered (awaited before anything is read or run). */
  readonly ready: Promise<void>;
  /** Expansions run and waiting (docs/server.md, "Bounds on one caller's work"). */
  readonly expansions: Admission;
  /**
   * Configurations being read (docs/manager.md, "Expansions off the request thread"): a body of up
   * to 8 MiB is read only in one of these slots, so bodies in memory before `expansions` admits or
   * refuses them are bounded too (4 read at a time, 16 waiting, unread, in their sockets).
   */
  readonly configurationReads = new Admission('configuration uploads', { concurrency: 4, queue: 16 });
  /** Where expansions run: worker threads, at most as many as `expansions` admits at once. */
  private readonly pool: ExpansionPool;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    readonly config: ManagerConfig,
    private readonly deps: ManagerDeps,
    database: StateDatabase,
    /** The deployment lock across replicas (PostgreSQL); one process serialises without it. */
    private readonly leases?: DeploymentLeases,
  ) {
    this.slots = Math.max(1, config.maxConcurrentOperations ?? 4);
    this.expansions = new Admission('expansions', config.expansions ?? { concurrency: 2, queue: 8 });
    this.pool = new ExpansionPool();
    this.store = new DeploymentStore(database);
    this.operations = new OperationStore(database);
    this.ready = this.recover();
    if (leases) {
      // Heartbeats of this replica's operations; whichever replica notices first marks the
      // operations of a replica that died interrupted.
      this.sweeper = setInterval(
        () =>
          void leases
            .beat()
            .then(() => this.recover())
            .catch(() => {}),
        Math.max(100, Math.floor(leases.ttlMs / 3)),
      );
      this.sweeper.unref();
    }
  }

  /**
   * SQLite: every operation left pending or running by the stopped server. PostgreSQL: operations
   * left running by replicas whose lease expired, each under the deployment's lease (so never one
   * a live replica runs); pending ones belong to live replicas' queues.
   */
  private async recover(): Promise<void> {
    const leases = this.leases;
    const interrupted: OperationRow[] = [];
    if (!leases) interrupted.push(...(await this.operations.recoverInterrupted()));
    else {
      for (const deployment of await leases.orphaned()) {
        if (!(await leases.acquire(deployment, 'recovery'))) continue;
        try {
          interrupted.push(...(await this.operations.recoverInterrupted(deployment)));
        } finally {
          await leases.release(deployment);
        }
      }
      interrupted.push(...(await this.operations.interruptPending(await leases.abandoned())));
    }
    for (const op of interrupted) {
      this.deps.log('warn', 'operation interrupted by a stopped server', {
        operation: op.id,
        deployment: op.deployment,
        status: op.status,
      });
    }
  }

  clusterNames(): string[] {
    return Object.keys(this.config.clusters).sort();
  }

  /**
   * kubectl for a deployment's cluster and namespace. Its discovery/OpenAPI cache is per
   * deployment: kubectl processes of different deployments run at once, and sharing one cache
   * directory made some fail to read the OpenAPI documents another was writing (bench/manager.ts).
   */
  private kubectl(cluster: string, namespace: string | undefined, deployment: string): Kubectl {
    const kubeconfig = this.config.clusters[cluster];
    if (!kubeconfig) {
      throw new DmError('UNKNOWN_CLUSTER', `no cluster '${cluster}' is configured on this server`, {
        category: 'invalid-input',
        details: { clusters: this.clusterNames() },
      });
    }
    return new Kubectl({
      kubeconfig,
      namespace,
      cacheDir: join(this.config.dataDir, 'kube-cache', cluster, deployment),
      ...(this.config.kubectlBinary ? { binary: this.config.kubectlBinary } : {}),
      ...(this.config.env ? { env: this.config.env } : {}),
    });
  }

  /** Where a deployment lives (from its newest operation); undefined if it never existed here. */
  async placement(name: string): Promise<{ cluster: string; namespace: string } | undefined> {
    const op = await this.operations.latestFor(name);
    return op ? { cluster: op.cluster, namespace: op.namespace } : undefined;
  }

  /** Whether a deployment exists or a create of it is queued or running. */
  private async exists(name: string): Promise<boolean> {
    if (await this.store.getDeployment(name)) return true;
    const op = await this.operations.latestFor(name);
    return op !== undefined && (op.status === 'pending' || op.status === 'running') && op.action !== 'delete';
  }

  /** A deployment's placement, if `access` may read it; otherwise not found. */
  async visible(name: string, access: ManagerAccess): Promise<{ cluster: string; namespace: string }> {
    const p = await this.placement(name);
    if (!p || !access.canRead(p.cluster, p.namespace)) {
      throw new DmError('DEPLOYMENT_NOT_FOUND', `deployment '${name}' does not exist`, {
        category: 'not-found',
      });
    }
    return p;
  }

  private requireDeploy(access: ManagerAccess, cluster: string, namespace: string): void {
    if (!access.canDeploy(cluster, namespace)) {
      throw new DmError('FORBIDDEN', `this token may not change deployments in ${cluster}/${namespace}`, {
        category: 'forbidden',
      });
    }
  }

  /**
   * Expands a configuration sent with its imports exactly as `dm deploy` expands a file
   * (expand-configuration.ts), in an expansion worker (docs/manager.md, "Expansions off the request
   * thread"); registry references resolve from this server's registries for this caller.
   */
  async expand(
    name: string,
    configuration: ConfigurationBody,
    properties: Record<string, unknown>,
    access: ManagerAccess,
  ): Promise<DeploymentInput> {
    return this.expansions.run(() =>
      this.pool.expand(this.expansionJob(name, configuration, properties), this.deps.catalog(access)),
    );
  }

  /** `POST /expand`: the expansion `{config, layout, references}` as JSON text, made in the worker. */
  async expandToJson(
    name: string,
    configuration: ConfigurationBody,
    properties: Record<string, unknown>,
    access: ManagerAccess,
  ): Promise<string> {
    return this.expansions.run(() =>
      this.pool.expandToJson(this.expansionJob(name, configuration, properties), this.deps.catalog(access)),
    );
  }

  private expansionJob(
    name: string,
    configuration: ConfigurationBody,
    properties: Record<string, unknown>,
  ): ExpansionJob {
    return {
      name,
      configuration,
      properties,
      defaultRegistry: this.deps.defaultRegistry(),
      cacheRoot: join(this.config.dataDir, 'template-cache'),
    };
  }

  /** A token limited to namespaces may not place objects elsewhere, nor cluster-scoped ones. */
  private async checkObjectScope(
    input: DeploymentInput,
    kubectl: Kubectl,
    cluster: string,
    namespace: string,
    access: ManagerAccess,
  ): Promise<void> {
    if (access.clusterWide(cluster)) return;
    const objects = toObjects(input.config.resources, {
      served: await servedKinds(kubectl),
      defaultNamespace: namespace,
      labels: {},
      annotations: {},
    });
    const outside = objects.find((o) => o.namespace !== namespace);
    if (outside) {
      throw new DmError(
        'FORBIDDEN',
        `resource ${outside.name} (${outside.kind}) is ${outside.namespace ? `in namespace ${outside.namespace}` : 'cluster-scoped'}; this token may change only ${cluster}/${namespace}`,
        { category: 'forbidden' },
      );
    }
  }

  /** Creates (POST) or updates (PUT) a deployment: expands now, applies as a queued operation. */
  async submit(
    req: DeploymentRequest,
    action: 'create' | 'update',
    access: ManagerAccess,
  ): Promise<OperationRow> {
    const { cluster, namespace, input } = await this.prepareChange(req, action, access);
    if (action === 'update') {
      await checkPrunes({
        name: req.name,
        input,
        store: this.store,
        kubectl: this.kubectl(cluster, namespace, req.name),
        pruneAll: req.pruneAll ?? false,
      });
    }
    const op = await this.accept({
      deployment: req.name,
      action,
      actor: access.actor,
      cluster,
      namespace,
    });
    this.enqueue(op, this.kubectl(cluster, namespace, req.name), input, req);
    return op;
  }

  /**
   * What a create or update would do, as `dm deploy --dry-run` says it (`planDeployment`, the same
   * library call): checked exactly as a change is (access, expansion, object scope), nothing applied,
   * no operation recorded.
   */
  async plan(
    req: DeploymentRequest,
    action: 'create' | 'update',
    access: ManagerAccess,
  ): Promise<DryRunResult> {
    const { cluster, namespace, input } = await this.prepareChange(req, action, access);
    return planDeployment({
      name: req.name,
      input,
      store: this.store,
      kubectl: this.kubectl(cluster, namespace, req.name),
      ...(req.pruneAll ? { pruneAll: true } : {}),
      ...(req.forceConflicts ? { forceConflicts: true } : {}),
    });
  }

  /**
   * `dm diff` through the service (docs/deployments.md "Diff and drift"): the configuration against
   * the deployment's last applied manifest and live objects, checked as a change is (a dry run
   * applies nothing, but reads what the token may change only).
   */
  async diff(req: DeploymentRequest, access: ManagerAccess): Promise<DiffResult> {
    const { cluster, namespace, input } = await this.prepareChange(req, 'update', access);
    return diffDeployment({
      name: req.name,
      input,
      store: this.store,
      kubectl: this.kubectl(cluster, namespace, req.name),
    });
  }

  /**
   * `dm rollback` through the service: a stored manifest applied again as an operation (action
   * `rollback`), queued as any change; with `dryRun` the plan instead, nothing recorded.
   */
  async rollback(
    name: string,
    to: string | undefined,
    access: ManagerAccess,
    dryRun: boolean,
  ): Promise<OperationRow | (DryRunResult & { restoredFrom: string })> {
    if (!(await this.exists(name))) {
      throw new DmError('DEPLOYMENT_NOT_FOUND', `deployment '${name}' does not exist`, {
        category: 'not-found',
      });
    }
    const p = await this.visible(name, access);
    this.requireDeploy(access, p.cluster, p.namespace);
    const kubectl = this.kubectl(p.cluster, p.namespace, name);
    if (dryRun) return planRollback({ name, store: this.store, kubectl, to });
    const { input } = await rollbackInput(this.store, name, to);
    await this.checkObjectScope(input, kubectl, p.cluster, p.namespace, access);
    const op = await this.accept({
      deployment: name,
      action: 'rollback',
      actor: access.actor,
      cluster: p.cluster,
      namespace: p.namespace,
    });
    this.enqueue(op, kubectl, input, undefined);
    return op;
  }

  /** `dm history` through the service. */
  async history(name: string, access: ManagerAccess): Promise<HistoryEntry[]> {
    await this.visible(name, access);
    return deploymentHistory(this.store, name);
  }

  /** `dm drift` through the service: live objects against the last applied manifest. */
  async drift(name: string, access: ManagerAccess): Promise<DiffResult> {
    const p = await this.visible(name, access);
    return driftDeployment({ name, store: this.store, kubectl: this.kubectl(p.cluster, p.namespace, name) });
  }

  /** The checks a change passes before it is queued (or planned), and the expanded input. */
  private async prepareChange(
    req: DeploymentRequest,
    action: 'create' | 'update',
    access: ManagerAccess,
  ): Promise<{ cluster: string; namespace: string; input: DeploymentInput }> {
    let cluster = req.cluster;
    let namespace = req.namespace;
    if (action === 'create') {
      if (await this.exists(req.name)) {
        const p = await this.placement(req.name);
        if (p && !access.canRead(p.cluster, p.namespace))
          this.requireDeploy(access, cluster, namespace ?? '');
        throw new DmError(
          'DEPLOYMENT_EXISTS',
          `deployment '${req.name}' already exists; update it with PUT`,
          {
            category: 'conflict',
          },
        );
      }
    } else {
      if (!(await this.exists(req.name))) {
        throw new DmError('DEPLOYMENT_NOT_FOUND', `deployment '${req.name}' does not exist`, {
          category: 'not-found',
        });
      }
      const p = await this.visible(req.name, access);
      if ((cluster && cluster !== p.cluster) || (namespace && namespace !== p.namespace)) {
        throw new DmError(
          'DEPLOYMENT_TARGET_CHANGED',
          `deployment '${req.name}' lives in ${p.cluster}/${p.namespace}; delete it to move it`,
          { category: 'conflict' },
        );
      }
      cluster = p.cluster;
      namespace = p.namespace;
    }
    const kubectl = this.kubectl(cluster, namespace, req.name);
    if (namespace === undefined) {
      // Scope checks need the namespace before anything runs: the kubeconfig context's.
      if (!access.clusterWide(cluster)) {
        throw invalid('namespace is required with a token limited to namespaces');
      }
      namespace = (await readTarget(kubectl)).namespace;
    }
    this.requireDeploy(access, cluster, namespace);
    const input = await this.expand(req.name, req.configuration, req.properties ?? {}, access);
    await this.checkObjectScope(input, kubectl, cluster, namespace, access);
    return { cluster, namespace, input };
  }

  /** Records an operation as this replica's (its heartbeat starts at once on PostgreSQL). */
  private async accept(op: NewOperation): Promise<OperationRow> {
    const row = await this.operations.create({ ...op, replica: this.leases?.holder });
    await this.leases?.beat();
    return row;
  }

  /** Deletes a deployment (an update to an empty manifest, then the deployment goes) as an operation. */
  async remove(name: string, access: ManagerAccess): Promise<OperationRow> {
    if (!(await this.exists(name))) {
      throw new DmError('DEPLOYMENT_NOT_FOUND', `deployment '${name}' does not exist`, {
        category: 'not-found',
      });
    }
    const p = await this.visible(name, access);
    this.requireDeploy(access, p.cluster, p.namespace);
    const op = await this.accept({
      deployment: name,
      action: 'delete',
      actor: access.actor,
      cluster: p.cluster,
      namespace: p.namespace,
    });
    this.enqueue(op, this.kubectl(p.cluster, p.namespace, name), undefined, undefined);
    return op;
  }

  private enqueue(
    op: OperationRow,
    kubectl: Kubectl,
    input: DeploymentInput | undefined,
    req: DeploymentRequest | undefined,
  ): void {
    const previous = this.queues.get(op.deployment) ?? Promise.resolve();
    const done = previous.then(async () => {
      if (this.slots > 0) this.slots--;
      else await new Promise<void>((resolve) => this.waitingForSlot.push(resolve));
      try {
        await this.ready;
        if (this.leases)
          await this.leases.run(op.deployment, op.id, () => this.runLeased(op, kubectl, input, req));
        else await this.run(op, kubectl, input, req);
      } finally {
        const next = this.waitingForSlot.shift();
        if (next) next();
        else this.slots++;
      }
    });
    this.queues.set(op.deployment, done);
    this.running.set(op.id, done);
    void done.finally(() => {
      this.running.delete(op.id);
      if (this.queues.get(op.deployment) === done) this.queues.delete(op.deployment);
    });
  }

  /** Under the deployment's lease: first what a replica that died left running, then the operation. */
  private async runLeased(
    op: OperationRow,
    kubectl: Kubectl,
    input: DeploymentInput | undefined,
    req: DeploymentRequest | undefined,
  ): Promise<void> {
    for (const stale of await this.operations.recoverInterrupted(op.deployment)) {
      this.deps.log('warn', 'operation interrupted by a stopped server', {
        operation: stale.id,
        deployment: stale.deployment,
        status: stale.status,
      });
    }
    await this.run(op, kubectl, input, req);
  }

  /** Runs one operation; never throws (a background task must not take the server down). */
  private async run(
    op: OperationRow,
    kubectl: Kubectl,
    input: DeploymentInput | undefined,
    req: DeploymentRequest | undefined,
  ): Promise<void> {
    try {
      const previous = (await this.store.getDeployment(op.deployment))?.currentManifest ?? null;
      await this.operations.start(op.id, (await this.store.nextManifestName(op.deployment)).name, previous);
      const common = {
        name: op.deployment,
        store: this.store,
        kubectl,
        actor: op.actor,
        ...(req?.timeoutSeconds ? { timeoutSeconds: req.timeoutSeconds } : {}),
      };
      const result = input
        ? await deployConfiguration(
            {
              ...common,
              input,
              ...(req?.waitForReady ? { wait: true } : {}),
              ...(req?.pruneAll ? { pruneAll: true } : {}),
              ...(req?.forceConflicts ? { forceConflicts: true } : {}),
            },
            op.action === 'rollback' ? 'rollback' : undefined,
          )
        : op.action === 'delete' && !(await this.store.getDeployment(op.deployment))
          ? undefined
          : await deleteDeployment(common);
      const failures = result
        ? [...result.resources, ...result.pruned]
            .filter((r) => r.outcome === 'failed' || r.outcome === 'prune-failed')
            .map((r) => ({ resource: r.name, message: r.message ?? r.outcome }))
        : [];
      const ok = result ? result.status === 'applied' : false;
      await this.operations.finish(
        op.id,
        ok ? 'done' : 'failed',
        failures,
        ok
          ? undefined
          : result
            ? `${failures.length} resource(s) failed`
            : `deployment '${op.deployment}' does not exist`,
      );
      this.deps.log(ok ? 'info' : 'warn', 'operation finished', {
        operation: op.id,
        deployment: op.deployment,
        action: op.action,
        actor: op.actor,
        status: ok ? 'done' : 'failed',
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      try {
        await this.operations.finish(op.id, 'failed', [], message);
      } catch (inner) {
        this.deps.log('error', 'cannot record an operation', { operation: op.id, error: String(inner) });
      }
      this.deps.log('warn', 'operation failed', {
        operation: op.id,
        deployment: op.deployment,
        error: message,
      });
    }
  }

  /**
   * The live objects of some of a deployment's resources (by resource name), read with one
   * `kubectl get`; an unreachable cluster gives an error instead (the page says so).
   */
  async liveObjects(
    name: string,
    resources: readonly {
      name: string;
      apiVersion: string;
      kind: string;
      namespace: string;
      objectName: string;
    }[],
  ): Promise<{ objects: Map<string, Record<string, unknown>>; error?: string }> {
    const p = await this.placement(name);
    const objects = new Map<string, Record<string, unknown>>();
    if (!p || resources.length === 0) return { objects };
    try {
      const kubectl = new Kubectl({
        ...this.kubectl(p.cluster, p.namespace, name).options,
        timeoutMs: 15_000,
      });
      const live = await getLive(kubectl, [...resources]);
      for (const r of resources) {
        const o = live.get(objectKey(r));
        if (o) objects.set(r.name, o);
      }
      return { objects };
    } catch (error) {
      return { objects, error: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * Resolves when the operation has finished (at once if it is not running here), or after
   * `timeoutMs` when given, whichever comes first.
   */
  async waitFor(id: string, timeoutMs?: number): Promise<void> {
    const running = this.running.get(id);
    if (!running || timeoutMs === undefined) return running;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([running, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
  }

  /** Waits for every operation in flight (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.all([...this.running.values()]);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.pool.close();
    await this.ready.catch(() => {});
    await this.store.database.close();
  }
}

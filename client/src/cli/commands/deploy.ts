/**
 * `dm deploy`, `dm deployments list|get|delete`, `dm manifests`, `dm types [list]`,
 * `dm types instances <type|all>` (docs/deployments.md). Thin: flags → one library call.
 */
import { type Command, Option } from 'commander';
import type { DeploymentStore } from '../../state/deployments-store.js';
import type { CommandContext } from '../context.js';
import { action, propertiesOf, warner } from '../context.js';

const DEPLOY_HELP = `
Expands a configuration (or one template file, a stream of Kubernetes objects or rendered layered
documents, or a registry reference) and applies it with kubectl server-side apply (field manager
dm): Namespaces and CRDs first, then in dependency order from $(ref.NAME.PATH), one kubectl call per
level. An update prunes objects that left the configuration; a deploy that would prune every object
of the deployment, or more than half of them, stops unless --prune-all is given (--dry-run shows the
count). An empty configuration, or one with a top-level key other than imports, resources and
outputs, is refused before the cluster is contacted. State is kept under the XDG state dir.

Examples:
  dm deploy config.yaml --name prod
  dm deploy config.yaml --name prod --dry-run
  dm deploy web.jinja --properties replicas=3 --wait --timeout 120
  dm --kubeconfig ~/.kube/staging --context staging -n web deploy config.yaml
  dm --registry my-org/my-repo/my-collection --properties prop1=value1 deploy redis:v1
`;

/**
 * Runs `use` over the local deployments database, closed afterwards whatever happens. A dry run
 * (`readOnly`) writes nothing (docs/deployments.md "State"): without a database file yet it reads
 * an empty one in memory instead of creating the file.
 */
export async function withStore<T>(
  ctx: CommandContext,
  use: (store: DeploymentStore) => Promise<T> | T,
  options: { readOnly?: boolean } = {},
): Promise<T> {
  const { existsSync } = await import('node:fs');
  const { openStateDatabase, stateDatabaseFile } = await import('../../state/database.js');
  const { DeploymentStore } = await import('../../state/deployments-store.js');
  const file = stateDatabaseFile(ctx.config.dirs.state);
  const store = new DeploymentStore(
    openStateDatabase(options.readOnly && !existsSync(file) ? ':memory:' : file),
  );
  try {
    return await use(store);
  } finally {
    await store.database.close();
  }
}

export async function kubectlFor(ctx: CommandContext) {
  const { Kubectl } = await import('../../deploy/kubectl.js');
  return new Kubectl({
    kubeconfig: ctx.config.kube.kubeconfig,
    context: ctx.config.kube.context,
    namespace: ctx.config.kube.namespace,
    env: ctx.env,
    ...(ctx.env.DM_KUBECTL ? { binary: ctx.env.DM_KUBECTL } : {}),
  });
}

/**
 * What `dm deploy`, `dm diff` and `dm rollback` read locally: the argument expanded as a deployment
 * input (values, --properties, imports, schema validation, registry references recorded with their
 * exact version and digest).
 */
export async function loadLocalInput(
  ctx: CommandContext,
  arg: string | import('../../input.js').Input,
  name: string,
  options: Record<string, unknown>,
  properties?: Record<string, unknown>,
) {
  const { loadDeploymentInput } = await import('../../deploy/input.js');
  const { loadInput } = await import('../../input.js');
  const { schemaValidationOf } = await import('../../config/config.js');
  const loaded = typeof arg === 'string' ? loadInput(arg, { cwd: ctx.cwd, deployment: name }) : arg;
  const { createRegistryTemplateSource } = await import('../../resolve/registry-template-source.js');
  const templateSource = await createRegistryTemplateSource({
    config: ctx.config,
    registryDirs: ctx.registryDirs,
    configPath: loaded.path,
    warn: warner(ctx),
  });
  const input = await loadDeploymentInput(loaded, {
    deployment: name,
    properties: properties ?? (await propertiesOf(ctx)),
    ...(typeof options.importsDir === 'string' ? { importsDir: options.importsDir } : {}),
    schemaValidation: schemaValidationOf(options.schemaValidation, ctx.config.schemaValidation),
    templateSource,
    onWarning: warner(ctx),
  });
  // The manifest records every reference resolved, with its exact version and digest.
  input.references = [...templateSource.resolved.values()].map((r) => ({
    reference: r.reference,
    resolved: r.version ? `${r.template}:=${r.version}` : r.template,
    commit: r.commit,
    digest: r.digest,
  }));
  return input;
}

/**
 * `--prune-all`, one definition for `dm deploy` and `dm blueprint apply` (docs/deployments.md
 * "Update, prune, delete"): without it a deploy that would prune every object of the deployment,
 * or more than half of them, stops.
 */
export function pruneAllOption(): Option {
  return new Option(
    '--prune-all',
    'let this deploy prune every object of the deployment, or more than half of them (else it stops)',
  );
}

export function timeoutOf(options: Record<string, unknown>): number {
  const n = Number(options.timeout ?? 300);
  return Number.isFinite(n) && n > 0 ? n : 300;
}

export function registerDeployCommands(program: Command): void {
  program
    .command('deploy <config>')
    .description('expand a configuration and apply it to a cluster')
    .option('--name <name>', 'deployment name (default: the file or template name)')
    .option('--dry-run', 'show what would be created, updated and pruned')
    .option('--wait', 'wait until workloads are ready (kubectl wait / rollout status)')
    .option('--timeout <seconds>', 'time limit for --wait and prunes', '300')
    .option('--imports-dir <dir>', 'another directory where types and imports are found')
    .option(
      '--schema-validation <mode>',
      "properties that break a template's schema: strict (fail), warn (expand, print each), off",
    )
    .option('--cluster <name>', 'with --manager-url: the server-side cluster of a new deployment')
    .addOption(pruneAllOption())
    .option('--force-conflicts', 'take back fields another field manager changed (server-side apply)')
    .addHelpText('after', DEPLOY_HELP)
    .action(
      action<unknown>(async (ctx, [arg], options) => {
        const { defaultInputName } = await import('../../input.js');
        const { deployConfiguration, planDeployment, validateDeploymentName } = await import(
          '../../deploy/deploy.js'
        );
        const { existsSync } = await import('node:fs');
        const name =
          typeof options.name === 'string' ? options.name : defaultInputName(arg!, existsSync(arg!));
        validateDeploymentName(name);
        const { reportDeploy, reportDryRun } = await import('./deploy-output.js');
        if (ctx.config.managerUrl) {
          const { remoteDeploy } = await import('./deploy-remote.js');
          const d = await remoteDeploy(ctx, arg!, name, await propertiesOf(ctx), options);
          return d.dryRun ? reportDryRun(d) : reportDeploy(ctx, d);
        }
        const input = await loadLocalInput(ctx, arg!, name, options);
        return withStore(
          ctx,
          async (store) => {
            const kubectl = await kubectlFor(ctx);
            const common = {
              name,
              input,
              store,
              kubectl,
              timeoutSeconds: timeoutOf(options),
              pruneAll: Boolean(options.pruneAll),
              forceConflicts: Boolean(options.forceConflicts),
            };
            if (options.dryRun) return reportDryRun(await planDeployment(common));
            return reportDeploy(ctx, await deployConfiguration({ ...common, wait: Boolean(options.wait) }));
          },
          { readOnly: Boolean(options.dryRun) },
        );
      }),
    );

  const deployments = program.command('deployments').description('list, get and delete deployments');
  deployments
    .command('list', { isDefault: true })
    .addHelpText('after', '\nExamples:\n  dm deployments list\n  dm deployments list -o json\n')
    .description('list deployments')
    .action(
      action(async (ctx) => {
        if (ctx.config.managerUrl) return (await import('./deploy-remote.js')).remoteList(ctx);
        const { reportDeploymentList } = await import('./deploy-output.js');
        return withStore(
          ctx,
          async (store) =>
            reportDeploymentList(
              (await store.listDeployments()).map((x) => ({
                name: x.name,
                state: x.state,
                manifest: x.currentManifest,
                updated: new Date(x.updatedAt).toISOString(),
              })),
            ),
          { readOnly: true },
        );
      }),
    );
  deployments
    .command('get <name>')
    .addHelpText('after', '\nExamples:\n  dm deployments get prod\n  dm deployments get prod -o yaml\n')
    .description('show a deployment: state, current manifest and its resources')
    .action(
      action(async (ctx, [name]) => {
        if (ctx.config.managerUrl) return (await import('./deploy-remote.js')).remoteGet(ctx, name!);
        return withStore(
          ctx,
          async (store) => {
            const { resourceOutcome } = await import('../../state/deployments-store.js');
            const d = await store.getDeployment(name!);
            if (!d) throw await store.notFound(name!);
            const resources = d.currentManifest ? await store.manifestResources(d.currentManifest) : [];
            return {
              data: {
                name: d.name,
                state: d.state,
                manifest: d.currentManifest,
                lastGoodManifest: d.lastGoodManifest,
                manifests: (await store.listManifests(d.name)).map((m) => m.name),
                resources: resources.map(resourceOutcome),
              },
            };
          },
          { readOnly: true },
        );
      }),
    );
  deployments
    .command('delete <name>')
    .addHelpText('after', '\nExamples:\n  dm deployments delete prod\n')
    .description('delete a deployment: remove its objects from the cluster (manifests stay in history)')
    .option('--timeout <seconds>', 'time limit for deletions', '300')
    .action(
      action<unknown>(async (ctx, [name], options) => {
        const { reportDelete } = await import('./deploy-output.js');
        if (ctx.config.managerUrl)
          return reportDelete(await (await import('./deploy-remote.js')).remoteDelete(ctx, name!));
        const { deleteDeployment } = await import('../../deploy/deploy.js');
        return withStore(ctx, async (store) => {
          const result = await deleteDeployment({
            name: name!,
            store,
            kubectl: await kubectlFor(ctx),
            timeoutSeconds: timeoutOf(options),
          });
          return reportDelete(result);
        });
      }),
    );

  program
    .command('manifests <deployment> [id]')
    .addHelpText('after', '\nExamples:\n  dm manifests prod\n  dm manifests prod 3 -o yaml\n')
    .description('list the manifests of a deployment, or show one (by name or sequence number)')
    .action(
      action<unknown>(async (ctx, [deployment, id]) => {
        if (ctx.config.managerUrl)
          return (await import('./deploy-remote.js')).remoteManifests(ctx, deployment!, id);
        return withStore(
          ctx,
          async (store) => {
            const { DmError } = await import('../../error.js');
            const { manifestDocuments, resourceOutcome } = await import('../../state/deployments-store.js');
            const all = await store.listManifests(deployment!);
            if (all.length === 0) {
              if (!(await store.getDeployment(deployment!))) throw await store.notFound(deployment!);
              throw new DmError('DEPLOYMENT_NOT_FOUND', `deployment '${deployment}' has no manifests`, {
                category: 'not-found',
              });
            }
            if (id === undefined) {
              const d = all.map((m) => ({
                name: m.name,
                action: m.action,
                status: m.status,
                created: new Date(m.createdAt).toISOString(),
              }));
              return (await import('./deploy-output.js')).reportManifestList(d);
            }
            const m = all.find((x) => x.name === id || String(x.seq) === id);
            if (!m) {
              throw new DmError('MANIFEST_NOT_FOUND', `deployment '${deployment}' has no manifest '${id}'`, {
                category: 'not-found',
                hint: `have: ${all.map((x) => x.name).join(', ')}`,
              });
            }
            return {
              data: {
                name: m.name,
                deployment: m.deployment,
                action: m.action,
                status: m.status,
                ...(m.error ? { error: m.error } : {}),
                created: new Date(m.createdAt).toISOString(),
                ...(m.finishedAt ? { finished: new Date(m.finishedAt).toISOString() } : {}),
                ...manifestDocuments(m),
                resources: (await store.manifestResources(m.name)).map(resourceOutcome),
              },
            };
          },
          { readOnly: true },
        );
      }),
    );

  const types = program.command('types').description('list types used by deployments and their instances');
  types
    .command('list', { isDefault: true })
    .addHelpText('after', '\nExamples:\n  dm types\n  dm types list -o json\n')
    .description('list types used by active deployments')
    .action(
      action(async (ctx) => {
        if (ctx.config.managerUrl) return (await import('./deploy-remote.js')).remoteTypes(ctx);
        return withStore(
          ctx,
          async (store) => {
            const d = await store.listTypes();
            return (await import('./deploy-output.js')).reportTypes(d);
          },
          { readOnly: true },
        );
      }),
    );
  types
    .command('instances <type>')
    .addHelpText('after', '\nExamples:\n  dm types instances all\n  dm types instances Service -o json\n')
    .description("list the instances of a type ('all' for every type)")
    .action(
      action(async (ctx, [type]) => {
        if (ctx.config.managerUrl) return (await import('./deploy-remote.js')).remoteInstances(ctx, type!);
        return withStore(
          ctx,
          async (store) => {
            const d = (await store.listInstances(type!)).map((i) => ({
              name: i.name,
              type: i.type,
              deployment: i.deployment,
              manifest: i.manifest,
              path: i.path,
            }));
            return (await import('./deploy-output.js')).reportInstances(type!, d);
          },
          { readOnly: true },
        );
      }),
    );
}

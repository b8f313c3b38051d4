/**
 * `dm diff`, `dm drift` (docs/deployments.md "Diff and drift"), `dm rollback` and `dm history`
 * ("Rollback and history"): what a configuration would change, what changed out of band, going back
 * to a stored manifest, and the list of manifests — locally or through the Deployment Manager
 * service (`--manager-url`).
 * Thin: flags → one library call → one printer.
 */
import type { Command } from 'commander';
import type { DryRunResult } from '../../deploy/deploy.js';
import type { DiffResult, ObjectDiff } from '../../deploy/diff.js';
import type { HistoryEntry } from '../../deploy/rollback.js';
import type { CommandContext } from '../context.js';
import { action, propertiesOf } from '../context.js';
import { formatTable, type Printable } from '../format.js';

const DIFF_HELP = `
Three states side by side, per object and field: the deployment's last applied manifest, the live
objects (kubectl get) and what this configuration would apply (a server-side dry run). Objects to
create or prune are marked, and drift: a field dm applied that was changed in the cluster since.
A Secret's values are never printed, only whether they change.

Examples:
  dm diff config.yaml --name prod
  dm diff config.yaml --name prod --detailed-exitcode   # 0 no changes, 2 changes, 1 error
  dm -o json diff config.yaml --name prod
  dm --manager-url http://dm.example:8080 diff config.yaml --name prod
`;

const DRIFT_HELP = `
Compares the live objects with the deployment's last applied manifest only: fields changed out of
band and objects deleted out of band.

Examples:
  dm drift prod
  dm drift prod --detailed-exitcode
  dm -o json drift prod
`;

const ROLLBACK_HELP = `
Applies a stored manifest's configuration again (default: the applied manifest before the current
one) as a new manifest that records which one it restored, and prunes what the newer manifests
added. --dry-run shows the plan, as dm deploy --dry-run does.

Examples:
  dm rollback prod
  dm rollback prod prod-2 --dry-run
  dm rollback prod 2
  dm --manager-url http://dm.example:8080 rollback prod
`;

const HISTORY_HELP = `
Every manifest of a deployment, oldest first: revision, time, actor, action, status, the manifest a
rollback restored, and how many objects it applied, pruned and failed (as helm history).

Examples:
  dm history prod
  dm history prod -o json
`;

const objectOf = (o: ObjectDiff) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.objectName}`;
const show = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v));

/** The printable diff (local or from the service); `--detailed-exitcode` sets exit 2 on changes. */
export function reportDiff(d: DiffResult, detailed: boolean): Printable<DiffResult> {
  if (detailed && d.changed) process.exitCode = 2;
  return {
    data: d,
    text: () => {
      const lines = [
        d.mode === 'diff'
          ? `diff of deployment ${d.deployment}: last applied ${d.lastManifest ?? '(none)'} | live | this configuration (server-side dry run)`
          : `drift of deployment ${d.deployment}: last applied ${d.lastManifest ?? '(none)'} | live`,
      ];
      for (const o of d.objects) {
        const drifted = o.drift.length > 0 || o.deletedOutOfBand;
        if (o.action === 'unchanged' && !drifted) continue;
        const tags = [
          ...(o.action === 'unchanged' ? [] : [o.action]),
          ...(o.deletedOutOfBand ? ['drift: deleted out of band'] : drifted ? ['drift'] : []),
        ];
        lines.push(`${tags.join(', ').padEnd(8)} ${objectOf(o)}${o.message ? `: ${o.message}` : ''}`);
        for (const f of o.drift) {
          lines.push(
            f.secret
              ? `  drift   ${f.path}: changed (Secret value not shown)`
              : `  drift   ${f.path}: last applied ${show(f.from)}, live ${show(f.to)}`,
          );
        }
        for (const f of o.changes) {
          lines.push(
            f.secret
              ? `  change  ${f.path}: changed (Secret value not shown)`
              : `  change  ${f.path}: live ${show(f.from)} -> ${show(f.to)}`,
          );
        }
        for (const [k, v] of Object.entries(o.secretData ?? {})) {
          if (v === 'unchanged') lines.push(`  secret  .data.${k}: unchanged`);
        }
      }
      const c = d.counts;
      lines.push(
        d.mode === 'diff'
          ? `${c.create} to create, ${c.update} to update, ${c.prune} to prune, ${c.drift} drifted${c.failed ? `, ${c.failed} refused by the server` : ''}`
          : d.changed
            ? `${c.drift} drifted`
            : 'no drift: the live objects match the last applied manifest',
      );
      return lines.join('\n');
    },
  };
}

async function remote(ctx: CommandContext) {
  const { ManagerClient } = await import('../../deploy/manager-client.js');
  return new ManagerClient({ url: ctx.config.managerUrl!, token: ctx.config.managerToken });
}

function reportHistory(rows: HistoryEntry[]): Printable<HistoryEntry[]> {
  return {
    data: rows,
    text: () =>
      formatTable(
        [
          'REVISION',
          'MANIFEST',
          'TIME',
          'ACTOR',
          'ACTION',
          'STATUS',
          'APPLIED',
          'PRUNED',
          'FAILED',
          'DESCRIPTION',
        ],
        rows.map((r) => [
          String(r.revision),
          r.manifest,
          r.time,
          r.actor,
          r.action,
          r.status,
          String(r.applied),
          String(r.pruned),
          String(r.failed),
          r.restoredFrom ? `rollback to ${r.restoredFrom}` : (r.error?.split('\n')[0] ?? ''),
        ]),
      ),
  };
}

export function registerReleaseCommands(program: Command): void {
  program
    .command('rollback <deployment> [manifest]')
    .description('apply a stored manifest again (default: the one before the current) as a new manifest')
    .option('--dry-run', 'show what the rollback would create, update and prune')
    .option('--wait', 'wait until workloads are ready (kubectl wait / rollout status)')
    .option('--timeout <seconds>', 'time limit for --wait and prunes', '300')
    .addHelpText('after', ROLLBACK_HELP)
    .action(
      action<unknown>(async (ctx, [name, manifest], options) => {
        const { reportDeploy, reportDryRun } = await import('./deploy-output.js');
        if (ctx.config.managerUrl) {
          const path = `/api/v1/deployments/${encodeURIComponent(name!)}/rollback`;
          const body = manifest === undefined ? {} : { manifest };
          if (options.dryRun) {
            return reportDryRun(
              await (await remote(ctx)).request<DryRunResult>('POST', `${path}?dryRun=true`, body),
            );
          }
          const { runOperation } = await import('./deploy-remote.js');
          return reportDeploy(
            ctx,
            await runOperation(ctx, (c) => c.request<{ id: string }>('POST', path, body)),
          );
        }
        const { withStore, kubectlFor, timeoutOf } = await import('./deploy.js');
        const { planRollback, rollbackDeployment } = await import('../../deploy/rollback.js');
        return withStore(
          ctx,
          async (store) => {
            const common = {
              name: name!,
              to: manifest,
              store,
              kubectl: await kubectlFor(ctx),
              timeoutSeconds: timeoutOf(options),
            };
            if (options.dryRun) return reportDryRun(await planRollback(common));
            return reportDeploy(ctx, await rollbackDeployment({ ...common, wait: Boolean(options.wait) }));
          },
          { readOnly: Boolean(options.dryRun) },
        );
      }),
    );

  program
    .command('history <deployment>')
    .description('list the manifests of a deployment with time, actor, status and what each changed')
    .addHelpText('after', HISTORY_HELP)
    .action(
      action<HistoryEntry[]>(async (ctx, [name]) => {
        if (ctx.config.managerUrl) {
          return reportHistory(
            await (await remote(ctx)).request<HistoryEntry[]>(
              'GET',
              `/api/v1/deployments/${encodeURIComponent(name!)}/history`,
            ),
          );
        }
        const { withStore } = await import('./deploy.js');
        const { deploymentHistory } = await import('../../deploy/rollback.js');
        return withStore(ctx, async (store) => reportHistory(await deploymentHistory(store, name!)), {
          readOnly: true,
        });
      }),
    );

  program
    .command('diff <config>')
    .description('compare a configuration with a deployment: last applied, live and would-be, per field')
    .requiredOption('--name <name>', 'the deployment')
    .option('--detailed-exitcode', 'exit 0 when nothing differs, 2 when something does, 1 on error')
    .option('--imports-dir <dir>', 'another directory where types and imports are found')
    .option('--schema-validation <mode>', "properties that break a template's schema: strict, warn, off")
    .addHelpText('after', DIFF_HELP)
    .action(
      action<DiffResult>(async (ctx, [arg], options) => {
        const { validateDeploymentName } = await import('../../deploy/deploy.js');
        const name = String(options.name);
        validateDeploymentName(name);
        const detailed = Boolean(options.detailedExitcode);
        if (ctx.config.managerUrl) {
          const { payloadOf } = await import('./deploy-remote.js');
          const properties = await propertiesOf(ctx);
          const body = {
            configuration: await payloadOf(ctx, arg!, name, options),
            ...(Object.keys(properties).length ? { properties } : {}),
          };
          const d = await (await remote(ctx)).request<DiffResult>(
            'POST',
            `/api/v1/deployments/${encodeURIComponent(name)}/diff`,
            body,
          );
          return reportDiff(d, detailed);
        }
        const { loadLocalInput, withStore, kubectlFor } = await import('./deploy.js');
        const input = await loadLocalInput(ctx, arg!, name, options);
        const { diffDeployment } = await import('../../deploy/diff.js');
        return withStore(
          ctx,
          async (store) =>
            reportDiff(
              await diffDeployment({ name, input, store, kubectl: await kubectlFor(ctx) }),
              detailed,
            ),
          { readOnly: true },
        );
      }),
    );

  program
    .command('drift <deployment>')
    .description("compare a deployment's live objects with its last applied manifest")
    .option('--detailed-exitcode', 'exit 0 when nothing drifted, 2 when something did, 1 on error')
    .addHelpText('after', DRIFT_HELP)
    .action(
      action<DiffResult>(async (ctx, [name], options) => {
        const detailed = Boolean(options.detailedExitcode);
        if (ctx.config.managerUrl) {
          const d = await (await remote(ctx)).request<DiffResult>(
            'GET',
            `/api/v1/deployments/${encodeURIComponent(name!)}/drift`,
          );
          return reportDiff(d, detailed);
        }
        const { withStore, kubectlFor } = await import('./deploy.js');
        const { driftDeployment } = await import('../../deploy/diff.js');
        return withStore(
          ctx,
          async (store) =>
            reportDiff(
              await driftDeployment({ name: name!, store, kubectl: await kubectlFor(ctx) }),
              detailed,
            ),
          { readOnly: true },
        );
      }),
    );
}

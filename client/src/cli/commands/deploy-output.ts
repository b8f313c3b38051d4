/**
 * How `dm deploy` reports, locally and with `--manager-url` (docs/manager.md): the dry-run plan, the
 * outcome table, and the failure that sets the exit code — one printer for both, so the two modes
 * cannot drift apart.
 */
import type { DryRunChange, DryRunResult } from '../../deploy/deploy.js';
import { DmError } from '../../error.js';
import type { CommandContext } from '../context.js';
import { formatTable, type Printable } from '../format.js';

type Row = { name: string; outcome: string; message?: string };

/** A deploy's result, local (`deployConfiguration`) or from the service (an operation's manifest). */
export interface DeployOutcome {
  status: string;
  deployment: string;
  manifest: string;
  resources: Row[];
  pruned: Row[];
}

function outcomeTable(rows: Row[]): string {
  const width = Math.max(4, ...rows.map((r) => r.name.length));
  return rows
    .map((r) => `${r.name.padEnd(width)}  ${r.outcome}${r.message ? `  ${r.message.split('\n')[0]}` : ''}`)
    .join('\n');
}

function rowsOf(d: DeployOutcome): Row[] {
  return [...d.resources, ...d.pruned.map((p) => ({ ...p, name: `${p.name} (prune)` }))];
}

/**
 * The printable result of a deploy; when it did not apply, the table goes to stderr (text output)
 * and DEPLOY_FAILED is thrown, naming the first failed resource.
 */
export function reportDeploy(ctx: CommandContext, d: DeployOutcome): Printable {
  if (d.status !== 'applied' && ctx.config.output === 'text')
    ctx.streams.stderr(`${outcomeTable(rowsOf(d))}\n`);
  failUnlessApplied(d);
  return {
    data: d,
    // -q: nothing on success, as dm install -q (docs/client.md "Progress, -q and -v").
    text: () =>
      ctx.config.quiet
        ? ''
        : `deployment ${d.deployment}: manifest ${d.manifest} ${d.status}\n${outcomeTable(rowsOf(d))}`,
  };
}

/** The printable result of `dm deployments delete` (DEPLOY_FAILED when a prune failed). */
export function reportDelete(d: DeployOutcome): Printable {
  failUnlessApplied(d);
  return {
    data: d,
    text: () => `deployment ${d.deployment} deleted (manifest ${d.manifest})\n${outcomeTable(d.pruned)}`,
  };
}

function failUnlessApplied(d: DeployOutcome): void {
  if (d.status === 'applied') return;
  const failed = [...d.resources, ...d.pruned].filter((r) => /failed/.test(r.outcome));
  const first = failed[0];
  throw new DmError(
    'DEPLOY_FAILED',
    `deployment '${d.deployment}' failed (manifest ${d.manifest}): ${failed.length} resource${failed.length === 1 ? '' : 's'} failed${first ? `, first ${first.name}: ${(first.message ?? '').split('\n')[0]}` : ''}`,
    {
      hint: `see dm manifests ${d.deployment} ${d.manifest}; fix and run the same command again`,
      details: { manifest: d.manifest, resources: d.resources, pruned: d.pruned },
    },
  );
}

const objectOf = (c: DryRunChange) => `${c.kind} ${c.namespace ? `${c.namespace}/` : ''}${c.objectName}`;

/** The printable plan of `dm deploy --dry-run` (local or through the service). */
export function reportDryRun(d: DryRunResult): Printable {
  return {
    data: d,
    text: () =>
      [
        d.server
          ? `dry run of deployment ${d.deployment} (server-side, against live objects)`
          : `dry run of deployment ${d.deployment} (offline, against the last manifest): no cluster was contacted (${d.offlineReason ?? 'none reachable'})`,
        ...[...d.create]
          .sort((a, b) => (a.level ?? 0) - (b.level ?? 0))
          .map((c) => `create    ${objectOf(c)}${c.level === undefined ? '' : `  (level ${c.level})`}`),
        ...d.update.flatMap((c) => [
          `update    ${objectOf(c)}`,
          ...(c.changes ?? []).map((x) => `            ${x}`),
        ]),
        ...d.unchanged.map((c) => `unchanged ${objectOf(c)}`),
        ...d.prune.map((c) => `prune     ${objectOf(c)}`),
        ...d.failed.map((c) => `invalid   ${objectOf(c)}: ${c.message}`),
        ...(d.existing > 0 || d.prune.length > 0
          ? [`prunes ${d.prune.length} of the deployment's ${d.existing} objects`]
          : []),
        ...(d.refused ? [`a deploy would stop: ${d.refused}`] : []),
      ].join('\n'),
  };
}

/** `dm deployments list`, locally and from the service: one row per deployment. */
export function reportDeploymentList(
  rows: { name: string; state: string; manifest: string | null; updated: string }[],
): Printable {
  return {
    data: rows,
    text: () =>
      rows.length === 0
        ? 'no deployments'
        : formatTable(
            ['NAME', 'STATE', 'MANIFEST', 'UPDATED'],
            rows.map((r) => [r.name, r.state, r.manifest ?? '', r.updated]),
          ),
  };
}

/** `dm manifests <deployment>`, locally and from the service. */
export function reportManifestList(
  rows: { name: string; action: string; status: string; created: string }[],
): Printable {
  return {
    data: rows,
    text: () =>
      formatTable(
        ['MANIFEST', 'ACTION', 'STATUS', 'CREATED'],
        rows.map((r) => [r.name, r.action, r.status, r.created]),
      ),
  };
}

/** `dm types list`, locally and from the service. */
export function reportTypes(rows: { type: string; instances: number }[]): Printable {
  return {
    data: rows,
    text: () =>
      rows.length === 0
        ? 'no types'
        : formatTable(
            ['TYPE', 'INSTANCES'],
            rows.map((r) => [r.type, String(r.instances)]),
          ),
  };
}

/** `dm types instances <type>`, locally and from the service. */
export function reportInstances(
  type: string,
  rows: { name: string; type: string; deployment: string; manifest: string; path: string }[],
): Printable {
  return {
    data: rows,
    text: () =>
      rows.length === 0
        ? type === 'all'
          ? 'no type instances: nothing is deployed'
          : `no instances of type '${type}'`
        : formatTable(
            ['NAME', 'TYPE', 'DEPLOYMENT', 'MANIFEST', 'PATH'],
            rows.map((r) => [r.name, r.type, r.deployment, r.manifest, r.path]),
          ),
  };
}

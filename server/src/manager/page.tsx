/**
 * The page of one deployment (docs/manager.md): server-rendered, no JavaScript — its state, the
 * resources of its current manifest with their live status (read from the cluster with kubectl
 * when the page is asked for), the layout as a tree, every manifest and the operation history.
 */
import type { Child } from 'hono/jsx';
import type { Layout, LayoutEntry } from '../../../client/src/deploy/index.js';
import type { DeploymentManager } from './deployment-manager.js';
import type { ManagerAccess } from './manager-access.js';
import { deploymentView, manifestSummary, operationView } from './shapes.js';

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:72rem;margin:0 auto;padding:1rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .6rem;border-bottom:1px solid #ccc}
code{font-family:ui-monospace,monospace}.failed,.interrupted{color:#cf222e}.done,.applied,.deployed{color:#1a7f37}`;

function Tree(props: { entries: LayoutEntry[] }): Child {
  if (props.entries.length === 0) return null;
  return (
    <ul>
      {props.entries.map((e) => (
        <li>
          <code>{e.name}</code> <span>({e.type})</span>
          {e.resources ? <Tree entries={e.resources} /> : null}
        </li>
      ))}
    </ul>
  );
}

/** Live status of an object: present (with its resourceVersion and Ready-like conditions) or absent. */
function liveStatus(live: Record<string, unknown> | undefined): string {
  if (!live) return 'absent';
  const status = (live.status ?? {}) as { conditions?: { type: string; status: string }[] };
  const conditions = (status.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type);
  const rv = (live.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
  return `present${rv ? ` (resourceVersion ${rv})` : ''}${conditions.length ? `; ${conditions.join(', ')}` : ''}`;
}

export async function deploymentPage(manager: DeploymentManager, name: string, access: ManagerAccess) {
  const where = await manager.visible(name, access);
  const d = await manager.store.getDeployment(name);
  const view = d ? await deploymentView(d, where, manager.store) : undefined;
  const manifests = (await manager.store.listManifests(name)).map(manifestSummary);
  const operations = await Promise.all(
    (await manager.operations.listFor(name, 50)).map((op) => operationView(op, manager.store)),
  );
  const current = d?.currentManifest ? await manager.store.getManifest(d.currentManifest) : undefined;
  const layout = current ? (JSON.parse(current.layout) as Layout) : { resources: [] };
  const applied = (view?.resources ?? []).filter((r) => r.action === 'apply');
  const live = await manager.liveObjects(name, applied);
  return (
    '<!doctype html>' +
    (
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{`${name} — deployment`}</title>
          <style>{STYLE}</style>
        </head>
        <body>
          <main>
            <h1>
              Deployment <code>{name}</code>
            </h1>
            <p>
              {view ? (
                <>
                  State <strong class={view.state}>{view.state}</strong>, manifest{' '}
                  <code>{view.latestManifest ?? '—'}</code> on {where.cluster}/{where.namespace}
                </>
              ) : (
                'Deleted; its manifests stay in history.'
              )}
            </p>
            <h2>Resources</h2>
            {live.error ? <p>Live status unavailable: {live.error}</p> : null}
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Kind</th>
                  <th>Object</th>
                  <th>Level</th>
                  <th>Outcome</th>
                  <th>Live</th>
                </tr>
              </thead>
              <tbody>
                {applied.map((r) => (
                  <tr>
                    <td>
                      <code>{r.name}</code>
                    </td>
                    <td>{r.kind}</td>
                    <td>{`${r.namespace ? `${r.namespace}/` : ''}${r.objectName}`}</td>
                    <td>{r.level}</td>
                    <td class={r.outcome}>{r.outcome}</td>
                    <td>{live.error ? '?' : liveStatus(live.objects.get(r.name))}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h2>Layout</h2>
            <Tree entries={layout.resources} />
            <h2>Manifests</h2>
            <table>
              <thead>
                <tr>
                  <th>Manifest</th>
                  <th>Action</th>
                  <th>Status</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                {manifests.map((m) => (
                  <tr>
                    <td>
                      <a href={`/api/v1/deployments/${name}/manifests/${m.name}`}>{m.name}</a>
                    </td>
                    <td>{m.action}</td>
                    <td class={m.status}>{m.status}</td>
                    <td>{m.createdAt}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h2>Operations</h2>
            <table>
              <thead>
                <tr>
                  <th>Operation</th>
                  <th>Action</th>
                  <th>Status</th>
                  <th>Who</th>
                  <th>Started</th>
                  <th>Finished</th>
                  <th>Manifest</th>
                  <th>Errors</th>
                </tr>
              </thead>
              <tbody>
                {operations.map((o) => (
                  <tr>
                    <td>
                      <code>{o.id}</code>
                    </td>
                    <td>{o.action}</td>
                    <td class={o.status}>{o.status}</td>
                    <td>{o.actor}</td>
                    <td>{o.startedAt ?? '—'}</td>
                    <td>{o.finishedAt ?? '—'}</td>
                    <td>{o.manifest ?? '—'}</td>
                    <td>
                      {[
                        ...o.errors.map((e) => `${e.resource}: ${e.message.split('\n')[0]}`),
                        ...(o.error ? [o.error] : []),
                      ].join('; ')}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </main>
        </body>
      </html>
    ).toString()
  );
}

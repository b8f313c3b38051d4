/**
 * One registry's page: its sync, templates, findings and quarantine.
 * Plain functions of already-read data to JSX (docs/pages.md): every value from the store goes in
 * as text or an attribute, which hono/jsx escapes; nothing from data is ever raw HTML.
 */

import { printable } from '../../../client/src/registry/index.js';
import type { RegistryInfo } from '../api/shapes.js';
import type { RegistryTemplateRow, RowsPage } from '../store/contract.js';
import { Layout } from './layout.js';
import {
  collectionLabel,
  Findings,
  orDash,
  PageLinks,
  pagesOf,
  SyncOutcome,
  Table,
  Time,
  UpstreamState,
} from './pieces.js';
import { registryUrl, templateUrl } from './urls.js';

export function RegistryPage(props: {
  info: RegistryInfo;
  /** The templates this page lists (one ROWS_PER_PAGE page of them, `templatesPage`) and how many there are. */
  templates: RowsPage<RegistryTemplateRow>;
  /** Which page of the templates this is, from 1. */
  templatesPage: number;
  /** A directory on the server's disk: its path is shown to admins only. */
  local: boolean;
  showLocalPath: boolean;
}) {
  const r = props.info;
  const pages = pagesOf(props.templates.total);
  const shown = props.templates.rows;
  return (
    <Layout title={r.name}>
      <p class="muted">
        <a href="/registries">Registries</a>
      </p>
      <h1>
        {r.name} {r.visibility === 'private' && <span class="badge">private</span>}
      </h1>
      <section aria-labelledby="h-sync">
        <h2 id="h-sync">Sync status</h2>
        <dl class="facts">
          <dt>Source</dt>
          <dd id="registry-source">
            {`${r.source.type} `}
            {props.local && !props.showLocalPath ? 'local directory' : <code>{r.source.location}</code>}
            {r.source.branch ? ` @ ${r.source.branch}` : ''}
            {r.source.path ? ` / ${r.source.path}` : ''}
          </dd>
          {r.upstream && (
            <>
              <dt>Upstream</dt>
              <dd>
                <code>{r.upstream.url}</code> <UpstreamState upstream={r.upstream} />
                {r.upstream.removedUpstream > 0 &&
                  ` — ${r.upstream.removedUpstream} versions removed upstream (still served here)`}
                {r.upstream.digestMismatches > 0 &&
                  ` — ${r.upstream.digestMismatches} versions whose digest upstream differs (the stored one is served)`}
              </dd>
            </>
          )}
          <dt>Commit</dt>
          <dd>
            {r.commit ? (
              <code>{r.commit}</code>
            ) : (
              <span class="muted">
                {r.commit === '' ? 'none: a local directory, read as it is' : 'none yet'}
              </span>
            )}
          </dd>
          <dt>Last sync</dt>
          <dd>
            <Time iso={r.sync.lastSyncAt} />
          </dd>
          <dt>Outcome</dt>
          <dd>
            <SyncOutcome info={r} />
            {r.sync.error ? ` — ${r.sync.error}` : ''}
          </dd>
          <dt>API requests</dt>
          <dd>{orDash(r.sync.apiRequests)}</dd>
          <dt>Rate limit remaining</dt>
          <dd>{orDash(r.sync.rateLimitRemaining)}</dd>
          <dt>Sync interval</dt>
          <dd>{r.interval === null ? 'on demand and webhook' : `${r.interval} s`}</dd>
          <dt>Counts</dt>
          <dd>{`${r.counts.templates} templates, ${r.counts.versions} versions, ${r.counts.findings} findings`}</dd>
        </dl>
      </section>
      <section aria-labelledby="h-findings">
        <h2 id="h-findings">Lint findings</h2>
        <Findings
          findings={r.findings ?? []}
          empty="No lint findings: every version directory was indexed."
        />
      </section>
      <section aria-labelledby="h-templates">
        <h2 id="h-templates">Templates</h2>
        {props.templates.total === 0 ? (
          <p class="muted">No templates indexed.</p>
        ) : (
          <Table
            id="templates"
            columns={['Template', 'Collection', 'Latest', 'Title']}
            items={shown}
            row={(t) => (
              <tr>
                <td>
                  <a href={templateUrl(r.name, t.collection, t.name)}>{t.name}</a>
                </td>
                <td>{collectionLabel(t.collection)}</td>
                <td>{orDash(t.latestVersion)}</td>
                <td>{printable(t.title ?? '')}</td>
              </tr>
            )}
          />
        )}
        <PageLinks
          label="Pages of templates"
          what="templates"
          page={props.templatesPage}
          pages={pages}
          url={(n) => `${registryUrl(r.name)}${n > 1 ? `?templates=${n}` : ''}#h-templates`}
        />
      </section>
    </Layout>
  );
}

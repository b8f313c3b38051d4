/**
 * The list of registries.
 * Plain functions of already-read data to JSX (docs/pages.md): every value from the store goes in
 * as text or an attribute, which hono/jsx escapes; nothing from data is ever raw HTML.
 */

import type { RegistryInfo } from '../api/shapes.js';
import { Layout } from './layout.js';
import { orDash, SyncOutcome, shortHash, Table, Time, UpstreamState } from './pieces.js';
import { registryUrl } from './urls.js';

export function RegistriesPage(props: { registries: RegistryInfo[] }) {
  return (
    <Layout title="Registries">
      <h1>Registries</h1>
      {props.registries.length === 0 ? (
        <p>No registry is visible here.</p>
      ) : (
        <Table
          id="registries"
          columns={[
            'Registry',
            'Source',
            'Commit',
            'Last sync',
            'Outcome',
            'API requests',
            'Rate limit left',
            'Templates',
            'Versions',
            'Findings',
          ]}
          items={props.registries}
          row={(r) => (
            <tr>
              <th scope="row">
                <a href={registryUrl(r.name)}>{r.name}</a>
                {r.visibility === 'private' && <span class="badge">private</span>}
              </th>
              <td>
                {r.source.type}
                {r.upstream && (
                  <>
                    {' '}
                    <UpstreamState upstream={r.upstream} />
                  </>
                )}
              </td>
              <td>
                {r.commit === '' ? (
                  <span class="muted">local directory</span>
                ) : (
                  <code title={r.commit ?? undefined}>{shortHash(r.commit)}</code>
                )}
              </td>
              <td>
                <Time iso={r.sync.lastSyncAt} />
              </td>
              <td>
                <SyncOutcome info={r} />
              </td>
              <td class="num">{orDash(r.sync.apiRequests)}</td>
              <td class="num">{orDash(r.sync.rateLimitRemaining)}</td>
              <td class="num">{r.counts.templates}</td>
              <td class="num">{r.counts.versions}</td>
              <td class="num">{r.counts.findings}</td>
            </tr>
          )}
        />
      )}
    </Layout>
  );
}

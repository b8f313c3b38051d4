/**
 * The search page.
 * Plain functions of already-read data to JSX (docs/pages.md): every value from the store goes in
 * as text or an attribute, which hono/jsx escapes; nothing from data is ever raw HTML.
 */

import { printable } from '../../../client/src/registry/index.js';
import type { SearchResult } from '../api/shapes.js';
import { Layout } from './layout.js';
import { collectionLabel } from './pieces.js';
import { type SearchParams, searchUrl, templateUrl } from './urls.js';

function Facet(props: {
  title: string;
  counts: Record<string, number>;
  selected: string | undefined;
  label: (value: string) => string;
  url: (value: string | undefined) => string;
  /** The link that clears the filter: "All collections". */
  all: string;
}) {
  const entries = Object.entries(props.counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return (
    <section aria-label={props.title}>
      <h2>{props.title}</h2>
      <ul>
        {props.selected !== undefined && (
          <li>
            <a href={props.url(undefined)}>{props.all}</a>
          </li>
        )}
        {entries.map(([value, count]) => (
          <li>
            <a href={props.url(value)} aria-current={value === props.selected ? 'true' : undefined}>
              {props.label(value)}
            </a>{' '}
            <span class="badge">{count}</span>
          </li>
        ))}
        {entries.length === 0 && <li class="muted">none</li>}
      </ul>
    </section>
  );
}

export function SearchPage(props: { params: SearchParams; result: SearchResult }) {
  const { params, result } = props;
  const pages = Math.max(1, Math.ceil(result.total / result.limit));
  const heading = params.q ? `Templates matching “${params.q}”` : 'Templates';
  const filtered = params.collection !== undefined || params.registry !== undefined;
  return (
    <Layout title={params.q ? `Search: ${params.q}` : 'Templates'} query={params.q}>
      <h1>{heading}</h1>
      <p class="muted" id="summary">
        {`${result.totalIsLowerBound ? 'more than ' : ''}${result.total} template${result.total === 1 ? '' : 's'}`}
        {filtered ? ' (filtered)' : ''}
      </p>
      <div class="layout">
        <aside aria-label="Filters">
          <Facet
            title="Collection"
            all="All collections"
            counts={result.facets.collection}
            selected={params.collection}
            label={collectionLabel}
            url={(collection) => searchUrl({ ...params, collection, page: 1 })}
          />
          <Facet
            title="Registry"
            all="All registries"
            counts={result.facets.registry}
            selected={params.registry}
            label={(r) => r}
            url={(registry) => searchUrl({ ...params, registry, page: 1 })}
          />
        </aside>
        <section aria-label="Results">
          {result.didYouMean !== null && (
            <p id="did-you-mean">
              {`No template matches “${params.q}”; these have similar names. Did you mean `}
              <a href={searchUrl({ ...params, q: result.didYouMean, page: 1 })}>{result.didYouMean}</a>?
            </p>
          )}
          {result.hits.length === 0 ? (
            <p>No template matches. Try fewer or shorter words.</p>
          ) : (
            <ol class="results" start={(result.page - 1) * result.limit + 1}>
              {result.hits.map((hit) => (
                <li>
                  <a class="ref" href={templateUrl(hit.registry, hit.collection, hit.name)}>
                    {hit.reference}
                  </a>{' '}
                  {hit.latestVersion && <span class="badge">{`latest ${hit.latestVersion}`}</span>}
                  {(hit.title || hit.description) && (
                    <p>
                      {hit.title && <strong>{printable(hit.title)}</strong>}
                      {hit.title && hit.description ? ' — ' : ''}
                      {hit.description}
                    </p>
                  )}
                </li>
              ))}
            </ol>
          )}
          {pages > 1 && (
            <nav class="pages" aria-label="Pagination">
              {result.page > 1 ? (
                <a href={searchUrl({ ...params, page: result.page - 1 })} rel="prev">
                  ← Previous
                </a>
              ) : (
                <span class="muted">← Previous</span>
              )}
              <span>{`Page ${result.page} of ${pages}`}</span>
              {result.page < pages ? (
                <a href={searchUrl({ ...params, page: result.page + 1 })} rel="next">
                  Next →
                </a>
              ) : (
                <span class="muted">Next →</span>
              )}
            </nav>
          )}
        </section>
      </div>
    </Layout>
  );
}

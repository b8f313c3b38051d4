/**
 * The diff page of two versions of a template.
 * Plain functions of already-read data to JSX (docs/pages.md): every value from the store goes in
 * as text or an attribute, which hono/jsx escapes; nothing from data is ever raw HTML.
 */

import { printable } from '../../../client/src/registry/index.js';
import { Layout } from './layout.js';
import { CompareForm, Table } from './pieces.js';
import { registryUrl, templateUrl } from './urls.js';
import type { VersionDiff } from './version-diff.js';

export interface DiffPageProps {
  registry: string;
  collection: string;
  name: string;
  from: string;
  to: string;
  versions: string[];
  diff: VersionDiff;
}

/** The most changed files a diff page lists (the counts above the list cover them all). */
export const MAX_LISTED_CHANGES = 200;

export function DiffPage(p: DiffPageProps) {
  const { unchanged, properties } = p.diff;
  const all = p.diff.files;
  const files = all.slice(0, MAX_LISTED_CHANGES);
  return (
    <Layout title={`${p.name} ${p.from} → ${p.to}`}>
      <p class="muted">
        <a href={registryUrl(p.registry)}>{p.registry}</a>
        {' / '}
        <a href={templateUrl(p.registry, p.collection, p.name)}>{p.name}</a>
      </p>
      <h1>
        {`${p.name} `}
        <a href={templateUrl(p.registry, p.collection, p.name, p.from)}>{p.from}</a>
        {' → '}
        <a href={templateUrl(p.registry, p.collection, p.name, p.to)}>{p.to}</a>
      </h1>
      <CompareForm
        template={templateUrl(p.registry, p.collection, p.name).replace(/^\/templates\//, '')}
        versions={p.versions}
        from={p.from}
        to={p.to}
      />
      <section aria-labelledby="h-changed-files">
        <h2 id="h-changed-files">Files</h2>
        <p class="muted" id="files-summary">
          {`${all.filter((f) => f.status === 'added').length} added, ${all.filter((f) => f.status === 'removed').length} removed, ${all.filter((f) => f.status === 'changed').length} changed, ${unchanged} unchanged`}
          {all.length > files.length ? `; the first ${files.length} are listed` : ''}
        </p>
        {files.length > 0 && (
          <Table
            id="file-changes"
            columns={['Path', 'Change', 'Size (bytes)']}
            items={files}
            row={(f) => (
              <tr>
                <th scope="row">
                  <a href={`#file-${encodeURIComponent(f.path)}`}>{printable(f.path)}</a>
                </th>
                <td>{f.status}</td>
                <td class="num">{`${f.fromSize ?? '—'} → ${f.toSize ?? '—'}`}</td>
              </tr>
            )}
          />
        )}
      </section>
      <section aria-labelledby="h-changed-properties">
        <h2 id="h-changed-properties">Schema properties</h2>
        {properties.length === 0 ? (
          <p class="muted">No property was added, removed or changed.</p>
        ) : (
          <Table
            id="property-changes"
            columns={['Property', 'Change', 'Detail']}
            items={properties}
            row={(c) => (
              <tr>
                <th scope="row">
                  <code>{printable(c.name)}</code>
                </th>
                <td>{c.status}</td>
                <td>{c.detail}</td>
              </tr>
            )}
          />
        )}
      </section>
      <section aria-labelledby="h-diffs">
        <h2 id="h-diffs">Changes</h2>
        {files.map((f) => (
          <section aria-label={printable(f.path)} id={`file-${encodeURIComponent(f.path)}`}>
            <h3>
              <code>{printable(f.path)}</code> <span class="badge">{f.status}</span>
            </h3>
            {f.hunks === null ? (
              <p class="muted">{f.note ?? ''}</p>
            ) : (
              <pre class="diff">
                <code>
                  {f.hunks.map((h) => [
                    <span class="hunk">{`@@ -${h.fromStart} +${h.toStart} @@\n`}</span>,
                    ...h.ops.map((op) => (
                      <span class={op.kind === '+' ? 'add' : op.kind === '-' ? 'del' : undefined}>
                        {`${op.kind}${op.line}\n`}
                      </span>
                    )),
                  ])}
                </code>
              </pre>
            )}
          </section>
        ))}
      </section>
    </Layout>
  );
}

/**
 * The pages' views (docs/pages.md): plain functions of already-read data to JSX. Every value
 * from the store goes in as text or an attribute, which hono/jsx escapes; nothing from data is
 * ever raw HTML.
 */
import type { Child } from 'hono/jsx';
import { formatTemplateName } from '../../../client/src/reference/reference.js';
import { tryParseVersion } from '../../../client/src/reference/version.js';
import type { FileInfo, RegistryInfo, SearchResult, UpstreamInfo } from '../api/shapes.js';
import type { QuarantineInfo } from '../store/quarantine.js';
import type { FindingRow, RegistryTemplateRow, VersionRow } from '../store/reads.js';
import { CopyButton, Layout } from './layout.js';
import { Markdown } from './markdown.js';
import type { PropertyRow } from './properties.js';
import { minimalConfig, type SourceLink, useCommands } from './use-it.js';
import type { VersionDiff } from './version-diff.js';

// ---- URLs -------------------------------------------------------------------------------------

const segments = (text: string) => text.split('/').map(encodeURIComponent).join('/');

export function templateUrl(registry: string, collection: string, name: string, version?: string): string {
  const path = [registry, ...(collection ? [collection] : []), name].map(segments).join('/');
  return `/templates/${path}${version === undefined ? '' : `/versions/${encodeURIComponent(version)}`}`;
}

/** The diff page of two versions of a template. */
export function diffUrl(
  registry: string,
  collection: string,
  name: string,
  from: string,
  to: string,
): string {
  return `${templateUrl(registry, collection, name, from)}/diff/${encodeURIComponent(to)}`;
}

export function registryUrl(name: string): string {
  return `/registries/${segments(name)}`;
}

export interface SearchParams {
  q: string;
  collection?: string | undefined;
  registry?: string | undefined;
  page?: number;
}

export function searchUrl(p: SearchParams): string {
  const query = new URLSearchParams();
  if (p.q) query.set('q', p.q);
  if (p.collection !== undefined) query.set('collection', p.collection);
  if (p.registry !== undefined) query.set('registry', p.registry);
  if (p.page !== undefined && p.page > 1) query.set('page', String(p.page));
  const text = query.toString();
  return text ? `/search?${text}` : '/search';
}

/** The API URL of a version's file (the raw content). */
export function fileUrl(registry: string, collection: string, name: string, version: string, path: string) {
  return `/api/v1${templateUrl(registry, collection, name, version)}/files/${segments(path)}`;
}

// ---- small pieces -----------------------------------------------------------------------------

/** The reference people should write: patch float on MAJOR.MINOR (pre-releases named in full). */
export function referenceFor(name: string, version: string): string {
  const v = tryParseVersion(version);
  if (!v) return `${name}:${version}`;
  if (v.prerelease.length > 0) return `${name}:${version.replace(/\+.*$/, '')}`;
  return `${name}:v${v.major}.${v.minor}`;
}

function floatNote(version: string): string {
  const v = tryParseVersion(version);
  if (!v) return '';
  if (v.prerelease.length > 0) {
    return `Floats to later pre-releases of v${v.major}.${v.minor}.${v.patch} and to its release.`;
  }
  return `Floats to the newest patch of v${v.major}.${v.minor}.`;
}

function collectionLabel(collection: string): string {
  return collection === '' ? '(root collection)' : collection;
}

function Time(props: { iso: string | null }) {
  if (!props.iso) return <span class="muted">never</span>;
  return <time datetime={props.iso}>{`${props.iso.replace('T', ' ').slice(0, 19)} UTC`}</time>;
}

function shortHash(text: string | null, length = 12): string {
  if (!text) return '';
  return text.replace(/^sha256:/, '').slice(0, length);
}

/**
 * The one table markup of the pages: column headers (`scope="col"`), an optional caption, and a
 * row per item as `row` renders it.
 */
function Table<T>(props: {
  id?: string;
  caption?: string;
  columns: readonly string[];
  items: readonly T[];
  row: (item: T) => Child;
}) {
  return (
    <table id={props.id}>
      {props.caption !== undefined && <caption class="muted">{props.caption}</caption>}
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th scope="col">{c}</th>
          ))}
        </tr>
      </thead>
      <tbody>{props.items.map((item) => props.row(item))}</tbody>
    </table>
  );
}

function Findings(props: { findings: FindingRow[]; empty: string }) {
  if (props.findings.length === 0) return <p class="muted">{props.empty}</p>;
  return (
    <Table
      columns={['Severity', 'Code', 'Path', 'Message']}
      items={props.findings}
      row={(f) => (
        <tr>
          <td class={f.severity === 'error' ? 'error' : 'warning'}>{f.severity}</td>
          <td>
            <code>{f.code}</code>
          </td>
          <td>
            <code>{f.path}</code>
          </td>
          <td>{f.message}</td>
        </tr>
      )}
    />
  );
}

// ---- search -----------------------------------------------------------------------------------

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
                      {hit.title && <strong>{hit.title}</strong>}
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

// ---- template ---------------------------------------------------------------------------------

export interface TemplatePageProps {
  registry: string;
  commit: string | null;
  collection: string;
  name: string;
  /** Set on the exact-version page. */
  exact: boolean;
  version: VersionRow;
  latestVersion: string | null;
  /** All versions (template page only). */
  versions: VersionRow[];
  title: string | null;
  /** Markdown. */
  description: string | null;
  /** The schema's `info.author` and `info.license`, when they are text. */
  author: string | null;
  license: string | null;
  /** The version directory at its source. */
  source: SourceLink;
  /** The version's README.md (Markdown), when it has one small enough to show. */
  readme: string | undefined;
  relations: Relations;
  properties: PropertyRow[];
  hasSchema: boolean;
  example: string | undefined;
  files: FileInfo[];
  findings: FindingRow[];
  /** The source changed this version after it was first seen (template page only; docs/integrity-store.md). */
  quarantined?: QuarantineInfo | undefined;
}

/** A template another one names: its reference, and the page it resolves to here (if any). */
export interface RelatedTemplate {
  reference: string;
  href: string | undefined;
  /** The exact version the reference resolves to on this server. */
  version: string | undefined;
}

export interface Relations {
  /** References the version's files name (templates, schemas, imports). */
  uses: RelatedTemplate[];
  /**
   * Template versions on this server whose files name this template (any version of it);
   * undefined on the exact-version page, which links to the template page for it.
   */
  usedBy: { label: string; href: string; reference: string }[] | undefined;
  /** True when the used-by scan stopped at its bound. */
  usedByIncomplete: boolean;
}

function SourceFact(props: { source: SourceLink }) {
  const s = props.source;
  if (s.kind === 'link') {
    return (
      <a id="source" href={s.href} rel="noopener noreferrer">
        {s.label}
      </a>
    );
  }
  if (s.kind === 'text') return <code id="source">{s.label}</code>;
  return (
    <span id="source">
      local directory
      {s.commit ? (
        <>
          {' @ '}
          <code>{shortHash(s.commit)}</code>
        </>
      ) : (
        ''
      )}
    </span>
  );
}

function UseIt(props: { name: string; reference: string; properties: PropertyRow[] }) {
  return (
    <section aria-labelledby="h-use">
      <h2 id="h-use">Use it</h2>
      <p>
        A configuration (<code>config.yaml</code>) using this template by its full reference
        {props.properties.some((p) => p.required && p.default === null)
          ? ', with the properties it requires:'
          : ':'}
      </p>
      <div class="copyable">
        <pre>
          <code id="use-config">{minimalConfig(props.name, props.reference, props.properties)}</code>
        </pre>
        <CopyButton target="use-config" label="Copy the configuration" />
      </div>
      <p>Then lock it and render it:</p>
      <div class="copyable">
        <pre>
          <code id="use-commands">{useCommands(props.reference)}</code>
        </pre>
        <CopyButton target="use-commands" label="Copy the commands" />
      </div>
    </section>
  );
}

function RelationsSection(props: { relations: Relations; name: string; all: string }) {
  const { uses, usedBy, usedByIncomplete } = props.relations;
  return (
    <section aria-labelledby="h-relations">
      <h2 id="h-relations">Relationships</h2>
      <h3 id="h-uses">Uses</h3>
      {uses.length === 0 ? (
        <p class="muted">This version names no other registry template.</p>
      ) : (
        <ul id="uses" aria-labelledby="h-uses">
          {uses.map((u) => (
            <li>
              {u.href ? <a href={u.href}>{u.reference}</a> : <code>{u.reference}</code>}
              {u.version ? <span class="muted">{` → ${u.version}`}</span> : ''}
              {u.href ? '' : <span class="muted"> (not on this server)</span>}
            </li>
          ))}
        </ul>
      )}
      <h3 id="h-used-by">Used by</h3>
      {usedBy === undefined ? (
        <p class="muted">
          What uses {props.name} is on <a href={props.all}>{`the page of ${props.name}`}</a>.
        </p>
      ) : usedBy.length === 0 ? (
        <p class="muted">{`No template on this server names ${props.name}.`}</p>
      ) : (
        <ul id="used-by" aria-labelledby="h-used-by">
          {usedBy.map((u) => (
            <li>
              <a href={u.href}>{u.label}</a> <span class="muted">{`names ${u.reference}`}</span>
            </li>
          ))}
        </ul>
      )}
      {usedByIncomplete && (
        <p class="muted">The registries are too large to scan completely; this list may be partial.</p>
      )}
    </section>
  );
}

export function TemplatePage(p: TemplatePageProps) {
  const full = formatTemplateName(splitName(p.registry, p.collection, p.name));
  const reference = referenceFor(full, p.version.version);
  const pin = `${full}:=${p.version.version}`;
  return (
    <Layout title={p.exact ? `${p.name} ${p.version.version}` : p.name} copy>
      <p class="muted">
        <a href={registryUrl(p.registry)}>{p.registry}</a>
        {' / '}
        <a href={searchUrl({ q: '', registry: p.registry, collection: p.collection })}>
          {collectionLabel(p.collection)}
        </a>
      </p>
      <h1>
        {p.name} <span class="badge">{p.version.version}</span> <span class="badge">{p.version.kind}</span>
        {p.version.removedUpstream && (
          <span
            class="badge"
            title="the upstream registry no longer serves this version; this mirror still does"
          >
            removed upstream
          </span>
        )}
      </h1>
      {p.quarantined && (
        <p class="warning" id="quarantined">
          Quarantined since {p.quarantined.since}: the source changed version {p.version.version} after it was
          first seen ({p.quarantined.changedFiles.map((f) => f.path).join(', ') || 'files unknown'}; new
          digest <code>{shortHash(p.quarantined.newDigest)}</code>). The first-seen content is shown and
          served until an administrator accepts the change.
        </p>
      )}
      {p.title && (
        <p>
          <strong id="title">{p.title}</strong>
        </p>
      )}
      {p.description && (
        <div id="description">
          <Markdown text={p.description} />
        </div>
      )}
      <dl class="facts" id="about">
        <dt>Author</dt>
        <dd>{p.author ?? <span class="muted">not given</span>}</dd>
        <dt>License</dt>
        <dd>{p.license ?? <span class="muted">not given</span>}</dd>
        <dt>Source</dt>
        <dd>
          <SourceFact source={p.source} />
        </dd>
      </dl>

      <section aria-labelledby="h-reference">
        <h2 id="h-reference">Reference</h2>
        <div class="copyable">
          <code class="reference" id="reference">
            {reference}
          </code>
          <CopyButton target="reference" label="Copy the reference" />
        </div>
        <p class="muted">
          {floatNote(p.version.version)} Exact pin: <code id="pin">{pin}</code>
        </p>
      </section>

      <UseIt name={p.name} reference={reference} properties={p.properties} />

      {p.exact ? (
        <p>
          <a href={templateUrl(p.registry, p.collection, p.name)}>{`All versions of ${p.name}`}</a>
        </p>
      ) : (
        <section aria-labelledby="h-versions">
          <h2 id="h-versions">Versions</h2>
          {p.versions.length > 1 && (
            <CompareForm
              template={templateUrl(p.registry, p.collection, p.name).replace(/^\/templates\//, '')}
              versions={p.versions.map((v) => v.version)}
              from={p.versions[1]!.version}
              to={p.versions[0]!.version}
            />
          )}
          <Table
            id="versions"
            columns={['Version', 'Kind', 'Digest', 'First seen', 'Note']}
            items={p.versions}
            row={(v) => (
              <tr>
                <td>
                  <a href={templateUrl(p.registry, p.collection, p.name, v.version)}>{v.version}</a>
                </td>
                <td>{v.kind}</td>
                <td>
                  <code title={v.digest}>{shortHash(v.digest)}</code>
                </td>
                <td class="first-seen">
                  {v.firstSeenAt === null ? (
                    <span class="muted">not recorded</span>
                  ) : (
                    <Time iso={new Date(v.firstSeenAt).toISOString()} />
                  )}
                </td>
                <td>
                  {v.version === p.latestVersion
                    ? 'latest'
                    : (tryParseVersion(v.version)?.prerelease.length ?? 0) > 0
                      ? 'pre-release'
                      : ''}
                  {v.removedUpstream && <span class="badge">removed upstream</span>}
                </td>
              </tr>
            )}
          />
        </section>
      )}

      <section aria-labelledby="h-properties">
        <h2 id="h-properties">Properties</h2>
        {p.properties.length === 0 ? (
          <p class="muted">
            {p.hasSchema ? 'The schema declares no properties.' : 'This version has no schema.'}
          </p>
        ) : (
          <Table
            id="properties"
            caption={`Schema properties of ${p.name} ${p.version.version}`}
            columns={['Name', 'Type', 'Default', 'Required', 'Description']}
            items={p.properties}
            row={(row) => (
              <tr>
                <th scope="row">
                  <code>{row.name}</code>
                </th>
                <td>{row.type}</td>
                <td>{row.default === null ? <span class="muted">—</span> : <code>{row.default}</code>}</td>
                <td>{row.required ? 'yes' : 'no'}</td>
                <td>{row.description}</td>
              </tr>
            )}
          />
        )}
      </section>

      {p.readme !== undefined && (
        <section aria-labelledby="h-readme">
          <h2 id="h-readme">README</h2>
          <div id="readme">
            <Markdown text={p.readme} />
          </div>
        </section>
      )}

      <RelationsSection
        relations={p.relations}
        name={p.name}
        all={templateUrl(p.registry, p.collection, p.name)}
      />

      <section aria-labelledby="h-example">
        <h2 id="h-example">example.yaml</h2>
        {p.example === undefined ? (
          <p class="muted">{p.version.hasExample ? 'Too large to show here; see Files.' : 'No example.'}</p>
        ) : (
          <pre>
            <code id="example">{p.example}</code>
          </pre>
        )}
      </section>

      <section aria-labelledby="h-files">
        <h2 id="h-files">Files</h2>
        <Table
          columns={['Path', 'Size (bytes)', 'sha256']}
          items={p.files}
          row={(f) => (
            <tr>
              <td>
                <a href={fileUrl(p.registry, p.collection, p.name, p.version.version, f.path)}>{f.path}</a>
              </td>
              <td class="num">{f.size}</td>
              <td>
                <code title={f.sha256}>{shortHash(f.sha256)}</code>
              </td>
            </tr>
          )}
        />
        <p class="muted">
          Version digest <code>{p.version.digest}</code>
          {p.exact || p.source.kind === 'local' ? '' : ` · registry commit ${shortHash(p.commit)}`} ·{' '}
          <a
            href={`/api/v1${templateUrl(p.registry, p.collection, p.name, p.version.version)}/archive.tar.gz`}
          >
            archive.tar.gz
          </a>
        </p>
      </section>

      <section aria-labelledby="h-findings">
        <h2 id="h-findings">Lint findings</h2>
        <Findings
          findings={p.findings}
          empty={`No lint findings for ${p.exact ? `${p.name} ${p.version.version}` : p.name}.`}
        />
      </section>
    </Layout>
  );
}

function splitName(registry: string, collection: string, template: string) {
  const [host = '', owner = '', repo = ''] = registry.split('/');
  return { host, owner, repo, collection, template };
}

/** Two version pickers; GET /compare redirects to the diff page. */
function CompareForm(props: { template: string; versions: string[]; from: string; to: string }) {
  const select = (id: string, label: string, selected: string) => (
    <label for={id}>
      {label}
      <select id={id} name={id}>
        {props.versions.map((v) => (
          <option value={v} selected={v === selected}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <form class="pick" action="/compare" method="get" aria-label="Compare versions">
      <input type="hidden" name="template" value={props.template} />
      {select('from', 'From version', props.from)}
      {select('to', 'To version', props.to)}
      <button type="submit">Compare</button>
    </form>
  );
}

export interface DiffPageProps {
  registry: string;
  collection: string;
  name: string;
  from: string;
  to: string;
  versions: string[];
  diff: VersionDiff;
}

export function DiffPage(p: DiffPageProps) {
  const { files, unchanged, properties } = p.diff;
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
          {`${files.filter((f) => f.status === 'added').length} added, ${files.filter((f) => f.status === 'removed').length} removed, ${files.filter((f) => f.status === 'changed').length} changed, ${unchanged} unchanged`}
        </p>
        {files.length > 0 && (
          <Table
            id="file-changes"
            columns={['Path', 'Change', 'Size (bytes)']}
            items={files}
            row={(f) => (
              <tr>
                <th scope="row">
                  <a href={`#file-${encodeURIComponent(f.path)}`}>{f.path}</a>
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
                  <code>{c.name}</code>
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
          <section aria-label={f.path} id={`file-${encodeURIComponent(f.path)}`}>
            <h3>
              <code>{f.path}</code> <span class="badge">{f.status}</span>
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

// ---- registries -------------------------------------------------------------------------------

function SyncOutcome(props: { info: RegistryInfo }) {
  const { status, error } = props.info.sync;
  return (
    <span
      class={status === 'failed' || status === 'interrupted' ? 'error' : undefined}
      title={error ?? undefined}
    >
      {status}
    </span>
  );
}

/** A mirrored registry's upstream: `ok`, `unreachable since T`, …, and how stale the data may be. */
function UpstreamState(props: { upstream: UpstreamInfo }) {
  const u = props.upstream;
  const state =
    u.state === 'ok'
      ? 'ok'
      : u.state === 'rate-limited'
        ? `rate-limited until ${u.until ?? '?'}`
        : `${u.state}${u.since ? ` since ${u.since}` : ''}${u.detail ? ` (${u.detail})` : ''}`;
  return (
    <span class={u.state === 'ok' ? undefined : 'error'} title={`upstream ${u.url}`}>
      {`upstream ${state}`}
      {u.staleSeconds !== null && <span class="muted">{`, data ${u.staleSeconds} s old`}</span>}
    </span>
  );
}

function orDash(value: number | string | null): Child {
  return value === null ? <span class="muted">—</span> : String(value);
}

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

export function RegistryPage(props: {
  info: RegistryInfo;
  templates: RegistryTemplateRow[];
  /** A directory on the server's disk: its path is shown to admins only. */
  local: boolean;
  showLocalPath: boolean;
}) {
  const r = props.info;
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
        {props.templates.length === 0 ? (
          <p class="muted">No templates indexed.</p>
        ) : (
          <Table
            columns={['Template', 'Collection', 'Latest', 'Title']}
            items={props.templates}
            row={(t) => (
              <tr>
                <td>
                  <a href={templateUrl(r.name, t.collection, t.name)}>{t.name}</a>
                </td>
                <td>{collectionLabel(t.collection)}</td>
                <td>{orDash(t.latestVersion)}</td>
                <td>{t.title ?? ''}</td>
              </tr>
            )}
          />
        )}
      </section>
    </Layout>
  );
}

// ---- errors -----------------------------------------------------------------------------------

export interface Suggestion {
  label: string;
  href: string;
}

export function ErrorPage(props: {
  status: number;
  title: string;
  message: string;
  listTitle?: string;
  list?: Suggestion[];
  /** The nearest thing that exists. */
  didYouMean?: Suggestion | undefined;
}) {
  return (
    <Layout title={props.title}>
      <h1>{props.title}</h1>
      <p id="message">{props.message}</p>
      {props.didYouMean && (
        <p id="did-you-mean">
          Did you mean <a href={props.didYouMean.href}>{props.didYouMean.label}</a>?
        </p>
      )}
      {props.list && props.list.length > 0 && (
        <section aria-labelledby="h-available">
          <h2 id="h-available">{props.listTitle ?? 'What exists'}</h2>
          <ul id="available">
            {props.list.map((s) => (
              <li>
                <a href={s.href}>{s.label}</a>
              </li>
            ))}
          </ul>
        </section>
      )}
      <p>
        <a href="/search">Search all templates</a>
      </p>
    </Layout>
  );
}

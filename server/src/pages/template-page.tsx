/**
 * A template's page (one version of it, its files, properties and relations).
 * Plain functions of already-read data to JSX (docs/pages.md): every value from the store goes in
 * as text or an attribute, which hono/jsx escapes; nothing from data is ever raw HTML.
 */

import { formatTemplateName, tryParseVersion } from '../../../client/src/reference/index.js';
import { printable } from '../../../client/src/registry/index.js';
import type { QuarantineInfo } from '../../../client/src/wire/registry-api.js';
import type { FileInfo } from '../api/shapes.js';
import type { FindingRow, RowsPage, VersionRow } from '../store/contract.js';
import { CopyButton, Layout } from './layout.js';
import { Markdown } from './markdown.js';
import {
  CompareForm,
  collectionLabel,
  Findings,
  floatNote,
  PageLinks,
  pagesOf,
  ROWS_PER_PAGE,
  referenceFor,
  shortHash,
  splitName,
  Table,
  Time,
} from './pieces.js';
import type { PropertyRow } from './properties.js';
import { fileUrl, registryUrl, searchUrl, templateUrl } from './urls.js';
import { minimalConfig, type SourceLink, useCommands } from './use-it.js';

export interface TemplatePageProps {
  registry: string;
  commit: string | null;
  collection: string;
  name: string;
  /** Set on the exact-version page. */
  exact: boolean;
  version: VersionRow;
  latestVersion: string | null;
  /** The versions this page lists (template page only: one ROWS_PER_PAGE page, `versionsPage`) and how many. */
  versions: RowsPage<VersionRow>;
  /** Which page of the versions this is, from 1. */
  versionsPage: number;
  title: string | null;
  /** Markdown. */
  description: string | null;
  /** The schema's `info.author` and `info.license`, when they are text. */
  author: string | null;
  license: string | null;
  /** The version directory at its source. */
  source: SourceLink;
  /** This server's origin as the request reached it, for the commands of "Use it". */
  serverUrl: string;
  /** The version's README.md (Markdown), when it has one small enough to show. */
  readme: string | undefined;
  relations: Relations;
  properties: PropertyRow[];
  hasSchema: boolean;
  example: string | undefined;
  /** Every file of the version: the page lists one FILES_PER_PAGE slice of them, `filesPage`. */
  files: FileInfo[];
  /** Which slice of `files` this page lists, from 1 (docs/pages.md, "Files"). */
  filesPage: number;
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
  /** True when the version's text files were more than one page reads for "uses". */
  usesIncomplete: boolean;
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

function UseIt(props: { name: string; reference: string; properties: PropertyRow[]; serverUrl: string }) {
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
          <code id="use-commands">{useCommands(props.reference, props.serverUrl)}</code>
        </pre>
        <CopyButton target="use-commands" label="Copy the commands" />
      </div>
    </section>
  );
}

/** How many files one page lists; the rest are on the pages `?files=2`, `?files=3`, … */
export const FILES_PER_PAGE = 100;
/** The most directories the summary of a large file list names. */
const MAX_SUMMARY_DIRECTORIES = 20;

/** How many pages of files `count` files take (at least one). */
export function filePages(count: number): number {
  return pagesOf(count, FILES_PER_PAGE);
}

function FileList(props: { p: TemplatePageProps }) {
  const { p } = props;
  const all = p.files;
  const pages = filePages(all.length);
  const first = (p.filesPage - 1) * FILES_PER_PAGE;
  const shown = all.slice(first, first + FILES_PER_PAGE);
  const base = templateUrl(p.registry, p.collection, p.name, p.exact ? p.version.version : undefined);
  const pageUrl = (n: number) => `${base}${n > 1 ? `?files=${n}` : ''}#h-files`;
  let bytes = 0;
  const directories = new Map<string, { files: number; bytes: number }>();
  for (const f of all) {
    bytes += f.size;
    const slash = f.path.indexOf('/');
    const top = slash < 0 ? '' : f.path.slice(0, slash + 1);
    const d = directories.get(top) ?? { files: 0, bytes: 0 };
    d.files++;
    d.bytes += f.size;
    directories.set(top, d);
  }
  const summary = [...directories].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return (
    <>
      <p class="muted" id="files-summary">
        {`${all.length} file${all.length === 1 ? '' : 's'}, ${bytes} bytes in all`}
        {pages > 1 ? `; ${first + 1}–${first + shown.length} shown, ${FILES_PER_PAGE} a page` : ''}
      </p>
      {pages > 1 && (
        <ul id="files-by-directory" aria-label="Files by directory">
          {summary.slice(0, MAX_SUMMARY_DIRECTORIES).map(([dir, d]) => (
            <li>
              <code>{dir === '' ? '(top level)' : printable(dir)}</code>
              <span class="muted">{` ${d.files} file${d.files === 1 ? '' : 's'}, ${d.bytes} bytes`}</span>
            </li>
          ))}
          {summary.length > MAX_SUMMARY_DIRECTORIES && (
            <li class="muted">{`and ${summary.length - MAX_SUMMARY_DIRECTORIES} more directories`}</li>
          )}
        </ul>
      )}
      <Table
        id="files"
        columns={['Path', 'Size (bytes)', 'sha256']}
        items={shown}
        row={(f) => (
          <tr>
            <td>
              <a href={fileUrl(p.registry, p.collection, p.name, p.version.version, f.path)}>
                {printable(f.path)}
              </a>
            </td>
            <td class="num">{f.size}</td>
            <td>
              <code title={f.sha256}>{shortHash(f.sha256)}</code>
            </td>
          </tr>
        )}
      />
      <PageLinks label="Pages of files" what="files" page={p.filesPage} pages={pages} url={pageUrl} />
    </>
  );
}

function RelationsSection(props: { relations: Relations; name: string; all: string }) {
  const { uses, usesIncomplete, usedBy, usedByIncomplete } = props.relations;
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
      {usesIncomplete && (
        <p class="muted" id="uses-partial">
          This version's text files are too large to read completely here; this list may be partial.
        </p>
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
  const versionPages = pagesOf(p.versions.total);
  const shownVersions = p.versions.rows;
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
          first seen ({changedFilesText(p.quarantined.changedFiles.map((f) => f.path))}; new digest{' '}
          <code>{shortHash(p.quarantined.newDigest)}</code>). The first-seen content is shown and served until
          an administrator accepts the change.
        </p>
      )}
      {p.title && (
        <p>
          <strong id="title">{printable(p.title)}</strong>
        </p>
      )}
      {p.description && (
        <div id="description">
          <Markdown text={p.description} />
        </div>
      )}
      <dl class="facts" id="about">
        <dt>Author</dt>
        <dd>{p.author === null ? <span class="muted">not given</span> : printable(p.author)}</dd>
        <dt>License</dt>
        <dd>{p.license === null ? <span class="muted">not given</span> : printable(p.license)}</dd>
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

      <UseIt name={p.name} reference={reference} properties={p.properties} serverUrl={p.serverUrl} />

      {p.exact ? (
        <p>
          <a href={templateUrl(p.registry, p.collection, p.name)}>{`All versions of ${p.name}`}</a>
        </p>
      ) : (
        <section aria-labelledby="h-versions">
          <h2 id="h-versions">Versions</h2>
          {shownVersions.length > 1 && (
            <CompareForm
              template={templateUrl(p.registry, p.collection, p.name).replace(/^\/templates\//, '')}
              versions={shownVersions.map((v) => v.version)}
              from={shownVersions[1]!.version}
              to={shownVersions[0]!.version}
            />
          )}
          {versionPages > 1 && (
            <p class="muted" id="versions-summary">
              {`${p.versions.total} versions, newest first; ${ROWS_PER_PAGE} a page`}
            </p>
          )}
          <Table
            id="versions"
            columns={['Version', 'Kind', 'Digest', 'First seen', 'Note']}
            items={shownVersions}
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
          <PageLinks
            label="Pages of versions"
            what="versions"
            page={p.versionsPage}
            pages={versionPages}
            url={(n) =>
              `${templateUrl(p.registry, p.collection, p.name)}${n > 1 ? `?versions=${n}` : ''}#h-versions`
            }
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
                  <code>{printable(row.name)}</code>
                </th>
                <td>{printable(row.type)}</td>
                <td>
                  {row.default === null ? (
                    <span class="muted">—</span>
                  ) : (
                    <code>{printable(row.default)}</code>
                  )}
                </td>
                <td>{row.required ? 'yes' : 'no'}</td>
                {/* Markdown, as the template's description (docs/pages.md, "Properties table"). */}
                <td>{row.description && <Markdown text={row.description} topLevel={4} />}</td>
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
        <FileList p={p} />
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

/** How many changed files of a quarantined version the page names (up to 1,000 may have changed). */
const QUARANTINE_FILES_SHOWN = 10;

export function changedFilesText(paths: readonly string[]): string {
  if (paths.length === 0) return 'files unknown';
  const shown = paths.slice(0, QUARANTINE_FILES_SHOWN).join(', ');
  return paths.length > QUARANTINE_FILES_SHOWN
    ? `${shown} and ${paths.length - QUARANTINE_FILES_SHOWN} more files`
    : shown;
}

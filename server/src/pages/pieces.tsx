/**
 * Pieces more than one page shows: tables, findings, times, hashes, the compare form, sync
 * and upstream states.
 * Plain functions of already-read data to JSX (docs/pages.md): every value from the store goes in
 * as text or an attribute, which hono/jsx escapes; nothing from data is ever raw HTML.
 */

import { type Child, cloneElement, isValidElement } from 'hono/jsx';
import { tryParseVersion } from '../../../client/src/reference/index.js';
import { printable } from '../../../client/src/registry/index.js';
import type { RegistryInfo, UpstreamInfo } from '../api/shapes.js';
import type { FindingRow } from '../store/contract.js';

export function referenceFor(name: string, version: string): string {
  const v = tryParseVersion(version);
  if (!v) return `${name}:${version}`;
  if (v.prerelease.length > 0) return `${name}:${version.replace(/\+.*$/, '')}`;
  return `${name}:v${v.major}.${v.minor}`;
}

export function floatNote(version: string): string {
  const v = tryParseVersion(version);
  if (!v) return '';
  if (v.prerelease.length > 0) {
    return `Floats to later pre-releases of v${v.major}.${v.minor}.${v.patch} and to its release.`;
  }
  return `Floats to the newest patch of v${v.major}.${v.minor}.`;
}

export function collectionLabel(collection: string): string {
  return collection === '' ? '(root collection)' : collection;
}

export function Time(props: { iso: string | null }) {
  if (!props.iso) return <span class="muted">never</span>;
  return <time datetime={props.iso}>{`${props.iso.replace('T', ' ').slice(0, 19)} UTC`}</time>;
}

export function shortHash(text: string | null, length = 12): string {
  if (!text) return '';
  return text.replace(/^sha256:/, '').slice(0, length);
}

/**
 * `row` (a `<tr>`) with each cell labelled by its column's name (`data-label`): on a narrow screen
 * the rows are stacked and each cell shows its label (docs/pages.md, "Phones").
 */
function labelled(row: Child, columns: readonly string[]): Child {
  if (!isValidElement(row) || row.tag !== 'tr') return row;
  let column = 0;
  const cells = ([] as Child[])
    .concat(...(row.children as Child[]))
    .map((cell) =>
      isValidElement(cell) && (cell.tag === 'td' || cell.tag === 'th')
        ? cloneElement(cell, { 'data-label': columns[column++] ?? '' })
        : cell,
    );
  return cloneElement(row, {}, ...cells);
}

/**
 * The one table markup of the pages: column headers (`scope="col"`), an optional caption, and a
 * row per item as `row` renders it, its cells labelled for narrow screens.
 */
export function Table<T>(props: {
  id?: string;
  caption?: string;
  columns: readonly string[];
  items: readonly T[];
  row: (item: T) => Child;
}) {
  // In a box of its own that scrolls sideways if it must, so the page never does (docs/pages.md, "Phones").
  return (
    <div class="table">
      <table id={props.id}>
        {props.caption !== undefined && <caption class="muted">{props.caption}</caption>}
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col">{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>{props.items.map((item) => labelled(props.row(item), props.columns))}</tbody>
      </table>
    </div>
  );
}

/** How many rows one page of a long list shows (versions, templates); files have their own. */
export const ROWS_PER_PAGE = 100;

/** How many pages of `per` rows `count` rows take (at least one). */
export function pagesOf(count: number, per: number = ROWS_PER_PAGE): number {
  return Math.max(1, Math.ceil(count / per));
}

/**
 * Previous / Next links between the pages of a long list (docs/pages.md, "Files"); nothing when
 * there is one page. `url(n)` is page n's address.
 */
export function PageLinks(props: {
  label: string;
  what: string;
  page: number;
  pages: number;
  url: (page: number) => string;
}) {
  const { page, pages } = props;
  if (pages <= 1) return null;
  return (
    <nav class="pages" aria-label={props.label}>
      {page > 1 ? (
        <a href={props.url(page - 1)} rel="prev">
          {`← Previous ${props.what}`}
        </a>
      ) : (
        <span class="muted">{`← Previous ${props.what}`}</span>
      )}
      <span>{`Page ${page} of ${pages}`}</span>
      {page < pages ? (
        <a href={props.url(page + 1)} rel="next">
          {`Next ${props.what} →`}
        </a>
      ) : (
        <span class="muted">{`Next ${props.what} →`}</span>
      )}
    </nav>
  );
}

/** The most lint findings a page lists; the API's registry answer has every one. */
const MAX_FINDINGS_SHOWN = 500;

export function Findings(props: { findings: FindingRow[]; empty: string }) {
  if (props.findings.length === 0) return <p class="muted">{props.empty}</p>;
  const more = props.findings.length - MAX_FINDINGS_SHOWN;
  return (
    <>
      <Table
        columns={['Severity', 'Code', 'Path', 'Message']}
        items={props.findings.slice(0, MAX_FINDINGS_SHOWN)}
        row={(f) => (
          <tr>
            <td class={f.severity === 'error' ? 'error' : 'warning'}>{f.severity}</td>
            <td>
              <code>{f.code}</code>
            </td>
            {/* Names from a tree, escaped (docs/registry-layout.md, "Paths and names"). */}
            <td>
              <code>{printable(f.path)}</code>
            </td>
            <td>{printable(f.message)}</td>
          </tr>
        )}
      />
      {more > 0 && (
        <p class="muted">{`and ${more} more findings; the API's answer for the registry lists every one`}</p>
      )}
    </>
  );
}

export function splitName(registry: string, collection: string, template: string) {
  const [host = '', owner = '', repo = ''] = registry.split('/');
  return { host, owner, repo, collection, template };
}

/** Two version pickers; GET /compare redirects to the diff page. */
export function CompareForm(props: { template: string; versions: string[]; from: string; to: string }) {
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

export function SyncOutcome(props: { info: RegistryInfo }) {
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
export function UpstreamState(props: { upstream: UpstreamInfo }) {
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

export function orDash(value: number | string | null): Child {
  return value === null ? <span class="muted">—</span> : String(value);
}

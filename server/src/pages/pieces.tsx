/**
 * Pieces more than one page shows: tables, findings, times, hashes, the compare form, sync
 * and upstream states.
 * Plain functions of already-read data to JSX (docs/pages.md): every value from the store goes in
 * as text or an attribute, which hono/jsx escapes; nothing from data is ever raw HTML.
 */

import type { Child } from 'hono/jsx';
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
 * The one table markup of the pages: column headers (`scope="col"`), an optional caption, and a
 * row per item as `row` renders it.
 */
export function Table<T>(props: {
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

export function Findings(props: { findings: FindingRow[]; empty: string }) {
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
          {/* Names from a tree, escaped (docs/registry-layout.md, "Paths and names"). */}
          <td>
            <code>{printable(f.path)}</code>
          </td>
          <td>{printable(f.message)}</td>
        </tr>
      )}
    />
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

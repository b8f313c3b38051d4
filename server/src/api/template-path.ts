/**
 * The one reader of template paths, for the API (`/api/v1/templates/…`) and the pages
 * (`/templates/…`) alike (docs/server.md, "Template paths"):
 * `{host}/{owner}/{repo}/[{collection}/]{template}[/versions/{version}[/{rest…}]]`.
 * Segments are percent-decoded (an undecodable one is kept as written), the host is lower-cased,
 * and a leading `=` of the version (the exact-version marker) is dropped. `versions` is read as
 * the marker at the fifth segment first, then at the sixth, and only when a version follows it.
 */
import { DmError } from '../../../client/src/error.js';

export interface TemplatePath {
  host: string;
  owner: string;
  repo: string;
  /** '' for the root collection. */
  collection: string;
  template: string;
  /** After `versions/`: the version, without a leading `=`. */
  version?: string;
  /** What follows the version (`files/<path>`, `schema`, `archive.tar.gz`); empty without one. */
  rest: string[];
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Parses the part of a URL path after `templates/`; throws NOT_FOUND (404) when it is not one. */
export function parseTemplatePath(raw: string): TemplatePath {
  const segments = raw
    .split('/')
    .filter((s) => s !== '')
    .map(decode);
  const at =
    segments[4] === 'versions' && segments.length >= 6
      ? 4
      : segments[5] === 'versions' && segments.length >= 7
        ? 5
        : -1;
  const head = at === -1 ? segments : segments.slice(0, at);
  if (head.length !== 4 && head.length !== 5) {
    throw new DmError(
      'NOT_FOUND',
      `no template at templates/${raw}; expected host/owner/repo/[collection/]template[/versions/version]`,
      { category: 'not-found', details: { path: raw } },
    );
  }
  const [host = '', owner = '', repo = ''] = head;
  const out: TemplatePath = {
    host: host.toLowerCase(),
    owner,
    repo,
    collection: head.length === 5 ? (head[3] ?? '') : '',
    template: head.at(-1) ?? '',
    rest: [],
  };
  if (at !== -1) {
    out.version = (segments[at + 1] ?? '').replace(/^=/, '');
    out.rest = segments.slice(at + 2);
  }
  return out;
}

/**
 * `GET …/versions/{version}/files?limit=&continue=` (docs/server.md, "HTTP API"): a version's files
 * a page at a time, in path order (UTF-16 code units, the order JavaScript compares strings in).
 * `continue` is opaque to clients: the last path of the page before, base64url, so a page is found
 * by position in the sorted list whatever the page size was.
 */
import { DmError } from '../../../client/src/error.js';
import type { FileInfo, VersionFileList } from './shapes.js';

/** Files of a page when `limit` is not given, and the most one page may hold. */
export const FILE_PAGE_DEFAULT = 100;
export const FILE_PAGE_MAX = 1000;

export function filePage(
  files: readonly FileInfo[],
  limit: number,
  token: string | undefined,
): VersionFileList {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  let from = 0;
  if (token !== undefined) {
    const after = Buffer.from(token, 'base64url').toString('utf8');
    if (token === '' || Buffer.from(after, 'utf8').toString('base64url') !== token) {
      throw new DmError(
        'INVALID_PARAMETER',
        `continue '${token.slice(0, 100)}' is not a token this server gave`,
        {
          category: 'invalid-input',
          details: { parameter: 'continue' },
        },
      );
    }
    from = sorted.findIndex((f) => f.path > after);
    if (from < 0) from = sorted.length;
  }
  const page = sorted.slice(from, from + limit);
  const more = from + limit < sorted.length;
  return {
    total: sorted.length,
    files: page.map((f) => ({ path: f.path, size: f.size, sha256: f.sha256 })),
    ...(more ? { continue: Buffer.from(page.at(-1)!.path, 'utf8').toString('base64url') } : {}),
  };
}

/**
 * A plain directory as a source (e.g. `registry-fixtures/` inside this repository, for `npm start`
 * and local development): the files on disk, read fresh on every sync, exactly as the client's
 * `--registry-dir` reads them (client/src/registry/read-directory-tree.ts: `.git` skipped, a
 * symbolic link is a file whose content is its target, as git stores it), so digests agree.
 * It has no commit: what the store keeps in the commit's place is a fingerprint of the tree
 * (`dir-` and a digest of every path with its git blob id), so an unchanged directory re-syncs as
 * `unchanged`. Answers show no commit for it (`commitShown`).
 */
import { createHash } from 'node:crypto';
import { DmError } from '../../../client/src/error.js';
import type { TreeEntry } from '../../../client/src/registry/index.js';
import { createDirectoryReader, pathProblem, readDirectoryTree } from '../../../client/src/registry/index.js';
import {
  DEFAULT_SOURCE_LIMITS,
  gitBlobSha,
  type OpenOptions,
  type OpenResult,
  type Source,
} from '../../../client/src/source/index.js';

/** What a directory's fingerprint starts with: never a git commit, which is hex. */
const FINGERPRINT_PREFIX = 'dir-';

/**
 * A registry's commit as answers show it (docs/server.md, "HTTP API"): a plain directory's
 * fingerprint is not a commit, so it is shown as `''` (no commit, as the client's own resolver
 * records a directory registry in dm.lock); `null` stays "not synced yet".
 */
export function commitShown(commit: string | null): string | null {
  return commit?.startsWith(FINGERPRINT_PREFIX) ? '' : commit;
}

export interface DirectorySourceOptions {
  directory: string;
}

export class DirectorySource implements Source {
  readonly kind = 'directory' as const;
  readonly description: string;

  constructor(private readonly options: DirectorySourceOptions) {
    this.description = `directory ${options.directory}`;
  }

  async open(options: OpenOptions): Promise<OpenResult> {
    // Reading a directory costs no request of any API: the sync's meter stays at 0.
    const tree = await readDirectoryTree(this.options.directory);
    const reader = createDirectoryReader(this.options.directory);
    const files = new Map<string, Buffer>();
    const entries: TreeEntry[] = [];
    const hash = createHash('sha256');
    const limits = DEFAULT_SOURCE_LIMITS;
    let total = 0;
    for (const e of [...tree.entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
      if (e.type !== 'blob') {
        entries.push(e);
        continue;
      }
      // A name the content rule refuses (a backslash, a control character) is not read: the
      // scanner reports it as a finding and indexes the rest, as a git tree's (docs/registry-layout.md).
      if (pathProblem(e.path) !== undefined) {
        entries.push(e);
        hash.update(`${e.path}\0refused\n`);
        continue;
      }
      // Sizes bounded as the files are read (a directory has no tree with sizes beforehand).
      if (e.size !== undefined && e.size > limits.maxFileBytes) {
        throw new DmError(
          'SOURCE_TOO_LARGE',
          `${this.description}: '${e.path}' is ${e.size} bytes, more than ${limits.maxFileBytes}`,
          { category: 'limit' },
        );
      }
      const content = Buffer.from(await reader(e.path));
      total += content.length;
      if (content.length > limits.maxFileBytes || total > limits.maxTotalBytes) {
        throw new DmError(
          'SOURCE_TOO_LARGE',
          `${this.description}: more than ${limits.maxTotalBytes} bytes in all, or a file over ${limits.maxFileBytes}`,
          { category: 'limit' },
        );
      }
      const gitSha = gitBlobSha(content);
      files.set(e.path, content);
      entries.push({ path: e.path, type: 'blob', size: content.length, gitSha });
      hash.update(`${e.path}\0${gitSha}\n`);
    }
    const commit = `${FINGERPRINT_PREFIX}${hash.digest('hex').slice(0, 40)}`;
    if (commit === options.commit) return { status: 'unchanged', commit };
    const read = async (wanted: readonly TreeEntry[]): Promise<Map<string, Buffer>> => {
      const out = new Map<string, Buffer>();
      for (const e of wanted) {
        const content = files.get(e.path);
        if (content) out.set(e.path, content);
      }
      return out;
    };
    return { status: 'changed', commit, etag: null, entries, read };
  }
}

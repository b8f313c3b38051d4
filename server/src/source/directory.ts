/**
 * A plain directory as a source (e.g. `registry-fixtures/` inside this repository, for `npm start`
 * and local development): the files on disk, read fresh on every sync. Its "commit" is a digest of
 * the tree (every path with its git blob id), so an unchanged directory re-syncs as `unchanged`.
 * Symbolic links are not followed; `.git` is ignored.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DmError } from '../../../client/src/error.js';
import type { TreeEntry } from '../../../client/src/registry/types.js';
import { treeFromFiles } from './github.js';
import type { OpenOptions, OpenResult, Source } from './source.js';

export interface DirectorySourceOptions {
  directory: string;
  /** Largest file read, bytes (default 32 MiB). */
  maxFileBytes?: number;
}

export class DirectorySource implements Source {
  readonly kind = 'directory' as const;
  readonly description: string;

  constructor(private readonly options: DirectorySourceOptions) {
    this.description = `directory ${options.directory}`;
  }

  private async walk(dir: string, prefix: string, out: Map<string, Buffer>): Promise<void> {
    const max = this.options.maxFileBytes ?? 32 * 1024 * 1024;
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      if (name === '.git') continue;
      const full = join(dir, name);
      const path = prefix ? `${prefix}/${name}` : name;
      const stat = await lstat(full);
      if (stat.isDirectory()) await this.walk(full, path, out);
      else if (stat.isFile() && stat.size <= max) out.set(path, await readFile(full));
    }
  }

  async open(options: OpenOptions): Promise<OpenResult> {
    options.meter.requests++;
    const files = new Map<string, Buffer>();
    try {
      await this.walk(this.options.directory, '', files);
    } catch (error) {
      throw new DmError(
        'SOURCE_NOT_FOUND',
        `cannot read the directory ${this.options.directory}: ${(error as Error).message}`,
        {
          category: 'not-found',
        },
      );
    }
    const entries: TreeEntry[] = treeFromFiles(files);
    const hash = createHash('sha256');
    for (const e of entries) if (e.type === 'blob') hash.update(`${e.path}\0${e.gitSha}\n`);
    const commit = `dir-${hash.digest('hex').slice(0, 40)}`;
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

/**
 * A registry on disk as the scanner sees a git tree (docs/registry-layout.md): every directory and
 * file below `dir` as a TreeEntry, plus the text of `registry.yaml`. `.git` is skipped at every
 * level. Symbolic links are not followed: like git, a link is a file whose content is its target,
 * so digests agree with an index built from the same repository's git tree.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';
import { DmError } from '../error.js';
import { pathProblem } from './content-names.js';
import type { ContentReader } from './digest.js';
import { REGISTRY_YAML } from './registry-yaml.js';
import type { TreeEntry } from './types.js';

export interface ReadDirectoryTreeOptions {
  /** Paths (relative, `/`-separated) not to read, with everything below them. */
  exclude?: (path: string) => boolean;
  /** Largest number of entries read before giving up. Default 1,000,000. */
  maxEntries?: number;
}

export interface DirectoryTree {
  entries: TreeEntry[];
  /** The text of `registry.yaml` at the root, when there is one. */
  registryYaml: string | undefined;
}

const DEFAULT_MAX_ENTRIES = 1_000_000;

function notFound(dir: string): DmError {
  return new DmError('REGISTRY_DIR_NOT_FOUND', `registry directory '${dir}' does not exist`, {
    category: 'not-found',
    details: { path: dir },
  });
}

/** Checks that `dir` is a directory, with errors that name it. */
export async function assertDirectory(dir: string): Promise<void> {
  let stats: Awaited<ReturnType<typeof lstat>>;
  try {
    stats = await lstat(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(dir);
    throw new DmError('REGISTRY_DIR_UNREADABLE', `cannot read registry directory '${dir}'`, {
      details: { path: dir },
      cause: error,
    });
  }
  if (stats.isSymbolicLink()) {
    // The root itself may be a link; what it points to must be a directory.
    stats = await stat(dir).catch(() => {
      throw notFound(dir);
    });
  }
  if (!stats.isDirectory()) {
    throw new DmError('NOT_A_DIRECTORY', `'${dir}' is not a directory`, {
      category: 'usage',
      details: { path: dir },
      hint: 'give the root directory of a registry (it holds template directories, and maybe registry.yaml)',
    });
  }
}

/** Reads the tree below `dir`. Throws REGISTRY_DIR_NOT_FOUND when it does not exist. */
export async function readDirectoryTree(
  dir: string,
  options: ReadDirectoryTreeOptions = {},
): Promise<DirectoryTree> {
  await assertDirectory(dir);
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const entries: TreeEntry[] = [];
  const walk = async (relative: string): Promise<void> => {
    let children: Dirent[];
    try {
      children = await readdir(relative === '' ? dir : join(dir, ...relative.split('/')), {
        withFileTypes: true,
      });
    } catch (error) {
      throw new DmError('REGISTRY_DIR_UNREADABLE', `cannot read directory '${join(dir, relative)}'`, {
        details: { path: join(dir, relative) },
        cause: error,
      });
    }
    children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const child of children) {
      if (child.name === '.git') continue;
      const path = relative === '' ? child.name : `${relative}/${child.name}`;
      if (options.exclude?.(path)) continue;
      if (entries.length >= maxEntries) {
        throw new DmError(
          'REGISTRY_TOO_LARGE',
          `'${dir}' has more than ${maxEntries} files and directories`,
          {
            category: 'limit',
          },
        );
      }
      if (child.isDirectory()) {
        entries.push({ path, type: 'tree' });
        await walk(path);
      } else if (child.isFile() || child.isSymbolicLink()) {
        const stats = await lstat(join(dir, ...path.split('/')));
        entries.push({ path, type: 'blob', size: stats.size });
      }
      // Sockets, FIFOs and devices are not content: skipped.
    }
  };
  await walk('');
  let registryYaml: string | undefined;
  if (entries.some((e) => e.path === REGISTRY_YAML && e.type === 'blob')) {
    registryYaml = Buffer.from(await createDirectoryReader(dir)(REGISTRY_YAML)).toString('utf8');
  }
  return { entries, registryYaml };
}

/**
 * Reads files of a registry on disk by their path from its root, refusing paths that leave it.
 * A symbolic link reads as its target (as git stores it), never as the file it points to.
 */
export function createDirectoryReader(dir: string): ContentReader {
  return async (repoPath: string) => {
    const segments = repoPath.split('/');
    // The content rule (content-names.ts), and no platform separator inside a segment.
    if (
      pathProblem(repoPath) !== undefined ||
      isAbsolute(repoPath) ||
      segments.some((s) => s.includes(sep))
    ) {
      throw new DmError('INVALID_PATH', `'${repoPath}' is not a path inside the registry`, {
        category: 'invalid-input',
      });
    }
    const full = join(dir, ...segments);
    try {
      const stats = await lstat(full);
      if (stats.isSymbolicLink()) return await readlink(full, { encoding: 'buffer' });
      return await readFile(full);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new DmError('FILE_NOT_FOUND', `'${repoPath}' does not exist in registry '${dir}'`, {
          category: 'not-found',
        });
      }
      throw error;
    }
  };
}

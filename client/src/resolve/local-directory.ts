/**
 * A registry on disk (`--registry-dir dir[=name]`): the working tree of a registry repository,
 * read as it is (uncommitted changes included), so authors can resolve and expand before pushing.
 * Its name — the `host/owner/repo` that references use — is `=name` if given, else the `name:`
 * key of its `registry.yaml`, else the default registry (`--registry`).
 */
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { DmError } from '../error.js';
import { parseDefaultRegistry, type RegistryName } from '../reference/reference.js';
import { innerDirectory } from '../registry/inner-directory.js';
import {
  assertDirectory,
  createDirectoryReader,
  readDirectoryTree,
} from '../registry/read-directory-tree.js';
import { parseRegistryYaml } from '../registry/registry-yaml.js';
import { scanRegistryTree } from '../registry/scan-tree.js';
import { SnapshotResolver } from './snapshot-resolver.js';

export interface RegistryDirectory {
  dir: string;
  registry: RegistryName;
}

/** Parses `dir[=host/owner/repo]`. */
export function parseRegistryDirFlag(flag: string): { dir: string; name: string | undefined } {
  const eq = flag.lastIndexOf('=');
  return eq > 0 ? { dir: flag.slice(0, eq), name: flag.slice(eq + 1) } : { dir: flag, name: undefined };
}

/** The name `registry.yaml` declares (`name: github.com/owner/repo`), if a sound one. */
export async function declaredRegistryName(dir: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, 'registry.yaml'), 'utf8');
  } catch {
    return undefined;
  }
  return parseRegistryYaml(text).name; // a broken registry.yaml is lint's to report; here it means "no name"
}

/**
 * The name an unnamed registry directory gets when it is the only one and no default registry is
 * set: a reserved host (`.invalid` never resolves), so short references work against it.
 */
export function localRegistryName(dir: string): string {
  const repo =
    basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'registry';
  return `local.invalid/dir/${repo}`;
}

export async function nameRegistryDirectory(
  flag: string,
  defaultRegistry: string | undefined,
  options: { only?: boolean } = {},
): Promise<RegistryDirectory> {
  const { dir, name } = parseRegistryDirFlag(flag);
  // Checked before anything is resolved: a typo is said even when dm.lock could answer without it.
  await assertDirectory(dir);
  const inner = innerDirectory(dir);
  if (inner) {
    throw new DmError(
      'NOT_A_REGISTRY_ROOT',
      `${dir} is ${inner.said}, not a registry root: --registry-dir names the directory that holds <template>/<version>/ directories`,
      { hint: `--registry-dir ${inner.root}` },
    );
  }
  const chosen =
    name ??
    (await declaredRegistryName(dir)) ??
    defaultRegistry ??
    (options.only ? localRegistryName(dir) : undefined);
  if (!chosen) {
    throw new DmError(
      'UNNAMED_REGISTRY_DIR',
      `registry directory '${dir}' has no name for references to use`,
      {
        category: 'usage',
        hint: `write --registry-dir ${dir}=github.com/<owner>/<repo>, add 'name: github.com/<owner>/<repo>' to its registry.yaml, or pass --registry`,
      },
    );
  }
  const parsed = parseDefaultRegistry(chosen);
  return { dir, registry: { host: parsed.host, owner: parsed.owner, repo: parsed.repo } };
}

export function localDirectoryResolver(directory: RegistryDirectory): SnapshotResolver {
  return new SnapshotResolver({
    name: `registry directory ${directory.dir}`,
    registry: directory.registry,
    load: async () => {
      const tree = await readDirectoryTree(directory.dir);
      const scan = scanRegistryTree(tree.entries, { registryYaml: tree.registryYaml });
      const read = createDirectoryReader(directory.dir);
      return { commit: '', scan, read: async (p) => read(p) };
    },
  });
}

export function describeDirectory(directory: RegistryDirectory): string {
  return `${basename(directory.dir)} (${directory.registry.host}/${directory.registry.owner}/${directory.registry.repo})`;
}

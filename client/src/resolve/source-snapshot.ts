/**
 * Adapts a registry source (GitHub, git; client/src/source/) to the resolver's snapshot: one open
 * (commit + tree), a scan, and the content read in one batch.
 */

import { scanRegistryTree } from '../registry/scan-tree.js';
import type { Snapshot, Source } from '../source/source.js';
import type { RegistrySnapshot } from './snapshot-resolver.js';

export async function snapshotFromSource(source: Source): Promise<RegistrySnapshot> {
  const { createMeter } = await import('../source/source.js');
  const opened = await source.open({ meter: createMeter() });
  if (opened.status !== 'changed')
    throw new Error('unreachable: an open without a previous commit is never unchanged');
  return snapshotFromOpened(opened, source.description);
}

/** The snapshot of a source already opened. */
export async function snapshotFromOpened(opened: Snapshot, description: string): Promise<RegistrySnapshot> {
  // One batch for every blob (GitHub: one tarball, whatever the registry's size): the scan needs
  // registry.yaml, and resolving needs the files of the versions picked.
  const blobs = opened.entries.filter((e) => e.type === 'blob');
  let contents: Promise<Map<string, Buffer>> | undefined;
  const all = () => {
    contents ??= opened.read(blobs);
    return contents;
  };
  const registryYaml = blobs.some((e) => e.path === 'registry.yaml')
    ? (await all()).get('registry.yaml')?.toString('utf8')
    : undefined;
  const scan = scanRegistryTree(opened.entries, { registryYaml });
  return {
    commit: opened.commit,
    scan,
    read: async (repoPath: string) => {
      const data = (await all()).get(repoPath);
      if (!data) throw new Error(`${repoPath} is not in ${description} at ${opened.commit}`);
      return data;
    },
  };
}

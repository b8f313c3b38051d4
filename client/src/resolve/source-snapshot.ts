/**
 * Adapts a registry source (GitHub, git; server/src/source/) to the resolver's snapshot: one open
 * (commit + tree), a scan, and content read in as few batches as the source allows — registry.yaml
 * first, then every file of the registry's valid versions in one batch on the first read.
 */
import type { Source } from '../../../server/src/source/source.js';
import { scanRegistryTree } from '../registry/scan-tree.js';
import type { TreeEntry } from '../registry/types.js';
import type { RegistrySnapshot } from './snapshot-resolver.js';

export async function snapshotFromSource(source: Source): Promise<RegistrySnapshot> {
  const { createMeter } = await import('../../../server/src/source/source.js');
  const opened = await source.open({ meter: createMeter() });
  if (opened.status !== 'changed')
    throw new Error('unreachable: an open without a previous commit is never unchanged');
  const blobs = opened.entries.filter((e) => e.type === 'blob');
  const byPath = new Map(blobs.map((e) => [e.path, e]));
  const contents = new Map<string, Buffer>();
  const registryYaml = byPath.get('registry.yaml');
  if (registryYaml) for (const [p, b] of await opened.read([registryYaml])) contents.set(p, b);
  const scan = scanRegistryTree(opened.entries, {
    registryYaml: contents.get('registry.yaml')?.toString('utf8'),
  });
  let loaded: Promise<void> | undefined;
  const loadAll = () => {
    loaded ??= (async () => {
      const wanted: TreeEntry[] = [];
      for (const v of scan.versions) {
        for (const f of v.files) {
          const entry = byPath.get(f.repoPath);
          if (entry && !contents.has(f.repoPath)) wanted.push(entry);
        }
      }
      for (const [p, b] of await opened.read(wanted)) contents.set(p, b);
    })();
    return loaded;
  };
  return {
    commit: opened.commit,
    scan,
    read: async (repoPath: string) => {
      if (!contents.has(repoPath)) await loadAll();
      const data = contents.get(repoPath);
      if (!data) throw new Error(`${repoPath} is not in ${source.description} at ${opened.commit}`);
      return data;
    },
  };
}

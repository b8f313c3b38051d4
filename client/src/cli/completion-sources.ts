/**
 * What shell completion reads besides the command tree (docs/client.md "Shell completion"): the
 * names of local deployments, and the template references this user has met — the dm.lock of the
 * current directory and the resolutions the cache remembers. Everything is read lazily, bounded,
 * and a source that cannot be read offers nothing (completion never fails).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { dmDirectories, loadConfig } from '../config/config.js';
import { type DefaultRegistry, parseDefaultRegistry } from '../reference/reference.js';
import { pinnedReference } from '../resolve/types.js';
import type { CompletionSources } from './completion.js';

/** At most this many cache metadata files are read for one completion. */
const MAX_META_FILES = 2000;
/** A dm.lock or metadata record larger than this is not read for completion. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

export function completionSources(env: Record<string, string | undefined>, cwd: string): CompletionSources {
  return {
    deployments: async () => {
      try {
        const { openStateDatabase, stateDatabaseFile } = await import('../state/database.js');
        const { DeploymentStore } = await import('../state/deployments-store.js');
        const file = stateDatabaseFile(dmDirectories(env).state);
        if (!existsSync(file)) return [];
        const store = new DeploymentStore(openStateDatabase(file));
        try {
          return (await store.listDeployments()).map((d) => d.name);
        } finally {
          await store.database.close();
        }
      } catch {
        return [];
      }
    },
    references: async () => {
      const found = new Set<string>();
      const add = (template: unknown, version?: unknown, asked?: unknown) => {
        if (typeof asked === 'string') found.add(asked);
        if (typeof template === 'string' && typeof version === 'string')
          found.add(pinnedReference({ template, version }));
      };
      // The lock file of the current directory: what this project uses.
      try {
        const lock = join(cwd, 'dm.lock');
        if (existsSync(lock) && statSync(lock).size <= MAX_FILE_BYTES) {
          const { parseLockFile } = await import('../resolve/lock-file.js');
          for (const [asked, entry] of Object.entries(
            parseLockFile(readFileSync(lock, 'utf8'), lock).references,
          ))
            add(entry.template, entry.version, asked);
        }
      } catch {}
      // The cache: resolutions remembered (`resolution:…`) and references found in configurations.
      try {
        const { ContentCache } = await import('../fetch/content-cache.js');
        const cache = new ContentCache({ root: dmDirectories(env).cache });
        const bounds = { limit: MAX_META_FILES, maxBytes: MAX_FILE_BYTES };
        for (const { value } of await cache.listMeta<Record<string, unknown>>('resolution:', bounds))
          add(value?.template, value?.version, value?.reference);
        // `{found, files}` (install.ts's discovery by expanding); a list in caches written before.
        for (const { value } of await cache.listMeta<unknown>('discovery:', bounds)) {
          const refs = Array.isArray(value) ? value : (value as { found?: unknown } | null)?.found;
          if (Array.isArray(refs)) for (const r of refs) add(undefined, undefined, r);
        }
      } catch {}
      return [...found, ...shortForms(found, env)].sort();
    },
  };
}

/**
 * The same references written against the default registry (`--registry`'s, DM_REGISTRY or the config
 * file's `registry`), as users type them there: `<template>:<v>` in its collection,
 * `<collection>/<template>:<v>` elsewhere in its repository.
 */
function shortForms(references: Iterable<string>, env: Record<string, string | undefined>): string[] {
  let registry: DefaultRegistry;
  try {
    const configured = loadConfig({ env, onBrokenFile: () => {} }).registry;
    if (!configured) return [];
    registry = parseDefaultRegistry(configured);
  } catch {
    return [];
  }
  const prefix = `${registry.host}/${registry.owner}/${registry.repo}/`;
  const out: string[] = [];
  for (const reference of references) {
    if (!reference.startsWith(prefix)) continue;
    const rest = reference.slice(prefix.length);
    const slash = rest.indexOf('/');
    const collection = slash < 0 || slash > rest.indexOf(':') ? '' : rest.slice(0, slash);
    if (collection !== '') out.push(rest);
    if (collection === registry.collection) out.push(collection ? rest.slice(slash + 1) : rest);
  }
  return out;
}

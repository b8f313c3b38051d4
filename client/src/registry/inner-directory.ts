/**
 * What a directory one or two levels inside a registry is (docs/registry-layout.md): a template
 * directory (its subdirectories are versions) or a version directory (it holds a template file).
 * One decision for every place that needs a registry root (`dm lint`, `--registry-dir`) or a
 * version directory (`dm push`), so each can say what it was given instead and what to give.
 */
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { tryParseVersion } from '../reference/version.js';

export interface InnerDirectory {
  kind: 'template' | 'version';
  /** In words: `a template directory (versions v1, v1.0.1, …)`, `a version directory (it holds …)`. */
  said: string;
  /** The registry root above it. */
  root: string;
  /** A template directory's versions, as listed on disk. */
  versions: string[];
}

/** The directory's kind, or undefined for anything else (a registry root, a missing directory). */
export function innerDirectory(dir: string): InnerDirectory | undefined {
  let entries: { name: string; isDirectory(): boolean }[];
  try {
    entries = readdirSync(dir, { withFileTypes: true }).filter((e) => !e.name.startsWith('.'));
  } catch {
    return undefined; // whoever reads the directory says what is wrong with it
  }
  if (entries.some((e) => e.name === 'registry.yaml')) return undefined;
  const up = (levels: number) => {
    let d = dir.replace(/\/+$/, '') || '/';
    for (let i = 0; i < levels; i++) d = dirname(d);
    return d;
  };
  const versions = entries.filter((e) => e.isDirectory() && tryParseVersion(e.name)).map((e) => e.name);
  if (versions.length > 0) {
    const shown = versions.slice(0, 3).join(', ') + (versions.length > 3 ? ', …' : '');
    return { kind: 'template', said: `a template directory (versions ${shown})`, root: up(1), versions };
  }
  const templateFile = entries.find((e) => !e.isDirectory() && /\.(jinja|py)$/.test(e.name));
  if (templateFile && tryParseVersion(up(0).split('/').pop() ?? '')) {
    return {
      kind: 'version',
      said: `a version directory (it holds the template ${templateFile.name})`,
      root: up(2),
      versions: [],
    };
  }
  return undefined;
}

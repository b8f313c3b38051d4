/** The realistic DM corpus (test/expand/dm-corpus/), for the tests that expand it. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  type ExpandOptions,
  expandConfiguration,
  type RenderSandbox,
} from '../../client/src/expand/index.js';

/** The time the corpus is expanded at (and its reference run at). */
export const CORPUS_NOW = '2026-01-02T03:04:05.000Z';

/** Every `config.yaml` below dir (five levels deep at most), sorted. */
export function configurations(dir: string, depth = 0): string[] {
  if (depth > 5) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...configurations(full, depth + 1));
    else if (entry === 'config.yaml') out.push(full);
  }
  return out.sort();
}

/** One configuration expanded as the corpus's reference expands it (project my-project, at CORPUS_NOW). */
export function expandCorpusConfiguration(
  sandbox: RenderSandbox,
  config: string,
  deployment: string,
  onWarning: NonNullable<ExpandOptions['onWarning']> = () => {},
): ReturnType<typeof expandConfiguration> {
  return expandConfiguration(
    { content: readFileSync(config, 'utf8'), path: config },
    {
      sandbox,
      deployment,
      project: 'my-project',
      now: () => new Date(CORPUS_NOW),
      pythonValues: true,
      onWarning,
    },
  );
}

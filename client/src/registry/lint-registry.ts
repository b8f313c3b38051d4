/**
 * `dm lint <dir>` as a library function (spec/registry.md §1; spec/cli.md): scan a registry on
 * disk and report every finding. Checking that each example.yaml expands comes with the
 * expansion engine.
 */
import { readDirectoryTree } from './read-directory-tree.js';
import { scanRegistryTree } from './scan-tree.js';
import type { Finding } from './types.js';

export interface LintSummary {
  errors: number;
  warnings: number;
  /** Named collections (the root collection is not counted). */
  collections: number;
  templates: number;
  /** Versions that would be served. */
  versions: number;
}

export interface LintReport {
  /** The directory as given. */
  registry: string;
  findings: Finding[];
  summary: LintSummary;
  /** Top-level directories with their own registry.yaml, not linted as part of this registry. */
  nestedRegistries: string[];
}

export async function lintRegistryDirectory(dir: string): Promise<LintReport> {
  const tree = await readDirectoryTree(dir);
  const scan = scanRegistryTree(tree.entries, { registryYaml: tree.registryYaml });
  const errors = scan.findings.filter((f) => f.severity === 'error').length;
  return {
    registry: dir,
    findings: scan.findings,
    summary: {
      errors,
      warnings: scan.findings.length - errors,
      collections: scan.collections.length - 1,
      templates: scan.templates.length,
      versions: scan.versions.length,
    },
    nestedRegistries: scan.nestedRegistries,
  };
}

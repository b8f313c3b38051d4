/**
 * `dm lint <dir>` as a library function (docs/registry-layout.md "`dm lint <dir>`"): scan a registry on
 * disk and report every finding, then (unless asked not to) expand every served version's
 * example.yaml (check-examples.ts).
 */
import { DmError } from '../error.js';
import { innerDirectory } from './inner-directory.js';
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

export interface LintOptions {
  /** Expand every served version's example.yaml (default true when `cacheRoot` is given). */
  examples?: boolean;
  /** Content cache for files read through references while expanding examples. */
  cacheRoot?: string;
}

/**
 * A template or version directory (inner-directory.ts) is not what `dm lint` checks: a usage error
 * saying what the directory is and what to run instead (docs/registry-layout.md).
 */
export function refuseTemplateDirectory(dir: string): void {
  const inner = innerDirectory(dir);
  if (!inner) return;
  throw new DmError(
    'NOT_A_REGISTRY_ROOT',
    `${dir} is ${inner.said}, not a registry root: dm lint checks a whole registry, the directory that holds <template>/<version>/ directories`,
    { hint: `run dm lint ${inner.root}` },
  );
}

export async function lintRegistryDirectory(dir: string, options: LintOptions = {}): Promise<LintReport> {
  refuseTemplateDirectory(dir);
  const tree = await readDirectoryTree(dir);
  const scan = scanRegistryTree(tree.entries, { registryYaml: tree.registryYaml });
  const findings = [...scan.findings];
  const { checkSchemas } = await import('./check-schemas.js');
  const schemas = await checkSchemas(dir, scan);
  findings.push(...schemas.findings);
  if (options.cacheRoot && options.examples !== false) {
    const { checkExamples } = await import('./check-examples.js');
    const [host, owner, repo] = (scan.registryName ?? '').split('/');
    findings.push(
      ...(await checkExamples(
        dir,
        { ...scan, versions: scan.versions.filter((v) => !schemas.invalid.has(v.dir)) },
        {
          cacheRoot: options.cacheRoot,
          registry: host && owner && repo ? { host, owner, repo } : undefined,
        },
      )),
    );
  }
  const errors = findings.filter((f) => f.severity === 'error').length;
  return {
    registry: dir,
    findings,
    summary: {
      errors,
      warnings: findings.length - errors,
      collections: scan.collections.length - 1,
      templates: scan.templates.length,
      versions: scan.versions.length,
    },
    nestedRegistries: scan.nestedRegistries,
  };
}

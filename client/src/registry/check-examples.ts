/**
 * The registry convention's template check (docs/registry-layout.md): every served version's
 * `example.yaml` must expand with no extra properties. Each example is expanded exactly as
 * `dm expand` would, from the version directory, with references to this registry resolved
 * against the same directory (one rendering sandbox for all of them). A failure is an
 * `EXAMPLE_FAILED` finding carrying the expansion error's sentence.
 */
import { join } from 'node:path';
import type { RegistryName } from '../reference/reference.js';
import type { Finding, ScanResult } from './types.js';

export interface CheckExamplesOptions {
  /** The registry's name (references to it resolve to this directory). */
  registry?: RegistryName | undefined;
  /** The content cache to use for files read through references. */
  cacheRoot: string;
}

export async function checkExamples(
  dir: string,
  scan: ScanResult,
  options: CheckExamplesOptions,
): Promise<Finding[]> {
  const { expandFile, RenderSandbox } = await import('../expand/index.js');
  const { RegistryTemplateSource } = await import('../resolve/registry-template-source.js');
  const { localDirectoryResolver } = await import('../resolve/local-directory.js');
  const { isDmError } = await import('../error.js');
  const chain = options.registry ? [localDirectoryResolver({ dir, registry: options.registry })] : [];
  const findings: Finding[] = [];
  const sandbox = new RenderSandbox();
  try {
    for (const version of scan.versions) {
      if (!version.hasExample || version.kind === 'blueprint') continue;
      const example = join(dir, version.dir, 'example.yaml');
      const source = new RegistryTemplateSource({
        chain,
        cacheRoot: options.cacheRoot,
        ...(options.registry
          ? { defaultRegistry: { ...options.registry, collection: version.collection } }
          : {}),
        offline: true,
      });
      try {
        await expandFile(example, { sources: [source], sandbox, deployment: 'example' });
      } catch (error) {
        const message = isDmError(error) ? error.message : String(error);
        findings.push({
          code: 'EXAMPLE_FAILED',
          severity: 'error',
          path: `${version.dir}/example.yaml`,
          message: `example.yaml does not expand: ${message}`,
          collection: version.collection,
          template: version.template,
          version: version.version,
        });
      }
    }
  } finally {
    sandbox.close();
  }
  return findings;
}

/**
 * One expansion of a configuration sent to the Deployment Manager (docs/manager.md): the files are
 * laid out in a private temporary directory and read by `loadDeploymentInput`, exactly as `dm deploy`
 * expands a file; registry references resolve through `catalog` (this server's registries). It runs
 * in an expansion worker (expansion-pool.ts), never on the request thread.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { DeploymentInput } from '../../../client/src/deploy/index.js';
import { loadDeploymentInput } from '../../../client/src/deploy/index.js';
import { DmError, isDmError } from '../../../client/src/error.js';
import { parseDefaultRegistry } from '../../../client/src/reference/index.js';
import { RegistryTemplateSource } from '../../../client/src/resolve/index.js';
import { CatalogResolver, type CatalogView } from './catalog-resolver.js';

export interface ExpansionJob {
  /** The deployment's name (what `env["deployment"]` says). */
  name: string;
  configuration: { content: string; imports: { name: string; content: string }[] };
  properties: Record<string, unknown>;
  /** The server's registry for short references, when it has one. */
  defaultRegistry: string | undefined;
  /** Where resolved templates are cached (the manager's data directory). */
  cacheRoot: string;
}

export async function expandConfiguration(job: ExpansionJob, catalog: CatalogView): Promise<DeploymentInput> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-manager-'));
  try {
    const file = join(dir, 'config.yaml');
    await writeFile(file, job.configuration.content);
    for (const i of job.configuration.imports) {
      const path = join(dir, i.name);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, i.content);
    }
    const templateSource = new RegistryTemplateSource({
      chain: [new CatalogResolver(catalog)],
      cacheRoot: job.cacheRoot,
      defaultRegistry: job.defaultRegistry ? parseDefaultRegistry(job.defaultRegistry) : undefined,
    });
    let input: DeploymentInput;
    try {
      input = await loadDeploymentInput(file, {
        deployment: job.name,
        properties: job.properties,
        templateSource,
        displayName: 'configuration.content',
        // Never a request to an address a configuration names (docs/expansion.md "Imports by URL").
        refuseUrlImports:
          'the Deployment Manager does not fetch imports by URL (it makes no request to an address a configuration names); send the file among the imports, under that name',
      });
    } catch (error) {
      throw expansionError(error, dir);
    }
    input.references = [...templateSource.resolved.values()].map((r) => ({
      reference: r.reference,
      resolved: r.version ? `${r.template}:=${r.version}` : r.template,
      commit: r.commit,
      digest: r.digest,
    }));
    return input;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * An expansion's error as the manager API answers it (docs/manager.md): the private temporary
 * directory the configuration was laid out in is taken out of the message and details (paths
 * are the configuration's own, `config.yaml`, `helpers/x.jinja`), and a template that fails to
 * render is the request's fault, 422, never the server's 500.
 */
function expansionError(error: unknown, dir: string): unknown {
  if (!isDmError(error)) return error;
  const clean = (text: string) => text.split(`${dir}/`).join('').split(dir).join('.');
  const details =
    error.details === undefined
      ? undefined
      : (JSON.parse(clean(JSON.stringify(error.details))) as Record<string, unknown>);
  const template = error.code === 'JINJA_ERROR' || error.code === 'PYTHON_TEMPLATE_ERROR';
  return new DmError(error.code, clean(error.message), {
    // A template's syntax error (category invalid-input) is, like a failed rendering, the
    // configuration's fault: both are 422 (docs/manager.md "Errors").
    category: (template && (error.category === 'error' || error.category === 'invalid-input')
      ? 'validation'
      : error.category) as never,
    ...(details === undefined ? {} : { details }),
    ...(error.hint === undefined ? {} : { hint: clean(error.hint) }),
  });
}

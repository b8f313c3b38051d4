/**
 * dm inside GitOps tools (docs/deployments.md "Argo CD and KRM functions"): `dm generate` prints
 * only Kubernetes objects for an Argo CD config management plugin (parameters from
 * `ARGOCD_APP_PARAMETERS` / `PARAM_*`, the application's name and namespace from `ARGOCD_APP_NAME`
 * / `ARGOCD_APP_NAMESPACE`); `dm fn` is a KRM function: a ResourceList on stdin, the same
 * ResourceList with the configuration's objects appended on stdout, `results` on error.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { action, propertiesOf } from '../context.js';
import type { Printable } from '../format.js';

const GENERATE_HELP = `
Expands a configuration and prints its Kubernetes objects only (a YAML stream, the same bytes on
every run of the same input), as Argo CD's config management plugins expect. Properties come from
ARGOCD_APP_PARAMETERS (else PARAM_* variables), on top of -f and --properties; the deployment name
and default namespace from ARGOCD_APP_NAME and ARGOCD_APP_NAMESPACE. A $(ref...) value needs a live
cluster and is an error naming it. Run it with --offline to read templates from dm.lock and the cache.

Examples:
  dm --offline generate config.yaml
  ARGOCD_APP_NAME=web ARGOCD_APP_NAMESPACE=prod dm --offline generate
`;

const FN_HELP = `
A KRM function (config.kubernetes.io/v1 ResourceList on stdin, on stdout): its functionConfig holds a
configuration (resources, imports, with properties, deployment and namespace beside them) or names
one (configuration: path). The expanded objects are appended to items; an error is a result with
severity error (and exit 1). Usable as an exec function from kustomize and kpt.

Examples:
  kpt fn eval --exec "dm fn" --fn-config dm-fn.yaml
  dm fn < resource-list.yaml
`;

const MAX_STDIN = 64 * 1024 * 1024;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_STDIN) {
      const { DmError } = await import('../../error.js');
      throw new DmError('YAML_TOO_LARGE', `the ResourceList on stdin is larger than ${MAX_STDIN} bytes`, {
        category: 'limit',
      });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

type Json = Record<string, unknown>;

/** `dm fn`: the ResourceList out, with the objects appended, or with an error result. */
async function runFunction(ctx: CommandContext, text: string): Promise<Json> {
  const { isMapping } = await import('../../data.js');
  const { parseYaml, formatYaml } = await import('../../document/yaml.js');
  const { DmError } = await import('../../error.js');
  const { generateObjects } = await import('../../deploy/generate.js');
  const { loadLocalInput } = await import('./deploy.js');
  let list: Json = { apiVersion: 'config.kubernetes.io/v1', kind: 'ResourceList', items: [] };
  let file: string | undefined;
  try {
    const doc = parseYaml(text, { source: 'stdin' });
    if (!isMapping(doc) || doc.kind !== 'ResourceList' || !Array.isArray(doc.items ?? [])) {
      throw new DmError('INVALID_DOCUMENT', 'stdin is not a config.kubernetes.io/v1 ResourceList', {
        category: 'invalid-input',
      });
    }
    list = { ...doc, items: doc.items ?? [] };
    delete list.results;
    const fc = isMapping(doc.functionConfig) ? doc.functionConfig : {};
    const name = typeof fc.deployment === 'string' ? fc.deployment : 'dm';
    const namespace = typeof fc.namespace === 'string' ? fc.namespace : 'default';
    const properties = isMapping(fc.properties) ? fc.properties : {};
    let input: Awaited<ReturnType<typeof loadLocalInput>>;
    if (typeof fc.configuration === 'string') {
      file = fc.configuration;
      input = await loadLocalInput(ctx, fc.configuration, name, {}, properties);
    } else if (fc.resources !== undefined) {
      file = 'functionConfig';
      const content = formatYaml({
        ...(fc.imports ? { imports: fc.imports } : {}),
        resources: fc.resources,
        ...(fc.outputs ? { outputs: fc.outputs } : {}),
      });
      const path = join(ctx.cwd, 'functionConfig.yaml');
      input = await loadLocalInput(
        ctx,
        { kind: 'file', arg: 'functionConfig', path, text: content, configuration: { content, path }, name },
        name,
        {},
        properties,
      );
    } else {
      throw new DmError(
        'NOTHING_TO_DEPLOY',
        'functionConfig holds no configuration: give resources (and imports), or configuration: <path>',
      );
    }
    list.items = [...(list.items as unknown[]), ...generateObjects(input, { name, namespace })];
    return list;
  } catch (error) {
    process.exitCode = 1;
    const message = error instanceof Error ? error.message : String(error);
    return {
      ...list,
      results: [{ message, severity: 'error', ...(file ? { file: { path: file } } : {}) }],
    };
  }
}

export function registerFunctionCommands(program: Command): void {
  program
    .command('generate [config]')
    .description('print only the Kubernetes objects of a configuration (Argo CD config management plugin)')
    .option('--name <name>', 'deployment name (default: ARGOCD_APP_NAME, else the file name)')
    .addHelpText('after', GENERATE_HELP)
    .action(
      action<Json[]>(async (ctx, [arg], options) => {
        const { existsSync } = await import('node:fs');
        const { defaultInputName } = await import('../../input.js');
        const { formatYamlDocuments } = await import('../../document/yaml.js');
        const { argoProperties, generateObjects } = await import('../../deploy/generate.js');
        const { loadLocalInput } = await import('./deploy.js');
        const config = arg ?? 'config.yaml';
        const name =
          ctx.env.ARGOCD_APP_NAME ??
          (typeof options.name === 'string' ? options.name : defaultInputName(config, existsSync(config)));
        const namespace = ctx.env.ARGOCD_APP_NAMESPACE ?? ctx.config.kube.namespace ?? 'default';
        const properties = { ...(await propertiesOf(ctx)), ...argoProperties(ctx.env) };
        const input = await loadLocalInput(ctx, config, name, options, properties);
        const objects = generateObjects(input, { name, namespace });
        return { data: objects, text: () => formatYamlDocuments(objects) } satisfies Printable<Json[]>;
      }),
    );

  program
    .command('fn')
    .description('run as a KRM function: a ResourceList on stdin, with the expanded objects on stdout')
    .addHelpText('after', FN_HELP)
    .action(
      action<Json>(async (ctx) => {
        const { formatYaml } = await import('../../document/yaml.js');
        const out = await runFunction(ctx, await readStdin());
        return { data: out, text: () => formatYaml(out) };
      }),
    );
}

/**
 * dm inside GitOps tools (docs/gitops.md): `dm argocd generate`, the `generate` command of an Argo
 * CD config management plugin, and `dm fn`, a KRM function for kustomize and kpt. Both expand
 * through `dm expand`'s one path, offline from dm.lock, and print only Kubernetes objects.
 */
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { Primitive } from '../../deploy/model.js';
import type { Input } from '../../input.js';
import { action, type CommandContext, propertiesOf } from '../context.js';
import { expandForCommand, withExpansionOptions } from './expand.js';

const ARGOCD_HELP = `
Prints the configuration's Kubernetes objects, and nothing else, as a YAML stream: the generate
command of an Argo CD config management plugin (examples/argocd/plugin.yaml, docs/gitops.md).
Offline: registry templates come from dm.lock and the cache (run dm install --frozen-lockfile in
init). Properties: -f/--properties, then the application's parameters (ARGOCD_APP_PARAMETERS, or
PARAM_* when it is absent). env.deployment is ARGOCD_APP_NAME, the namespace of objects that set
none ARGOCD_APP_NAMESPACE. A $(ref…) value needs the live cluster: an error naming it.

Examples:
  dm argocd generate
  ARGOCD_APP_NAME=web ARGOCD_APP_NAMESPACE=prod dm argocd generate deploy/config.yaml
`;

const FN_HELP = `
A KRM function (kustomize, kpt): reads a ResourceList on standard input whose functionConfig names a
configuration (path) or holds one (configuration), appends its Kubernetes objects to items and
writes the list to standard output. On failure: the list with a results entry (severity error)
and exit code 1. Offline, as dm argocd generate. See docs/gitops.md.

Examples:
  kustomize build --enable-exec .      (with a functionConfig annotated config.kubernetes.io/function)
  kpt fn eval --exec ./dm-fn.sh --fn-config dm-fn.yaml
`;

/** Property names the configuration's top-level resources set (for PARAM_* names, docs/gitops.md). */
async function knownPropertyNames(input: Input): Promise<string[]> {
  const { parseConfiguration } = await import('../../expand/expand-configuration.js');
  const { resources } = parseConfiguration(input.configuration!.content, input.arg);
  const names = new Set<string>();
  for (const r of resources) {
    const props = (r as { properties?: unknown } | null)?.properties;
    if (props && typeof props === 'object') for (const k of Object.keys(props)) names.add(k);
  }
  return [...names].sort();
}

/** Expands offline and returns the objects. */
async function objectsFor(
  ctx: CommandContext,
  input: Input,
  options: Record<string, unknown>,
  properties: Record<string, unknown>,
  namespace: string,
  mode: string,
): Promise<Record<string, unknown>[]> {
  const offline: CommandContext = { ...ctx, config: { ...ctx.config, offline: true } };
  const { result } = await expandForCommand(offline, input, options, { properties });
  const { objectsOf } = await import('../../gitops/objects.js');
  return objectsOf(result.config.resources as Primitive[], { namespace, mode });
}

export function registerGitopsCommands(program: Command): void {
  const argocd = program
    .command('argocd')
    .description('dm as an Argo CD config management plugin')
    .addHelpText(
      'after',
      `\nThe plugin's commands (examples/argocd/plugin.yaml, docs/gitops.md).\n\nExamples:\n  dm argocd generate\n`,
    );
  withExpansionOptions(
    argocd
      .command('generate [config]')
      .description("print only the configuration's Kubernetes objects (Argo CD plugin generate)"),
  )
    .addHelpText('after', ARGOCD_HELP)
    .action(
      action(async (ctx, [config], options) => {
        const [{ loadInput }, { pluginProperties }] = await Promise.all([
          import('../../input.js'),
          import('../../gitops/argocd.js'),
        ]);
        const app = ctx.env.ARGOCD_APP_NAME;
        const input = loadInput(config ?? 'config.yaml', {
          cwd: ctx.cwd,
          accept: ['file', 'template'],
          ...(app ? { deployment: app } : {}),
        });
        const properties = {
          ...(await propertiesOf(ctx)),
          ...pluginProperties(ctx.env, await knownPropertyNames(input)),
        };
        const objects = await objectsFor(
          ctx,
          input,
          { ...options, ...(app ? { deployment: app } : {}) },
          properties,
          ctx.env.ARGOCD_APP_NAMESPACE || ctx.config.kube.namespace || 'default',
          'dm argocd generate',
        );
        const { formatYamlDocuments } = await import('../../document/yaml.js');
        ctx.streams.stdout(formatYamlDocuments(objects));
      }),
    );

  withExpansionOptions(
    program.command('fn').description('run as a KRM function (ResourceList on stdin and stdout)'),
  )
    .addHelpText('after', FN_HELP)
    .action(
      action(async (ctx, _args, options) => {
        const [{ readStandardInput, loadInput }, krm, { formatYaml }] = await Promise.all([
          import('../../input.js'),
          import('../../gitops/krm.js'),
          import('../../document/yaml.js'),
        ]);
        let list: import('../../gitops/krm.js').ResourceList = {
          apiVersion: 'config.kubernetes.io/v1',
          kind: 'ResourceList',
          items: [],
        };
        let file: string | undefined;
        try {
          list = krm.parseResourceList(readStandardInput());
          const request = krm.functionRequest(list.functionConfig);
          file = request.path ?? request.source;
          const input: Input =
            request.path !== undefined
              ? loadInput(request.path, { cwd: ctx.cwd, accept: ['file', 'template'] })
              : {
                  kind: 'file',
                  arg: 'functionConfig',
                  path: join(resolve(ctx.cwd), '<functionConfig>'),
                  text: request.configuration!,
                  configuration: {
                    content: request.configuration!,
                    path: join(resolve(ctx.cwd), '<functionConfig>'),
                  },
                  name: 'functionConfig',
                };
          const objects = await objectsFor(
            ctx,
            input,
            { ...options, ...(request.deployment ? { deployment: request.deployment } : {}) },
            { ...(await propertiesOf(ctx)), ...request.properties },
            request.namespace,
            'dm fn',
          );
          ctx.streams.stdout(formatYaml({ ...list, items: [...list.items, ...objects] }));
        } catch (error) {
          const result = krm.errorResult(error, file);
          ctx.streams.stderr(`error: ${result.message}\n`);
          ctx.streams.stdout(formatYaml({ ...list, results: [...(list.results ?? []), result] }));
          process.exitCode = 1;
        }
      }),
    );
}

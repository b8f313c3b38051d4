import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { Input } from '../../input.js';
import {
  action,
  type CommandContext,
  collect,
  contextFromCommand,
  propertiesOf,
  warner,
} from '../context.js';
import { printResult } from '../format.js';

const EXPAND_HELP = `
Expands a configuration (or one template file) into primitive resources and a layout, as
Deployment Manager did (docs/expansion.md). Templates run out of process with time and memory
limits. Properties: the configuration's < values files (-f) < --properties, applied to the
top-level template resources.

Examples:
  dm expand config.yaml
  dm expand config.yaml --deployment prod --env project=my-project -o json
  dm expand redis.jinja --properties replicas=3
  dm expand config.yaml -f values.yaml --imports-dir ./templates
  dm expand redis:v1.0 --registry-dir registry-fixtures --properties maxMemory=64mb
`;

const RENDER_HELP = `
Prints the raw text one template renders to: no expansion, no YAML parsing. The context file's
top-level keys become the template's globals (usually properties, env, imports). Includes and
Python imports are found in the template's directory and --imports-dir.

Examples:
  dm template render redis.jinja --context ctx.yaml
  dm template render web.py --properties replicas=2 --env deployment=prod
`;

function envAssignments(flags: string[] | undefined): Promise<Record<string, unknown>> {
  return import('../../config/properties.js').then(({ parsePropertyAssignments }) =>
    parsePropertyAssignments(flags ?? [], '--env'),
  );
}

function sandboxOptions(options: Record<string, unknown>): {
  timeoutMs?: number;
  memoryMb?: number;
  python?: string;
} {
  return {
    ...(options.timeout !== undefined ? { timeoutMs: Number(options.timeout) * 1000 } : {}),
    ...(options.memory !== undefined ? { memoryMb: Number(options.memory) } : {}),
    ...(typeof options.python === 'string' ? { python: options.python } : {}),
  };
}

/** What `dm expand` and the GitOps modes (docs/gitops.md) change in one expansion. */
export interface ExpansionOverrides {
  /** The properties, instead of -f/--properties. */
  properties?: Record<string, unknown>;
}

/**
 * The one expansion behind `dm expand` (and `dm argocd generate`, `dm fn`): the configuration (or a
 * template or reference) as the command names it, with the command's flags.
 */
export async function expandForCommand(
  ctx: CommandContext,
  given: string | Input,
  options: Record<string, unknown>,
  overrides: ExpansionOverrides = {},
) {
  // What the run loads, asked for at once (loaded side by side rather than one after another).
  const engine = Promise.all([
    import('../../expand/expand-configuration.js'),
    import('../../expand/local-template-source.js'),
  ]);
  engine.catch(() => {});
  const [{ loadInput }, { enginesNamedIn, RenderSandbox }, { rendererSnapshotDir }, { pythonRunnerDir }] =
    await Promise.all([
      import('../../input.js'),
      import('../../expand/sandbox/render-sandbox.js'),
      import('../../expand/sandbox/renderer-snapshot.js'),
      import('../../expand/python/runner-cache.js'),
    ]);
  const input =
    typeof given === 'string'
      ? loadInput(given, {
          cwd: ctx.cwd,
          accept: ['file', 'template', 'reference'],
          ...(options.deployment ? { deployment: String(options.deployment) } : {}),
        })
      : given;
  const { schemaValidationOf } = await import('../../config/config.js');
  const schemaValidation = schemaValidationOf(options.schemaValidation, ctx.config.schemaValidation);
  const env = await envAssignments(options.env as string[] | undefined);
  const properties = overrides.properties ?? (await propertiesOf(ctx));
  // The rendering processes the configuration names start now, beside the loading of the
  // engine and the parsing (the expansion starts any other it turns out to need).
  // The Jinja renderer starts from its snapshot in dm's cache directory, the Python runner from
  // its compiled code there (docs/expansion.md, "Speed").
  const sandbox = new RenderSandbox({
    ...sandboxOptions(options),
    snapshots: rendererSnapshotDir(ctx.config.dirs.cache),
    pythonRunners: pythonRunnerDir(ctx.config.dirs.cache),
  });
  sandbox.warm(
    enginesNamedIn(input.configuration!.content, input.path ? dirname(resolve(input.path)) : undefined),
  );
  try {
    // The modules themselves, not expand/index.js: schema validation (Ajv) runs in the
    // rendering process and stays out of dm's own (docs/expansion.md, "Isolation").
    const [{ expandConfiguration }, { lazyTemplateSource }] = await engine;
    // Registry references and URLs in types (and as the argument) resolve through the
    // resolver chain: dm.lock beside the configuration first, then --registry-dir and servers.
    // Without a dm.lock there, built when a type first needs it: local templates alone never
    // load the chain (a dm.lock is read at once, so a damaged one fails every expansion).
    const registrySource = async () => {
      const { createRegistryTemplateSource } = await import('../../resolve/registry-template-source.js');
      return createRegistryTemplateSource({
        config: ctx.config,
        registryDirs: ctx.registryDirs,
        configPath: input.path,
        warn: warner(ctx),
      });
    };
    const locked = input.path !== undefined && existsSync(join(dirname(resolve(input.path)), 'dm.lock'));
    const registry = locked ? await registrySource() : lazyTemplateSource(registrySource);
    const result = await expandConfiguration(input.configuration!, {
      ...(input.deployment ? { deployment: input.deployment } : {}),
      ...(options.deployment ? { deployment: String(options.deployment) } : {}),
      ...(options.project ? { project: String(options.project) } : {}),
      ...(options.importsDir ? { importsDir: String(options.importsDir) } : {}),
      env,
      properties,
      maxDepth: Number(options.maxDepth),
      schemaValidation,
      sandbox,
      sources: [registry],
      onWarning: (w: { message: string }) => warner(ctx)(w.message),
      // Integral floats and integer-keyed order as PyYAML printed them (docs/expansion.md).
      pythonValues: true,
    });
    return { result, input };
  } finally {
    sandbox.close();
  }
}

/** The flags of an expansion (all but --deployment), for `dm expand` and the GitOps modes. */
export function withExpansionOptions(command: Command): Command {
  return command
    .option('--project <name>', 'project (env.project)')
    .option('--env <k=v>', 'extra env entry for templates (repeatable)', collect)
    .option('--imports-dir <dir>', 'another directory where types and imports are found')
    .option('--max-depth <n>', 'expansion depth bound', '32')
    .option(
      '--schema-validation <mode>',
      "properties that break a template's schema: strict (fail), warn (expand, print each), off",
    )
    .option('--timeout <seconds>', 'time limit per template', '10')
    .option('--memory <MB>', 'memory limit per rendering process', '512')
    .option('--python <path>', 'Python interpreter for Python templates', 'python3');
}

export function registerExpandCommands(program: Command): void {
  const expand = program
    .command('expand <config>')
    .description('expand a configuration into resources and a layout')
    .option('--deployment <name>', 'deployment name (env.deployment)');
  withExpansionOptions(expand)
    .addHelpText('after', EXPAND_HELP)
    .action(
      action(async (ctx, [config], options) => {
        const { result } = await expandForCommand(ctx, config!, options);
        return { data: { config: result.config, layout: result.layout } };
      }),
    );
  const template = program.command('template').description('work with single templates');
  template
    .command('render <file>')
    .description('print the raw text one template renders to')
    .option('--context <file>', 'YAML file whose top-level keys become the template globals')
    .option('--env <k=v>', 'env entry (repeatable)', collect)
    .option('--imports-dir <dir>', 'where includes and imports are found')
    .option('--timeout <seconds>', 'time limit', '10')
    .option('--memory <MB>', 'memory limit', '512')
    .option('--python <path>', 'Python interpreter for Python templates', 'python3')
    .addHelpText('after', RENDER_HELP)
    .action(async (...args: unknown[]) => {
      // Not through action(): the global --context (kubeconfig) flag would swallow this
      // command's --context, so both are read from optsWithGlobals().
      const command = args[args.length - 1] as Command;
      const options = command.optsWithGlobals() as Record<string, unknown>;
      const file = command.processedArgs[0] as string;
      const ctx = contextFromCommand(command);
      const result = await (async () => {
        const { renderTemplateFile } = await import('../../expand/index.js');
        const rendered = await renderTemplateFile(file, {
          ...(options.context ? { contextFile: String(options.context) } : {}),
          ...(options.importsDir ? { importsDir: String(options.importsDir) } : {}),
          properties: ctx.properties,
          env: await envAssignments(options.env as string[] | undefined),
          sandbox: sandboxOptions(options),
        });
        if (ctx.config.output === 'text') {
          ctx.streams.stdout(rendered.text);
          return undefined;
        }
        return { data: rendered };
      })();
      if (result) printResult(result, ctx.config.output, ctx.streams);
    });
}

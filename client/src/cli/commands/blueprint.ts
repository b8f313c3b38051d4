/**
 * `dm blueprint render|apply <ref|dir> --imports <file>` (docs/blueprints.md "Commands").
 * Thin: arguments → one library call; library code is imported lazily.
 */
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { action, warner } from '../context.js';
import { kubectlFor, pruneAllOption, timeoutOf, withStore } from './deploy.js';

const RENDER_HELP = `
Runs one installation of a Landscaper-style blueprint without a cluster: constructs the imports,
runs the import executions, renders the subinstallations (recursively) and the deploy executions,
and runs the export executions. Prints, per installation path, the imports, the deploy items with
their run order (deployOrder: dependsOn layers), the subinstallations with theirs, and the exports.
A failure names its phase (-o json: the error's code); everything computed before it is printed.

The imports file (YAML or JSON) holds: installation (the Installation spec plus name and
namespace), scope (dataObjects and targets of the root context), componentDescriptor, blueprints
(the blueprints behind cd:// references: {files, componentDescriptor?}) and deployerExports.

Examples:
  dm blueprint render ./my-blueprint --imports imports.yaml
  dm blueprint render ./my-blueprint --imports imports.yaml -o json
  dm --registry-dir registry-fixtures blueprint render platform/namespace-blueprint:v1 --imports imports.yaml
`;

const APPLY_HELP = `
Renders as dm blueprint render does, then applies the Kubernetes objects of the deploy items of
type landscaper.gardener.cloud/kubernetes-manifest (config.manifests[].manifest) with the apply
path of dm deploy, one dependsOn layer after the other. Deploy items of other types (helm,
container, mock…) are rendered but not applied; dm lists them. Only the last layer's step prunes,
with dm deploy's guard: an apply that would prune every object of the deployment, or more than half
of them, stops unless --prune-all is given. --dry-run writes nothing.

Examples:
  dm blueprint apply ./my-blueprint --imports imports.yaml --dry-run
  dm --context staging blueprint apply ./my-blueprint --imports imports.yaml --name team-a
  dm blueprint apply ./my-blueprint --imports imports.yaml --name team-a --prune-all
`;

type Obj = Record<string, unknown>;

async function renderFromArgs(
  ctx: CommandContext,
  arg: string,
  options: Record<string, unknown>,
  sandbox: { timeoutMs?: number } = {},
) {
  const { readBlueprintDir, readImportsFile, runBlueprintRender } = await import('../../blueprint/index.js');
  const { DmError } = await import('../../error.js');
  if (typeof options.imports !== 'string') {
    throw new DmError('MISSING_IMPORTS', 'dm blueprint needs --imports <file>', { category: 'usage' });
  }
  const { inputs } = readImportsFile(options.imports);
  const warn = warner(ctx);
  let loader: import('../../blueprint/registry.js').RegistryBlueprintLoader | undefined;
  const registry = async () => {
    if (!loader) {
      const { createRegistryBlueprintLoader } = await import('../../blueprint/registry.js');
      loader = await createRegistryBlueprintLoader({
        config: ctx.config,
        registryDirs: ctx.registryDirs,
        warn,
      });
    }
    return loader;
  };
  const { loadInput } = await import('../../input.js');
  const input = loadInput(arg, { cwd: ctx.cwd, accept: ['directory', 'reference'], what: 'the blueprint' });
  let files: Record<string, string>;
  let source = arg;
  if (input.kind === 'directory') {
    files = readBlueprintDir(arg);
  } else {
    const loaded = await (await registry()).load(arg);
    files = loaded.files;
    source = loaded.resolved;
  }
  const result = await runBlueprintRender(files, inputs, {
    sandbox,
    resolveBlueprintRef: async (ref) => {
      if (ref.startsWith('cd://') || !/:/.test(ref)) return undefined;
      return (await registry()).load(ref);
    },
  });
  return { result, source };
}

/** Throws the render's error with the partial result (printed first unless -o json). */
async function failWithPartial(
  ctx: CommandContext,
  result: { installations: Obj; error?: { phase: string; message: string; category: string } },
) {
  if (!result.error) return;
  const { BlueprintError } = await import('../../blueprint/index.js');
  const { formatYaml } = await import('../../document/yaml.js');
  if (ctx.config.output !== 'json') ctx.streams.stdout(formatYaml({ installations: result.installations }));
  throw new BlueprintError(result.error.phase as never, result.error.message, {
    category: result.error.category as never,
    details: { installations: result.installations },
    hint: `failed in phase ${result.error.phase}`,
  });
}

export function registerBlueprintCommands(program: Command): void {
  const blueprint = program.command('blueprint').description('render or apply a Landscaper-style blueprint');
  blueprint
    .command('render <blueprint>')
    .description('render a blueprint installation (a directory or a registry reference)')
    .requiredOption('--imports <file>', 'the installation, scope and other inputs (YAML or JSON)')
    .option('--timeout <seconds>', 'time limit per template and per schema validation', '10')
    .addHelpText('after', RENDER_HELP)
    .action(
      action<unknown>(async (ctx, [arg], options) => {
        const { result } = await renderFromArgs(ctx, arg as string, options, {
          timeoutMs: Number(options.timeout) * 1000,
        });
        await failWithPartial(ctx, result as never);
        return { data: { installations: result.installations } };
      }),
    );
  blueprint
    .command('apply <blueprint>')
    .description('render a blueprint installation and apply its kubernetes-manifest deploy items')
    .requiredOption('--imports <file>', 'the installation, scope and other inputs (YAML or JSON)')
    .option('--name <name>', 'deployment name (default: the installation name)')
    .option('--dry-run', 'show what would be created, updated and pruned')
    .option('--wait', 'wait until workloads are ready')
    .option('--timeout <seconds>', 'time limit for --wait and prunes', '300')
    .addOption(pruneAllOption())
    .addHelpText('after', APPLY_HELP)
    .action(
      action<import('../../blueprint/apply.js').ApplyResult>(async (ctx, [arg], options) => {
        const { result } = await renderFromArgs(ctx, arg as string, options);
        await failWithPartial(ctx, result as never);
        const { applyRenderedBlueprint } = await import('../../blueprint/apply.js');
        return withStore(
          ctx,
          async (store) => {
            const applied = await applyRenderedBlueprint(result, {
              store,
              kubectl: await kubectlFor(ctx),
              ...(typeof options.name === 'string' ? { name: options.name } : {}),
              dryRun: Boolean(options.dryRun),
              wait: Boolean(options.wait),
              timeoutSeconds: timeoutOf(options),
              pruneAll: Boolean(options.pruneAll),
            });
            for (const s of applied.skipped) {
              ctx.streams.stderr(
                `note: deploy item ${s.installation}/${s.item} (${s.type}) is not applied by dm\n`,
              );
            }
            return {
              data: applied,
              text: (d) =>
                [
                  `deployment ${d.deployment}: ${d.status}`,
                  ...d.layers.map(
                    (l, i) => `layer ${i + 1}: ${l.items.join(', ')} (${l.objects} objects) ${l.status}`,
                  ),
                  ...d.skipped.map((s) => `not applied: ${s.installation}/${s.item} (${s.type})`),
                ].join('\n'),
            };
          },
          { readOnly: Boolean(options.dryRun) },
        );
      }),
    );
}

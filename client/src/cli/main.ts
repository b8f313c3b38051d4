/**
 * `dm`: the client CLI (spec/cli.md). Thin: commands parse flags and call one library function;
 * heavy modules are imported lazily inside actions so that `dm --version` starts fast.
 */
import { Command, CommanderError, Option } from 'commander';
import { exitCodeFor } from '../error.js';
import { registerCommands } from './commands/index.js';
import { collect } from './context.js';
import { printError } from './format.js';
import { packageVersion } from './package-version.js';

function globalOutput(argv: readonly string[]): 'text' | 'yaml' | 'json' {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v =
      a === '-o' || a === '--output' ? argv[i + 1] : a?.startsWith('--output=') ? a.slice(9) : undefined;
    if (v === 'json' || v === 'yaml' || v === 'text') return v;
  }
  return 'text';
}

export function buildProgram(): Command {
  const program = new Command('dm');
  program
    .description(
      'Resolve, expand, render, merge and deploy Deployment Manager templates from template registries.',
    )
    .version(packageVersion(), '--version', 'print the version')
    .option('--registry <owner/repo[/collection]>', 'default registry for short references (env DM_REGISTRY)')
    .option('--registry-url <url>', 'a registry server or mirror (env DM_REGISTRY_URL)')
    .option('--manager-url <url>', 'a Deployment Manager service for deploy, deployments, manifests, types')
    .option(
      '--registry-dir <dir[=host/owner/repo]>',
      'a registry on disk to resolve from (repeatable)',
      collect,
    )
    .option('--properties <k=v,...>', 'properties for the configuration (repeatable)', collect)
    .option('-f, --values <file>', 'values file merged into properties (repeatable, in order)', collect)
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'yaml', 'json']))
    .option('--offline', 'use only the lock file and the cache')
    .option('--kubeconfig <file>', 'kubeconfig for kubectl')
    .option('--context <name>', 'kubeconfig context')
    .option('-n, --namespace <name>', 'Kubernetes namespace')
    .option('--config <file>', 'config file (env DM_CONFIG; default $XDG_CONFIG_HOME/dm/config.yaml)')
    .option('-q, --quiet', 'print less')
    .option('-v, --verbose', 'print more, and stack traces on errors')
    .option('--no-color', 'no colour in output')
    .showHelpAfterError('(run with --help for usage)')
    .enablePositionalOptions(false)
    .exitOverride();
  registerCommands(program);
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return error.exitCode === 0 ? 0 : 2;
    }
    printError(error, {
      output: globalOutput(argv),
      verbose: argv.includes('-v') || argv.includes('--verbose'),
      color: Boolean(process.stderr.isTTY) && !argv.includes('--no-color') && !process.env.NO_COLOR,
    });
    return exitCodeFor(error);
  }
}

process.exitCode = await main(process.argv);

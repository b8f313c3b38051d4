/**
 * `dm`: the client CLI (docs/client.md "Commands"). Thin: commands parse flags and call one library function;
 * heavy modules are imported lazily inside actions so that `dm --version` starts fast. One run of
 * the CLI (`runCli`), for its process (main.ts) and for the expansion agent (agent.ts).
 */
import { Command, CommanderError, Option } from 'commander';
import { isHttpUrl, OUTPUT_FORMATS } from '../config/config.js';
import { DmError, exitCodeFor, fromSystemError } from '../error.js';
import { nearest } from '../nearest.js';
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

const ROOT_EXAMPLES = `
Examples:
  dm search redis --registry-url http://localhost:8080
  dm resolve redis:v1.0 --registry-dir registry-fixtures
  dm install config.yaml --registry-dir registry-fixtures
  dm expand config.yaml -o json
  dm deploy config.yaml --name prod --dry-run
  dm completion bash > /etc/bash_completion.d/dm

Exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 validation, 5 unreachable (docs/errors.md).
`;

/** Examples of the commands that only group subcommands. */
const GROUP_EXAMPLES: Record<string, string[]> = {
  cache: ['dm cache list', 'dm cache verify', 'dm cache clean --older-than 30'],
  template: ['dm template render t.jinja --context ctx.yaml'],
  blueprint: [
    'dm --registry-dir registry-fixtures blueprint render platform/namespace-blueprint:v1 --imports imports.yaml',
    'dm blueprint apply ./my-blueprint --imports imports.yaml --dry-run',
  ],
  deployments: ['dm deployments list', 'dm deployments get prod -o yaml', 'dm deployments delete prod'],
  types: ['dm types list', 'dm types instances all'],
  config: [
    'dm config view',
    'dm config set output json',
    'dm config get registry',
    'dm config unset registryUrl',
  ],
};

/** A commander Command whose unknown-option error suggests the nearest known flag ("did you mean"). */
class DmCommand extends Command {
  override createCommand(name?: string): Command {
    return new DmCommand(name);
  }

  // Replaces commander's own (not in its typings), keeping its behaviour when nothing is near.
  _excessArguments(received: string[]): never {
    excessArgumentsOfDefault(this, received);
    const base = Command.prototype as unknown as { _excessArguments(this: Command, r: string[]): never };
    return base._excessArguments.call(this, received);
  }

  // Replaces commander's own (not in its typings), keeping its behaviour when nothing is near.
  unknownOption(flag: string): never {
    const candidates: string[] = [];
    for (let c: Command | null = this; c; c = c.parent) {
      for (const o of c.options) if (o.long && !o.hidden) candidates.push(o.long);
    }
    const name = flag.split('=')[0] ?? flag;
    const match = name.startsWith('--') ? nearest(name, candidates) : undefined;
    if (!match) {
      const base = Command.prototype as unknown as { unknownOption(this: Command, f: string): never };
      return base.unknownOption.call(this, flag);
    }
    return this.error(`error: unknown option '${flag}'\n(Did you mean ${match}?)`, {
      code: 'commander.unknownOption',
    });
  }
}

/**
 * `dm deployments lst`: the group's default command (`list`) got an argument it does not take;
 * when that word is near one of the group's commands it was meant as one, so say "did you mean".
 */
function excessArgumentsOfDefault(command: Command, received: readonly string[]): void {
  const parent = command.parent as (Command & { _defaultCommandName?: string | null }) | null;
  if (!parent || parent._defaultCommandName !== command.name() || received.length === 0) return;
  const word = String(received[0]);
  const match = nearest(
    word,
    parent.commands.flatMap((c) => [c.name(), ...c.aliases()]),
  );
  if (!match) return;
  parent.error(`error: unknown command '${word}' for 'dm ${parent.name()}'\n(Did you mean ${match}?)`, {
    code: 'commander.unknownCommand',
  });
}

/** Placeholders of numeric flags: `<n>` a whole number, the others any number; all greater than 0. */
const NUMERIC_PLACEHOLDERS: Record<string, 'integer' | 'number'> = {
  n: 'integer',
  seconds: 'number',
  days: 'number',
  mb: 'integer',
};

/** Usage errors (exit 2) for flag values commander does not check: numbers, URLs. */
function validateFlags(command: Command): void {
  for (const o of command.options) {
    const placeholder = /<([a-z-]+)>/.exec(o.flags)?.[1];
    const kind = placeholder ? NUMERIC_PLACEHOLDERS[placeholder] : undefined;
    const value = command.getOptionValue(o.attributeName()) as unknown;
    if (!kind || value === undefined) continue;
    const text = String(value).trim();
    const number = Number(text);
    const ok =
      text !== '' && Number.isFinite(number) && number > 0 && (kind === 'number' || Number.isInteger(number));
    if (!ok) {
      throw new DmError(
        'INVALID_FLAG_VALUE',
        `${o.long ?? o.flags} '${String(value)}' is not ${kind === 'integer' ? 'a whole number' : 'a number'} greater than 0`,
        { category: 'usage' },
      );
    }
  }
  const url = command.optsWithGlobals().registryUrl as string | undefined;
  if (url !== undefined && !isHttpUrl(url)) {
    throw new DmError('INVALID_FLAG_VALUE', `--registry-url '${url}' is not an http(s) URL`, {
      category: 'usage',
      hint: 'for example --registry-url http://localhost:8080',
    });
  }
}

export function buildProgram(): Command {
  const program = new DmCommand('dm');
  program
    .description(
      'Resolve, expand, render, merge and deploy Deployment Manager templates from template registries.',
    )
    .version(packageVersion(), '--version', 'print the version')
    .option('--registry <owner/repo[/collection]>', 'default registry for short references (env DM_REGISTRY)')
    .option('--registry-url <url>', 'a registry server or mirror (env DM_REGISTRY_URL)')
    .option('--manager-url <url>', 'a Deployment Manager service for deploy, deployments, manifests, types')
    .option(
      '--http-timeout <seconds>',
      'time limit of every HTTP call dm makes (config httpTimeout; default 30)',
    )
    .option(
      '--registry-dir <dir[=host/owner/repo]>',
      'a registry on disk to resolve from (repeatable)',
      collect,
    )
    .option('--properties <k=v,...>', 'properties for the configuration (repeatable)', collect)
    .option('-f, --values <file>', 'values file merged into properties (repeatable, in order)', collect)
    .addOption(new Option('-o, --output <format>', 'output format').choices(OUTPUT_FORMATS))
    .option('--offline', 'use only the lock file and the cache')
    .option('--plain-http', 'talk to oci:// registries over plain HTTP (loopback and test registries)')
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
  program.hook('preAction', (_program, actionCommand) => validateFlags(actionCommand));
  // Every subcommand's --help lists the global options (--registry-dir, -o, …) its examples use.
  program.configureHelp({ showGlobalOptions: true });
  program.addHelpText('after', ROOT_EXAMPLES);
  registerCommands(program);
  for (const [name, examples] of Object.entries(GROUP_EXAMPLES)) {
    program.commands
      .find((c) => c.name() === name)
      ?.addHelpText('after', `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}\n`);
  }
  return program;
}

/**
 * `dm __complete <words…>`: the candidates for the shell completion scripts, one per line; exit 1
 * when the shell should complete file names instead (docs/client.md "Shell completion").
 */
async function complete(program: Command, words: string[]): Promise<number> {
  const { completeWords } = await import('./completion.js');
  const { completionSources } = await import('./completion-sources.js');
  const candidates = await completeWords(program, words, completionSources(process.env, process.cwd()));
  if (candidates === undefined) return 1;
  process.stdout.write(candidates.map((c) => `${c}\n`).join(''));
  return 0;
}

/** Runs `dm` with `argv` (node, script, arguments…); resolves to its exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const program = buildProgram();
  if (argv[2] === '__complete') return complete(program, argv.slice(3));
  // `dm help <name>` of no command is the usage error of `dm <name>` (with its "did you mean"),
  // not the whole help on stderr.
  const asked = argv[2] === 'help' && argv.length === 4 ? argv[3] : undefined;
  if (
    asked &&
    !asked.startsWith('-') &&
    !program.commands.some((c) => c.name() === asked || c.aliases().includes(asked))
  ) {
    argv = [...argv.slice(0, 2), asked];
  }
  try {
    await program.parseAsync(argv);
    // A command may end with a non-error status of its own (dm outdated: 1 when something is).
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    // `--detailed-exitcode` (dm diff, dm drift; docs/deployments.md): 0 no changes, 2 changes, 1 any error.
    const detailed = argv.includes('--detailed-exitcode');
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return error.exitCode === 0 ? 0 : detailed ? 1 : 2;
    }
    printError(error, {
      output: globalOutput(argv),
      verbose: argv.includes('-v') || argv.includes('--verbose'),
      color: Boolean(process.stderr.isTTY) && !argv.includes('--no-color') && !process.env.NO_COLOR,
    });
    return detailed ? 1 : exitCodeFor(fromSystemError(error) ?? error);
  }
}

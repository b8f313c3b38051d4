import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { CONFIG_FILE_KEYS, validateConfigFile } from '../../config/config.js';
import { formatYaml, parseYaml } from '../../document/yaml.js';
import { DmError, isDmError } from '../../error.js';
import { nearest } from '../../nearest.js';
import { action, type CommandContext } from '../context.js';
import { packageVersion } from '../package-version.js';

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('view and set configuration');
  config
    .command('view')
    .alias('list')
    .addHelpText(
      'after',
      '\nExamples:\n  dm config view\n  dm config view -o json\n  dm --config ./ci-config.yaml config view\n',
    )
    .description('print the effective configuration (flags > environment > config file > defaults)')
    .action(
      action(
        async (ctx) => {
          const { githubToken, ...rest } = ctx.config;
          return { data: { ...rest, githubToken: githubToken ? '(set)' : undefined } };
        },
        { tolerateBrokenConfig: true },
      ),
    );
  config
    .command('get <key>')
    .description('print the value of a key in the config file (nothing when it is not set)')
    .addHelpText('after', '\nExamples:\n  dm config get registry\n  dm config get sources -o json\n')
    .action(
      action(
        async (ctx, [key]) => {
          checkKey(key!);
          const value = readConfigFile(ctx.config.configFile)?.[key!];
          return {
            data: value ?? null,
            text: (v: unknown) => (v === null ? '' : typeof v === 'string' ? v : formatYaml(v)),
          };
        },
        { tolerateBrokenConfig: true },
      ),
    );
  config
    .command('set <key> <value>')
    .description(`set a key in the config file (${CONFIG_FILE_KEYS.join(', ')})`)
    .addHelpText(
      'after',
      "\nExamples:\n  dm config set registry my-org/templates\n  dm config set output json\n  dm config set sources '{git.example.com/team/templates: /srv/templates}'\n",
    )
    .action(
      action(
        async (ctx, [key, raw]) => {
          checkKey(key!);
          const path = ctx.config.configFile;
          const value = configValue(key!, raw!);
          // Validated before anything is written: a bad value never reaches the file.
          validateConfigFile({ [key!]: value }, 'dm config set');
          const current = readConfigFile(path, ctx) ?? {};
          current[key!] = value;
          writeConfigFile(path, current);
          return { data: { file: path, [key!]: value }, text: () => `set ${key} in ${path}` };
        },
        { tolerateBrokenConfig: true },
      ),
    );
  config
    .command('unset <key>')
    .description('remove a key from the config file')
    .addHelpText('after', '\nExample:\n  dm config unset registryUrl\n')
    .action(
      action(
        async (ctx, [key]) => {
          checkKey(key!);
          const path = ctx.config.configFile;
          const read = readConfigFile(path, ctx);
          const current = read ?? {};
          const had = key! in current;
          delete current[key!];
          if (had || read === undefined) writeConfigFile(path, current);
          return {
            data: { file: path, unset: key, changed: had },
            text: () => (had ? `removed ${key} from ${path}` : `${key} is not set in ${path}`),
          };
        },
        { tolerateBrokenConfig: true },
      ),
    );
  program
    .command('version')
    .addHelpText('after', '\nExamples:\n  dm version\n  dm version -o json\n')
    .description('print the version of dm')
    .action(
      action(async () => ({ data: { version: packageVersion() }, text: (d) => d.version }), {
        tolerateBrokenConfig: true,
      }),
    );
  program
    .command('completion <shell>')
    .addHelpText(
      'after',
      '\nExamples:\n  source <(dm completion bash)                  # in ~/.bashrc\n  dm completion zsh > ~/.zfunc/_dm                # a directory on $fpath\n  dm completion fish > ~/.config/fish/completions/dm.fish\n\nCompletes commands, flags, flag values (-o json|yaml|text), shells, config keys and their values,\ndeployment names, template references (dm.lock and the cache), else file names.\n',
    )
    .description('print a shell completion script (bash, zsh, fish)')
    .action(
      action(async (_ctx, [shell]) => {
        const { completionScript, SHELLS } = await import('../completion.js');
        const script = completionScript(shell ?? '');
        if (script === undefined) {
          throw new DmError('INVALID_SHELL', `shell '${shell}' is not one of ${SHELLS.join(', ')}`, {
            category: 'usage',
          });
        }
        return { data: script, text: (d: string) => d };
      }),
    );
}

function checkKey(key: string): void {
  if (!(CONFIG_FILE_KEYS as readonly string[]).includes(key)) {
    const closest = nearest(key, CONFIG_FILE_KEYS);
    throw new DmError('INVALID_CONFIG_KEY', `unknown config key '${key}'`, {
      category: 'usage',
      hint: closest
        ? `did you mean '${closest}'? Known keys: ${CONFIG_FILE_KEYS.join(', ')}`
        : `known keys: ${CONFIG_FILE_KEYS.join(', ')}`,
    });
  }
}

/** A value as typed on the command line: booleans for `offline`, YAML mappings for the mapping keys. */
function configValue(key: string, raw: string): unknown {
  if (key === 'offline') return raw === 'true' ? true : raw === 'false' ? false : raw;
  if (key === 'httpTimeout' && raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
  if (key === 'registries' || key === 'sources') return parseYaml(raw, { source: `dm config set ${key}` });
  return raw;
}

/**
 * The config file as a mapping ({} when missing). A file that cannot be read as one (invalid YAML,
 * not a mapping) is an error naming it for `dm config get`; `set` and `unset` (given `repair`) move
 * it aside to `<file>.broken`, say so, and answer undefined: they start a new file, so a broken
 * config file never blocks `dm config` (docs/client.md "Configuration").
 */
function readConfigFile(path: string, repair?: CommandContext): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  try {
    const data = parseYaml(text, { source: path });
    if (data === null || data === undefined) return {};
    if (typeof data !== 'object' || Array.isArray(data)) {
      throw new DmError('INVALID_CONFIG_FILE', `${path}: the config file must be a mapping`, {
        hint: 'dm config set or unset moves it aside and starts a new one',
      });
    }
    return data as Record<string, unknown>;
  } catch (error) {
    if (!repair || !isDmError(error)) throw error;
    renameSync(path, `${path}.broken`);
    repair.streams.stderr(
      `warning: moved the unreadable ${path} to ${path}.broken; starting a new config file\n`,
    );
    return undefined;
  }
}

function writeConfigFile(path: string, data: Record<string, unknown>): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, formatYaml(data));
  renameSync(tmp, path);
}

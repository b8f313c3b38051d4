import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { CONFIG_FILE_KEYS } from '../../config/config.js';
import { formatYaml, parseYaml } from '../../document/yaml.js';
import { DmError } from '../../error.js';
import { action } from '../context.js';
import { packageVersion } from '../package-version.js';

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('view and set configuration');
  config
    .command('view')
    .addHelpText('after', '\nExamples:\n  dm config view\n  dm config view -o json\n')
    .description('print the effective configuration (flags > environment > config file > defaults)')
    .action(
      action(async (ctx) => {
        const { githubToken, ...rest } = ctx.config;
        return { data: { ...rest, githubToken: githubToken ? '(set)' : undefined } };
      }),
    );
  config
    .command('set <key> <value>')
    .description(`set a key in the config file (${CONFIG_FILE_KEYS.join(', ')})`)
    .addHelpText('after', '\nExample:\n  dm config set registry my-org/templates\n')
    .action(
      action(async (ctx, [key, value]) => {
        if (!(CONFIG_FILE_KEYS as readonly string[]).includes(key!)) {
          throw new DmError('INVALID_CONFIG_KEY', `unknown config key '${key}'`, {
            category: 'usage',
            hint: `known keys: ${CONFIG_FILE_KEYS.join(', ')}`,
          });
        }
        const path = ctx.config.configFile;
        let current: Record<string, unknown> = {};
        try {
          current =
            (parseYaml(readFileSync(path, 'utf8'), { source: path }) as Record<string, unknown>) ?? {};
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
        current[key!] = value === 'true' ? true : value === 'false' ? false : value;
        mkdirSync(dirname(path), { recursive: true });
        const tmp = `${path}.${process.pid}.tmp`;
        writeFileSync(tmp, formatYaml(current));
        renameSync(tmp, path);
        return { data: { file: path, [key!]: current[key!] }, text: () => `set ${key} in ${path}` };
      }),
    );
  program
    .command('version')
    .addHelpText('after', '\nExamples:\n  dm version\n  dm version -o json\n')
    .description('print the version of dm')
    .action(action(async () => ({ data: { version: packageVersion() }, text: (d) => d.version })));
  program
    .command('completion <shell>')
    .addHelpText(
      'after',
      '\nExamples:\n  source <(dm completion bash)\n  dm completion fish > ~/.config/fish/completions/dm.fish\n',
    )
    .description('print a shell completion script (bash, zsh, fish)')
    .action(
      action(async (_ctx, [shell]) => {
        const names = program.commands.map((c) => c.name());
        const words = names.join(' ');
        const scripts: Record<string, string> = {
          bash: `complete -W "${words}" dm`,
          zsh: `#compdef dm\n_arguments '1: :(${words})'`,
          fish: names.map((n) => `complete -c dm -n __fish_use_subcommand -a ${n}`).join('\n'),
        };
        const script = scripts[shell ?? ''];
        if (script === undefined) {
          throw new DmError('INVALID_SHELL', `shell '${shell}' is not one of bash, zsh, fish`, {
            category: 'usage',
          });
        }
        return { data: script, text: (d: string) => d };
      }),
    );
}

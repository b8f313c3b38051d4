/**
 * `dm-registry` (docs/server.md "Running it"): one module per command in commands/ (`start`,
 * `index`, `migrate`, `checksum-key`, `bundle`, `token`). Configuration is read there, once, with
 * the precedence flag > environment > default (DM_REGISTRY_DB, DM_REGISTRY_PORT, DM_ADMIN_TOKEN,
 * DM_REGISTRY_SECRET_KEY, GITHUB_TOKEN, GITHUB_API_URL), and passed down as options; the library
 * below never reads process.env.
 */

import { Command, CommanderError } from 'commander';
import { packageVersion } from '../../client/src/cli/package-version.js';
import { exitCodeFor, isDmError } from '../../client/src/error.js';
import { registerBundle } from './commands/bundle.js';
import { registerChecksumKey } from './commands/checksum-key.js';
import { registerIndex } from './commands/index-once.js';
import { registerMigrate } from './commands/migrate.js';
import { registerStart } from './commands/start.js';
import { registerToken } from './commands/token.js';

export function buildProgram(env: NodeJS.ProcessEnv): Command {
  const program = new Command('dm-registry');
  program
    .description('The dm template registry server.')
    .version(packageVersion(), '--version', 'print the version')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  dm-registry start --index registry-fixtures          # serve the sample registry on :8080',
        '  dm-registry index github.com/acme/templates --json  # index once, print the findings',
        '  dm-registry token create --admin',
        '',
      ].join('\n'),
    )
    .exitOverride();
  registerStart(program, env);
  registerChecksumKey(program, env);
  registerIndex(program, env);
  registerMigrate(program, env);
  registerBundle(program, env);
  registerToken(program, env);
  return program;
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  try {
    await buildProgram(env).parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    const message = isDmError(error) ? error.message : error instanceof Error ? error.message : String(error);
    process.stderr.write(`dm-registry: ${message}\n`);
    if (isDmError(error) && error.hint) process.stderr.write(`hint: ${error.hint}\n`);
    process.exitCode = exitCodeFor(error);
  }
}

await main(process.argv);

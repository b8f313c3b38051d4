/** `dm-registry migrate`: apply the database migrations (docs/server.md "Running it"). */

import type { Command } from 'commander';
import { type CommonOptions, DATA_DIR_HELP, databaseTarget, openDatabase } from './target.js';

export function registerMigrate(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command('migrate')
    .description('apply the database migrations')
    .option('--db <url>', 'database: file:<path> or postgres://user@host/db (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText('after', '\nExample:\n  dm-registry migrate --db file:./data/registry.db\n')
    .action(async (o: CommonOptions) => {
      const target = databaseTarget(o.db, env, o.dataDir);
      const opened = await openDatabase(target, { max: 1 });
      await opened.close();
      process.stdout.write(`migrations applied to ${opened.display}\n`);
    });
}
